#pragma once
// The KV cache: per layer one K and one V tensor of n_ctx positions. K rows are stored
// position-major ([n_embd_kv] per position); V is stored transposed ([n_ctx] per
// channel) so attention reads it as a dense matrix.
#include <cstdint>

#include "engine/dtype.h"
#include "engine/host_memory.h"
#include "engine/model.h"

namespace engine {

class KVCache {
 public:
  // With allocate = false no memory is reserved (cost analysis needs only the sizes).
  KVCache(const HParams& hp, int64_t n_ctx, DType type, bool allocate);

  DType type() const { return type_; }
  int64_t n_ctx() const { return n_ctx_; }
  int64_t n_layer() const { return n_layer_; }
  int64_t n_embd_kv() const { return n_embd_kv_; }
  // Bytes of one layer's K (or V) tensor.
  size_t layer_bytes() const { return layer_bytes_; }
  // Bytes of all K and V tensors.
  size_t bytes() const { return layer_bytes_ * 2 * static_cast<size_t>(n_layer_); }
  // Storage of layer il's K / V, or nullptr when not allocated.
  void* k_data(int64_t il);
  void* v_data(int64_t il);

 private:
  DType type_;
  int64_t n_ctx_, n_layer_, n_embd_kv_;
  size_t layer_bytes_;
  HostMemory storage_;
};

}  // namespace engine
