#pragma once
// Tensors are plain structs: shape `ne` (elements, fastest dimension first, as GGUF/ggml)
// and byte strides `nb`. An op node names its sources; a view names the tensor it aliases.
#include <cstdint>
#include <cstring>
#include <string>

#include "engine/dtype.h"
#include "engine/op.h"

namespace engine {

enum TensorFlag : uint32_t {
  kWeight = 1u << 0,  // model parameter: the backend's copy of file tensor `storage_index`
  kInput = 1u << 1,   // set by the session (Backend::set_input) before each compute
  kOutput = 1u << 2,  // read back after compute (Backend::get_output); live to the graph's end
  kKV = 1u << 3,      // KV cache storage, held by the backend: `storage_index` 2 * layer (K) or 2 * layer + 1 (V)
};

constexpr int kMaxDims = 4;
constexpr int kMaxSrc = 3;
constexpr int kMaxParams = 8;

struct Tensor {
  std::string name;
  DType type = DType::F32;
  int64_t ne[kMaxDims] = {1, 1, 1, 1};
  size_t nb[kMaxDims] = {0, 0, 0, 0};
  Op op = Op::NONE;
  Tensor* src[kMaxSrc] = {nullptr, nullptr, nullptr};
  int32_t params[kMaxParams] = {};  // op parameters; floats stored bit-for-bit
  Tensor* view_src = nullptr;       // the tensor whose storage this one aliases
  size_t view_offs = 0;             // byte offset into view_src's storage
  size_t view_offs_per_past = 0;    // what view_offs gains per cached token (the KV store views; rebase_step)
  uint32_t flags = 0;
  int layer = -1;                   // transformer block index, -1 outside blocks
  std::string module;               // model module it belongs to: "model.layers.3.self_attn.q_proj"
  int32_t storage_index = -1;       // kWeight and kKV leaves: which of the backend's tensors they are
  void* data = nullptr;             // CPU address, bound by the CPU backend (Backend::allocate)

  int64_t nelements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  int64_t nrows() const { return ne[1] * ne[2] * ne[3]; }
  // Bytes spanned by the tensor's elements given its strides.
  size_t nbytes() const;
  // True when elements are laid out densely in the natural order.
  bool is_contiguous() const;
  // Number of dimensions, ignoring trailing dimensions of size 1 (at least 1).
  int n_dims() const;
  bool has(TensorFlag f) const { return (flags & f) != 0; }

  float param_f32(int i) const {
    float v;
    std::memcpy(&v, &params[i], sizeof v);
    return v;
  }
  void set_param_f32(int i, float v) { std::memcpy(&params[i], &v, sizeof v); }
  // "[12288, 1]" style shape text (trailing 1 dimensions dropped, at least two shown).
  std::string shape_str() const;
};

// Fills nb[] for a dense layout of `type` with shape ne[].
void set_contiguous_strides(Tensor& t);

}  // namespace engine
