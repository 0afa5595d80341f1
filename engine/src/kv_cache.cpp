#include "engine/kv_cache.h"

#include "engine/error.h"

namespace engine {

KVCache::KVCache(const HParams& hp, int64_t n_ctx, DType type, bool allocate)
    : type_(type), n_ctx_(n_ctx), n_layer_(hp.n_layer), n_embd_kv_(hp.n_embd_kv()) {
  if (type != DType::F16 && type != DType::F32)
    throw Error("KV cache type must be f16 or f32, not " + std::string(dtype_name(type)));
  if (n_ctx <= 0) throw Error("context size must be positive, got " + std::to_string(n_ctx));
  layer_bytes_ = row_bytes(type, n_ctx * n_embd_kv_);
  if (allocate) storage_ = HostMemory(bytes());
}

void* KVCache::k_data(int64_t il) {
  return storage_.data() ? storage_.data() + static_cast<size_t>(2 * il) * layer_bytes_ : nullptr;
}

void* KVCache::v_data(int64_t il) {
  return storage_.data() ? storage_.data() + static_cast<size_t>(2 * il + 1) * layer_bytes_ : nullptr;
}

}  // namespace engine
