// Attention of one query of one head: the kq MUL_MAT, its SOFT_MAX and the kqv MUL_MAT in one
// block, the row of scores in shared memory. K (src0, f16 [head_dim, n_kv, kv_heads]), the
// queries (src1, f32 [head_dim, n_tokens, heads]), V (src2, f16 [n_kv, head_dim, kv_heads]),
// kqv (dst, f32 [head_dim, n_tokens, heads]), the mask (src3, f32, a row of n_kv per query).
// The queries and probabilities meet K and V rounded to f16, as the unfused products' do.
#include <cuda_fp16.h>

#include "cuda/common.cuh"

namespace engine::cuda {
namespace {

constexpr int kWarps = 4;

__device__ __forceinline__ float f16_at(const char* p) { return __half2float(*reinterpret_cast<const __half*>(p)); }
__device__ __forceinline__ float rounded(float v) { return __half2float(__float2half_rn(v)); }

__global__ void attention_kernel(TensorArg k, TensorArg q, TensorArg v, TensorArg dst, TensorArg mask, float scale,
                                 bool masked) {
  extern __shared__ float scores[];
  const int64_t head_dim = k.ne[0], n_kv = k.ne[1], n_tokens = q.ne[1], heads = q.ne[2];
  const int64_t t = blockIdx.x % n_tokens, h = blockIdx.x / n_tokens;
  const int64_t kh = h / (heads / k.ne[2]), vh = h / (heads / v.ne[2]);
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const char* query = element(q, 0, t, h, 0);
  const char* mask_row = masked ? element(mask, 0, t, 0, 0) : nullptr;

  float top = -INFINITY;
  for (int64_t j = warp; j < n_kv; j += kWarps) {
    const char* key = element(k, 0, j, kh, 0);
    float dot = 0.0f;
    for (int64_t d = lane; d < head_dim; d += kWarp)
      dot += f16_at(key + d * k.nb[0]) * rounded(*reinterpret_cast<const float*>(query + d * q.nb[0]));
    dot = warp_sum(dot);
    const float w = dot * scale + (masked ? *reinterpret_cast<const float*>(mask_row + j * mask.nb[0]) : 0.0f);
    if (lane == 0) scores[j] = w;
    top = fmaxf(top, w);
  }
  top = block_max(top);  // its barriers also publish every score
  double sum = 0.0;
  if (top != -INFINITY)
    for (int64_t j = threadIdx.x; j < n_kv; j += blockDim.x) {
      const float e = expf(scores[j] - top);
      scores[j] = e;
      sum += e;
    }
  sum = block_sum(sum);
  // a row with every score masked is all zeros, as the softmax writes it
  const float inv = top != -INFINITY ? static_cast<float>(1.0 / sum) : 0.0f;
  for (int64_t j = threadIdx.x; j < n_kv; j += blockDim.x) scores[j] = rounded(top != -INFINITY ? scores[j] * inv : 0.0f);
  __syncthreads();

  for (int64_t d = warp; d < v.ne[1]; d += kWarps) {
    const char* values = element(v, 0, d, vh, 0);
    float o = 0.0f;
    for (int64_t j = lane; j < n_kv; j += kWarp) o += f16_at(values + j * v.nb[0]) * scores[j];
    o = warp_sum(o);
    if (lane == 0) *reinterpret_cast<float*>(element(dst, d, t, h, 0)) = o;
  }
}

}  // namespace

int64_t attention_max_kv(int device) {
  int bytes = 0;
  check(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "cudaDeviceGetAttribute");
  return (bytes - 2 * kWarp * static_cast<int>(sizeof(double))) / static_cast<int64_t>(sizeof(float));  // less block_sum's
}

void launch_attention(const Launch& l, cudaStream_t stream) {
  const TensorArg &k = l.src[0], &q = l.src[1];
  const size_t shared = static_cast<size_t>(k.ne[1]) * sizeof(float);
  check(cudaFuncSetAttribute(attention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)),
        "cudaFuncSetAttribute");
  attention_kernel<<<blocks_for(q.ne[1] * q.ne[2], 1), kWarps * kWarp, shared, stream>>>(k, q, l.src[2], l.dst, l.src[3],
                                                                                          l.params[0], l.flags[0] != 0);
  check_launch("attention_kernel");
}

}  // namespace engine::cuda
