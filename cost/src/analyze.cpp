#include <algorithm>
#include <string>
#include <unordered_map>

#include "cost/cost.h"
#include "engine/error.h"
#include "engine/plan.h"

namespace cost {
namespace {

using engine::Tensor;

// Seed model: every node a later node reads counts while live, views included, except
// views of constant storage (the KV cache); nodes nobody reads count nowhere.
std::vector<double> seed_tempsizes(const engine::Graph& graph) {
  const auto& nodes = graph.nodes();
  std::unordered_map<const Tensor*, size_t> last_use;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const Tensor* s : nodes[i]->src)
      if (s && s->op != engine::Op::NONE) last_use[s] = i;
  std::vector<double> delta(nodes.size() + 1, 0.0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto it = last_use.find(nodes[i]);
    if (it == last_use.end() || is_constant(*nodes[i])) continue;
    delta[i] += dense_bytes(*nodes[i]);
    delta[it->second + 1] -= dense_bytes(*nodes[i]);
  }
  std::vector<double> out(nodes.size());
  double live = 0;
  for (size_t i = 0; i < nodes.size(); ++i) out[i] = live += delta[i];
  return out;
}

// Default model: the bytes the plan keeps live in the compute buffer at each node.
std::vector<double> plan_tempsizes(const engine::Graph& graph) {
  std::vector<double> delta(graph.nodes().size() + 1, 0.0);
  for (const engine::Lifetime& l : engine::Plan::lifetimes(graph)) {
    delta[l.first] += static_cast<double>(l.tensor->nbytes());
    delta[l.last + 1] -= static_cast<double>(l.tensor->nbytes());
    if (l.in_place_of) {  // one storage for both at the node that takes it over
      delta[l.first] -= static_cast<double>(l.in_place_of->nbytes());
      delta[l.first + 1] += static_cast<double>(l.in_place_of->nbytes());
    }
  }
  std::vector<double> out(graph.nodes().size());
  double live = 0;
  for (size_t i = 0; i < out.size(); ++i) out[i] = live += delta[i];
  return out;
}

template <typename Key>
Counts& bucket(std::vector<std::pair<Key, Counts>>& buckets, const Key& key) {
  for (auto& [k, c] : buckets)
    if (k == key) return c;
  return buckets.emplace_back(key, Counts{}).second;
}

}  // namespace

std::string_view metric_name(Metric m) {
  switch (m) {
    case Metric::kFmul: return "fmul";
    case Metric::kFadd: return "fadd";
    case Metric::kFdiv: return "fdiv";
    case Metric::kFexp: return "fexp";
    case Metric::kFsin: return "fsin";
    case Metric::kSqrt: return "sqrt";
    case Metric::kFpow: return "fpow";
    case Metric::kRead: return "read";
    case Metric::kWrite: return "write";
  }
  return "?";
}

void Counts::add(Metric m, double v) {
  if (v == 0) return;
  for (auto& [metric, value] : items_)
    if (metric == m) {
      value += v;
      return;
    }
  items_.emplace_back(m, v);
}

double Counts::get(Metric m) const {
  for (const auto& [metric, value] : items_)
    if (metric == m) return value;
  return 0;
}

double Counts::arithmetic() const {
  double sum = 0;
  for (const auto& [metric, value] : items_)
    if (metric != Metric::kRead && metric != Metric::kWrite) sum += value;
  return sum;
}

double Counts::bytes() const { return get(Metric::kRead) + get(Metric::kWrite); }

Counts& Counts::operator+=(const Counts& other) {
  for (const auto& [m, v] : other.items_) add(m, v);
  return *this;
}

CostModel cost_model_from_name(std::string_view name) {
  if (name == "default") return CostModel::kDefault;
  if (name == "seed") return CostModel::kSeed;
  throw engine::Error("unknown cost model '" + std::string(name) + "' (default, seed)");
}

double dense_bytes(const Tensor& t) {
  return static_cast<double>(engine::row_bytes(t.type, t.ne[0])) * static_cast<double>(t.ne[1] * t.ne[2] * t.ne[3]);
}

bool is_constant(const Tensor& t) {
  return t.op == engine::Op::NONE || (t.view_src && t.view_src->op == engine::Op::NONE);
}

GraphCost analyze(const engine::Graph& graph, CostModel model) {
  GraphCost out;
  out.model = model;
  const std::vector<double> temps = model == CostModel::kSeed ? seed_tempsizes(graph) : plan_tempsizes(graph);
  std::unordered_set<const Tensor*> already_read;
  const auto& nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Tensor& node = *nodes[i];
    NodeCost nc{&node, op_cost(node, model, already_read), temps[i]};
    out.total += nc.counts;
    bucket(out.by_layer, node.layer) += nc.counts;
    bucket(out.by_op, std::string(engine::op_name(node.op))) += nc.counts;
    out.max_tempsize = std::max(out.max_tempsize, nc.tempsize);
    out.nodes.push_back(std::move(nc));
  }
  return out;
}

}  // namespace cost
