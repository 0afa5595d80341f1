#pragma once
// Liveness-based placement of a graph's intermediate and input tensors in one compute
// buffer. A tensor is live from the node that defines it to its last reader; views
// (and CPY results) alias their source and take no space. A node whose op is in_place
// (op.h) takes over its first source's storage where it is that source's last reader and
// the two have the same size. The buffer size the plan reports is exactly what a backend
// allocates.
#include <cstddef>
#include <unordered_map>
#include <vector>

#include "engine/graph.h"

namespace engine {

// When a placed tensor holds live data: from node `first` to node `last` (indices into
// graph.nodes(); inputs start at 0, a product with siblings at its first sibling; outputs end at
// the last node).
struct Lifetime {
  const Tensor* tensor;
  size_t first;
  size_t last;
  const Tensor* in_place_of = nullptr;  // the source whose storage `tensor` takes over at `first`
};

struct Plan {
  static constexpr size_t kAlignment = 64;

  size_t buffer_size = 0;                             // peak bytes of the compute buffer
  std::unordered_map<const Tensor*, size_t> offsets;  // placed tensors -> byte offset

  // Places every node and kInput leaf that owns storage (not a view, not a weight or
  // KV tensor). kOutput nodes stay live to the end of the graph. A product of a weight and one
  // activation column is live from its first sibling (first_siblings).
  static Plan make(const Graph& graph);
  // Decode's products of one activation column by weights (a layer's Q, K and V; its gate and
  // up; any leaf no node writes) come in chains, each within kSiblingWindow nodes of the one
  // before: by node, the index of the first product of its chain, the node itself where it has
  // none. A backend may compute a chain's products together at the first (the CPU backend does,
  // kernels/cpu/schedule.h).
  static constexpr size_t kSiblingWindow = 8;
  static std::vector<size_t> first_siblings(const std::vector<Tensor*>& nodes);
  // The lifetimes Plan::make places, in placement order.
  static std::vector<Lifetime> lifetimes(const Graph& graph);
  // Points placed tensors at base + offset and views at their source's data + offset.
  void bind(const Graph& graph, void* base) const;
  // Points the graph's views at their source's data + offset (bind's second half: what
  // rebase_step moves).
  static void bind_views(const Graph& graph);
  // True when a and b lie on intersecting bytes of the compute buffer (a tensor the plan does
  // not place, such as a weight or a KV view, lies outside it): a kernel writing one while
  // reading the other must not assume they are apart.
  bool overlap(const Tensor* a, const Tensor* b) const;
};

}  // namespace engine
