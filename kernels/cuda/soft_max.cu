// SOFT_MAX: softmax(x * scale + mask) along each row, the mask (src1, optional) row being the
// row's index in dim 1. One block a row; the exps' sum in double.
#include "cuda/common.cuh"

namespace engine::cuda {
namespace {

constexpr int kThreads = 128;

__global__ void soft_max_kernel(TensorArg src, TensorArg mask, TensorArg dst, float scale, bool masked) {
  const int64_t row = blockIdx.x;
  if (row >= dst.ne[1] * dst.ne[2] * dst.ne[3]) return;
  const int64_t i1 = row % dst.ne[1], i2 = row / dst.ne[1] % dst.ne[2], i3 = row / (dst.ne[1] * dst.ne[2]);
  const char* x = element(src, 0, i1, i2, i3);
  char* y = element(dst, 0, i1, i2, i3);
  const char* m = masked ? element(mask, 0, i1, 0, 0) : nullptr;
  const int64_t n = dst.ne[0];
  auto out = [&](int64_t i) -> float& { return *reinterpret_cast<float*>(y + i * dst.nb[0]); };
  float top = -INFINITY;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float scaled = *reinterpret_cast<const float*>(x + i * src.nb[0]) * scale;
    const float w = scaled + (masked ? *reinterpret_cast<const float*>(m + i * mask.nb[0]) : 0.0f);
    out(i) = w;
    top = fmaxf(top, w);
  }
  top = block_max(top);
  if (top == -INFINITY) {  // every element masked: zeros
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) out(i) = 0.0f;
    return;
  }
  double sum = 0.0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float e = expf(out(i) - top);
    out(i) = e;
    sum += e;
  }
  const float inv = static_cast<float>(1.0 / block_sum(sum));
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) out(i) *= inv;
}

}  // namespace

void launch_soft_max(const Launch& l, cudaStream_t stream) {
  soft_max_kernel<<<blocks_for(l.dst.ne[1] * l.dst.ne[2] * l.dst.ne[3], 1), kThreads, 0, stream>>>(
      l.src[0], l.src[1], l.dst, l.params[0], l.flags[0] != 0);
  check_launch("soft_max_kernel");
}

}  // namespace engine::cuda
