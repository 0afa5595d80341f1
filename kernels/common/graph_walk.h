#pragma once
// What every backend reads off a step graph the same way: which nodes run, the inputs and
// outputs it stages, the storage a tensor lives in, and attention's three fusable nodes.
#include <cstddef>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/gguf.h"
#include "engine/graph.h"
#include "engine/kv_cache.h"

namespace engine {

// A node that computes (not a leaf, not a view of another tensor's storage).
bool is_dispatched(const Tensor* node);
// The graph's input leaves the nodes read, each once, in the order the nodes first read them.
std::vector<const Tensor*> inputs_of(const Graph& graph);
// The graph's output nodes, in node order.
std::vector<const Tensor*> outputs_of(const Graph& graph);
// A device backend stages each input and output at a multiple of this in host memory.
constexpr size_t kStagingAlignment = 16;
// The staging bytes of one tensor (its size rounded up to that multiple), and of `tensors`.
size_t staged_size(const Tensor& t);
size_t staged_bytes(const std::vector<const Tensor*>& tensors);

// The tensor owning a view's storage (the tensor itself when it is no view), and the view's
// byte offset inside it.
struct StorageRoot {
  const Tensor* tensor;
  size_t offset;
};
StorageRoot storage_root(const Tensor& t);

// Where a device backend keeps a tensor: in the weights (laid out as the file's data section),
// the KV cache, or the compute buffer, at a byte offset.
struct Placement {
  enum class Store { kWeights, kKV, kBuffer } store;
  size_t offset;
};
// The placement of `t` from the loaded weights' infos, the KV cache's layout and the plan's
// offsets (`placed`). Throws Error, naming the tensor and `backend`, where it has none.
Placement placement(const Tensor& t, const std::vector<GGUFTensorInfo>* weights, const std::optional<KVCache>& kv,
                    const std::unordered_map<const Tensor*, size_t>& placed, std::string_view backend);

// Whether nodes i, i + 1, i + 2 are an attention: the kq MUL_MAT, its SOFT_MAX and the kqv
// MUL_MAT of the probabilities, with the scores and probabilities read by nothing else and no
// graph output, so a backend may compute the three in one pass without writing them.
bool attention_chain(const std::vector<Tensor*>& nodes, size_t i);

}  // namespace engine
