#include "engine/plan.h"

#include <algorithm>
#include <optional>
#include <vector>

namespace engine {
namespace {

size_t align_up(size_t n) { return (n + Plan::kAlignment - 1) / Plan::kAlignment * Plan::kAlignment; }

// The tensor that owns the storage `t` reads or writes.
const Tensor* storage_of(const Tensor* t) { return t->view_src ? t->view_src : t; }

bool needs_placement(const Tensor* t) {
  if (t->view_src || op_info(t->op).is_view) return false;
  if (t->op == Op::NONE) return t->has(kInput);
  return true;
}

// Best-fit free-list over one growing buffer; adjacent free blocks merge.
class Arena {
 public:
  size_t alloc(size_t size) {
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->size >= size && (best == free_.end() || it->size < best->size)) best = it;
    if (best == free_.end()) {
      // Extend the buffer, reusing a free block at its end.
      if (!free_.empty() && free_.back().offset + free_.back().size == end_) {
        size_t offset = free_.back().offset;
        free_.pop_back();
        end_ = offset + size;
        peak_ = std::max(peak_, end_);
        return offset;
      }
      size_t offset = end_;
      end_ += size;
      peak_ = std::max(peak_, end_);
      return offset;
    }
    size_t offset = best->offset;
    best->offset += size;
    best->size -= size;
    if (best->size == 0) free_.erase(best);
    return offset;
  }

  void release(size_t offset, size_t size) {
    auto it = std::lower_bound(free_.begin(), free_.end(), offset,
                               [](const Block& b, size_t off) { return b.offset < off; });
    it = free_.insert(it, {offset, size});
    if (it + 1 != free_.end() && it->offset + it->size == (it + 1)->offset) {
      it->size += (it + 1)->size;
      free_.erase(it + 1);
    }
    if (it != free_.begin() && (it - 1)->offset + (it - 1)->size == it->offset) {
      (it - 1)->size += it->size;
      free_.erase(it);
    }
  }

  size_t peak() const { return peak_; }

 private:
  struct Block {
    size_t offset, size;
  };
  std::vector<Block> free_;  // sorted by offset
  size_t end_ = 0;
  size_t peak_ = 0;
};

// A product of one activation column by a leaf (a weight: no node writes it).
bool leaf_column_product(const Tensor* t) {
  const Tensor* b = t->src[1];
  return t->op == Op::MUL_MAT && t->src[0]->op == Op::NONE && b->ne[1] == 1 && b->ne[2] * b->ne[3] == 1;
}

}  // namespace

std::vector<size_t> Plan::first_siblings(const std::vector<Tensor*>& nodes) {
  std::vector<size_t> first(nodes.size());
  for (size_t j = 0; j < nodes.size(); ++j) {
    first[j] = j;
    if (!leaf_column_product(nodes[j])) continue;
    for (size_t i = j >= kSiblingWindow ? j - kSiblingWindow : 0; i < j; ++i)
      if (leaf_column_product(nodes[i]) && nodes[i]->src[1] == nodes[j]->src[1]) {
        first[j] = first[i];
        break;
      }
  }
  return first;
}

std::vector<Lifetime> Plan::lifetimes(const Graph& graph) {
  const auto& nodes = graph.nodes();
  if (nodes.empty()) return {};
  std::unordered_map<const Tensor*, size_t> last_use;
  last_use.reserve(graph.tensors().size());
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const Tensor* s : nodes[i]->src)
      if (s) last_use[storage_of(s)] = i;
  const size_t end = nodes.size() - 1;
  const std::vector<size_t> first = first_siblings(nodes);
  std::vector<Lifetime> out;
  // Inputs are written before compute starts, so they are live from the first node.
  for (const Tensor& t : graph.tensors())
    if (t.op == Op::NONE && needs_placement(&t) && last_use.count(&t)) out.push_back({&t, 0, last_use[&t]});
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Tensor* n = nodes[i];
    if (!needs_placement(n)) continue;
    const auto it = last_use.find(n);
    out.push_back({n, first[i], n->has(kOutput) ? end : it == last_use.end() ? i : it->second});
    const Tensor* s = n->src[0];
    const bool read_otherwise =
        std::any_of(std::begin(n->src) + 1, std::end(n->src), [&](const Tensor* o) { return o && storage_of(o) == s; });
    if (op_info(n->op).in_place && s && needs_placement(s) && !s->has(kOutput) && last_use[s] == i && !read_otherwise &&
        align_up(s->nbytes()) == align_up(n->nbytes()))
      out.back().in_place_of = s;
  }
  return out;
}

Plan Plan::make(const Graph& graph) {
  const std::vector<Lifetime> lives = lifetimes(graph);
  Plan plan;
  plan.offsets.reserve(lives.size());
  Arena arena;
  // Walk the nodes: place what starts at a node, then release what ends there, in
  // offset order so the plan does not depend on hash-map iteration.
  std::vector<std::vector<const Lifetime*>> starts(graph.nodes().size()), ends(graph.nodes().size());
  for (const Lifetime& l : lives) {
    starts[l.first].push_back(&l);
    ends[l.last].push_back(&l);
  }
  for (size_t i = 0; i < starts.size(); ++i) {
    std::vector<const Tensor*> handed_over;
    for (const Lifetime* l : starts[i]) {
      if (l->in_place_of) {
        plan.offsets[l->tensor] = plan.offsets.at(l->in_place_of);
        handed_over.push_back(l->in_place_of);
        continue;
      }
      plan.offsets[l->tensor] = arena.alloc(align_up(l->tensor->nbytes()));
    }
    std::sort(ends[i].begin(), ends[i].end(),
              [&](const Lifetime* a, const Lifetime* b) { return plan.offsets.at(a->tensor) < plan.offsets.at(b->tensor); });
    for (const Lifetime* l : ends[i])
      if (std::find(handed_over.begin(), handed_over.end(), l->tensor) == handed_over.end())
        arena.release(plan.offsets.at(l->tensor), align_up(l->tensor->nbytes()));
  }
  plan.buffer_size = arena.peak();
  return plan;
}

void Plan::bind(const Graph& graph, void* base) const {
  auto* bytes = static_cast<uint8_t*>(base);
  for (const auto& [t, offset] : offsets) const_cast<Tensor*>(t)->data = bytes + offset;
  bind_views(graph);
}

void Plan::bind_views(const Graph& graph) {
  for (const Tensor* n : graph.nodes())
    if (n->view_src) const_cast<Tensor*>(n)->data = static_cast<uint8_t*>(n->view_src->data) + n->view_offs;
}

bool Plan::overlap(const Tensor* a, const Tensor* b) const {
  const auto start = [&](const Tensor* t) -> std::optional<size_t> {
    const auto it = offsets.find(t->view_src ? t->view_src : t);
    if (it == offsets.end()) return std::nullopt;
    return it->second + t->view_offs;
  };
  const std::optional<size_t> a0 = start(a), b0 = start(b);
  return a0 && b0 && *a0 < *b0 + b->nbytes() && *b0 < *a0 + a->nbytes();
}

}  // namespace engine
