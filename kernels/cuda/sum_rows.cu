// SUM_ROWS: dst[0, i1, i2, i3] = the sum of row (i1, i2, i3) of f32 src0, in double and
// rounded once as the CPU backend's. One block a row, its threads striding along the row.
#include "cuda/common.cuh"

namespace engine::cuda {
namespace {

constexpr int kThreads = 128;

__global__ void sum_rows_kernel(TensorArg src, TensorArg dst) {
  const int64_t row = blockIdx.x;
  if (row >= elements(dst)) return;
  int64_t at[4];
  unravel(row, dst.ne, at);  // dst's rows are one element long: at[0] is 0
  const char* x = element(src, 0, at[1], at[2], at[3]);
  auto in = [&](int64_t i) { return *reinterpret_cast<const float*>(x + i * src.nb[0]); };
  double partial = 0.0;
  for (int64_t i = threadIdx.x; i < src.ne[0]; i += blockDim.x) partial += in(i);
  const double sum = block_sum(partial);
  if (threadIdx.x == 0) *reinterpret_cast<float*>(element(dst, 0, at[1], at[2], at[3])) = static_cast<float>(sum);
}

}  // namespace

void launch_sum_rows(const Launch& l, cudaStream_t stream) {
  sum_rows_kernel<<<blocks_for(l.dst.ne[1] * l.dst.ne[2] * l.dst.ne[3], 1), kThreads, 0, stream>>>(l.src[0], l.dst);
  check_launch("sum_rows_kernel");
}

}  // namespace engine::cuda
