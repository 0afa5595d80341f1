// RMS_NORM: x / sqrt(mean(x^2) + eps); NORM: (x - mean) / sqrt(var + eps). One block a row,
// the sums in double as the CPU backend's, the mean and its root rounded to float as there.
#include "cuda/common.cuh"

namespace engine::cuda {
namespace {

constexpr int kThreads = 256;

template <bool kRms>
__global__ void norm_kernel(TensorArg src, TensorArg dst, float eps) {
  const int64_t rows = dst.ne[1] * dst.ne[2] * dst.ne[3];
  const int64_t row = blockIdx.x;
  if (row >= rows) return;
  const int64_t i1 = row % dst.ne[1], i2 = row / dst.ne[1] % dst.ne[2], i3 = row / (dst.ne[1] * dst.ne[2]);
  const char* x = element(src, 0, i1, i2, i3);
  char* y = element(dst, 0, i1, i2, i3);
  const int64_t n = dst.ne[0];
  auto in = [&](int64_t i) { return *reinterpret_cast<const float*>(x + i * src.nb[0]); };
  float mean = 0.0f;
  if constexpr (!kRms) {
    double sum = 0.0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += in(i);
    mean = static_cast<float>(block_sum(sum)) / static_cast<float>(n);
  }
  double squares = 0.0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float d = in(i) - mean;
    squares += static_cast<double>(d * d);
  }
  const float variance = static_cast<float>(block_sum(squares) / static_cast<double>(n));
  const float inv = 1.0f / sqrtf(variance + eps);
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) *reinterpret_cast<float*>(y + i * dst.nb[0]) = (in(i) - mean) * inv;
}

}  // namespace

void launch_norm(const Launch& l, cudaStream_t stream) {
  const unsigned rows = blocks_for(l.dst.ne[1] * l.dst.ne[2] * l.dst.ne[3], 1);
  if (l.op == Op::RMS_NORM)
    norm_kernel<true><<<rows, kThreads, 0, stream>>>(l.src[0], l.dst, l.params[0]);
  else
    norm_kernel<false><<<rows, kThreads, 0, stream>>>(l.src[0], l.dst, l.params[0]);
  check_launch("norm_kernel");
}

}  // namespace engine::cuda
