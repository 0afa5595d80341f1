#pragma once
// The KV cache's layout: per layer one K and one V tensor of n_ctx positions. K rows are
// stored position-major ([n_embd_kv] per position); V is stored transposed ([n_ctx] per
// channel) so attention reads it as a dense matrix. The backend holds the storage
// (Backend::allocate_kv): layer il's K at 2 * il * layer_bytes(), its V right after.
#include <cstdint>

#include "engine/dtype.h"
#include "engine/model.h"

namespace engine {

class KVCache {
 public:
  KVCache(const HParams& hp, int64_t n_ctx, DType type);

  DType type() const { return type_; }
  int64_t n_ctx() const { return n_ctx_; }
  int64_t n_layer() const { return n_layer_; }
  int64_t n_embd_kv() const { return n_embd_kv_; }
  // Bytes of one layer's K (or V) tensor.
  size_t layer_bytes() const { return layer_bytes_; }
  // Bytes of all K and V tensors.
  size_t bytes() const { return layer_bytes_ * 2 * static_cast<size_t>(n_layer_); }
  // Where the K (storage_index 2 * il) or V (2 * il + 1) tensor of layer il starts.
  size_t offset(int32_t storage_index) const { return static_cast<size_t>(storage_index) * layer_bytes_; }

 private:
  DType type_;
  int64_t n_ctx_, n_layer_, n_embd_kv_;
  size_t layer_bytes_;
};

}  // namespace engine
