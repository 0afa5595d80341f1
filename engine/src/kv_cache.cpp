#include "engine/kv_cache.h"

#include "engine/error.h"

namespace engine {

KVCache::KVCache(const HParams& hp, int64_t n_ctx, DType type)
    : type_(type), n_ctx_(n_ctx), n_layer_(hp.n_layer), n_embd_kv_(hp.n_embd_kv()) {
  if (type != DType::F16 && type != DType::F32)
    throw Error("KV cache type must be f16 or f32, not " + std::string(dtype_name(type)));
  if (n_ctx <= 0) throw Error("context size must be positive, got " + std::to_string(n_ctx));
  layer_bytes_ = row_bytes(type, n_ctx * n_embd_kv_);
}

}  // namespace engine
