#include "common/graph_walk.h"

#include <algorithm>
#include <string>

#include "engine/error.h"

namespace engine {

bool is_dispatched(const Tensor* node) { return node->op != Op::NONE && !op_info(node->op).is_view; }

std::vector<const Tensor*> inputs_of(const Graph& graph) {
  std::vector<const Tensor*> inputs;
  for (const Tensor* node : graph.nodes())
    for (const Tensor* s : {node->src[0], node->src[1], node->src[2], node->view_src})
      if (s && s->has(kInput) && std::find(inputs.begin(), inputs.end(), s) == inputs.end()) inputs.push_back(s);
  return inputs;
}

std::vector<const Tensor*> outputs_of(const Graph& graph) {
  std::vector<const Tensor*> outputs;
  for (const Tensor* node : graph.nodes())
    if (node->has(kOutput)) outputs.push_back(node);
  return outputs;
}

size_t staged_size(const Tensor& t) { return (t.nbytes() + kStagingAlignment - 1) / kStagingAlignment * kStagingAlignment; }

size_t staged_bytes(const std::vector<const Tensor*>& tensors) {
  size_t total = 0;
  for (const Tensor* t : tensors) total += staged_size(*t);
  return total;
}

StorageRoot storage_root(const Tensor& t) {
  StorageRoot root{&t, 0};
  for (; root.tensor->view_src; root.tensor = root.tensor->view_src) root.offset += root.tensor->view_offs;
  return root;
}

Placement placement(const Tensor& t, const std::vector<GGUFTensorInfo>* weights, const std::optional<KVCache>& kv,
                    const std::unordered_map<const Tensor*, size_t>& placed, std::string_view backend) {
  const auto [root, offset] = storage_root(t);
  const std::string who(backend);
  if (root->has(kWeight)) {
    if (!weights || root->storage_index < 0 || static_cast<size_t>(root->storage_index) >= weights->size())
      throw Error(who + " backend: weight '" + root->name + "' is not among the loaded weights");
    return {Placement::Store::kWeights, (*weights)[root->storage_index].offset + offset};
  }
  if (root->has(kKV)) {
    if (!kv || root->storage_index < 0) throw Error(who + " backend: KV tensor '" + root->name + "' has no KV cache");
    return {Placement::Store::kKV, kv->offset(root->storage_index) + offset};
  }
  const auto at = placed.find(root);
  if (at == placed.end()) throw Error(who + " backend: tensor '" + t.name + "' has no storage in the plan");
  return {Placement::Store::kBuffer, at->second + offset};
}

bool attention_chain(const std::vector<Tensor*>& nodes, size_t i) {
  if (i + 2 >= nodes.size()) return false;
  const Tensor* kq = nodes[i];
  const Tensor* soft_max = nodes[i + 1];
  const Tensor* kqv = nodes[i + 2];
  if (kq->op != Op::MUL_MAT || soft_max->op != Op::SOFT_MAX || kqv->op != Op::MUL_MAT) return false;
  if (soft_max->src[0] != kq || kqv->src[1] != soft_max || ((kq->flags | soft_max->flags) & kOutput)) return false;
  // Nodes are in execution order: only later ones read the two.
  for (size_t j = i + 2; j < nodes.size(); ++j)
    for (const Tensor* s : nodes[j]->src)
      if (s == kq || (s == soft_max && j != i + 2)) return false;
  return true;
}

}  // namespace engine
