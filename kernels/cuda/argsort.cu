// ARGSORT: dst[:, r] (i32) = the indices of row r of 2-d f32 src0, its largest element first,
// equal elements by smaller index first and nans last. One thread per element: its rank is the
// number of elements that precede it, and it writes its index at that rank; the block reads the
// row through shared memory a tile at a time. O(n^2) per row, for rows of experts (tens to
// hundreds).
#include "cuda/common.cuh"

namespace engine::cuda {
namespace {

constexpr int kThreads = 256;

// Whether element a (index ia) is ordered before b (index ib): a strict total order, so the
// ranks are a permutation even with ties and nans.
__device__ __forceinline__ bool precedes(float a, int ia, float b, int ib) {
  const bool a_nan = isnan(a), b_nan = isnan(b);
  if (a_nan != b_nan) return b_nan;
  if (!a_nan && a != b) return a > b;
  return ia < ib;
}

__global__ void argsort_kernel(TensorArg src, TensorArg dst) {
  __shared__ float tile[kThreads];
  const int64_t row = blockIdx.x;
  const int n = static_cast<int>(dst.ne[0]);
  const int i = static_cast<int>(blockIdx.y) * kThreads + static_cast<int>(threadIdx.x);
  const char* x = element(src, 0, row, 0, 0);
  auto in = [&](int j) { return *reinterpret_cast<const float*>(x + j * src.nb[0]); };
  const float v = i < n ? in(i) : 0.0f;
  int rank = 0;
  for (int j0 = 0; j0 < n; j0 += kThreads) {  // every thread takes part in the loads, past n too
    const int count = min(kThreads, n - j0);
    __syncthreads();  // the previous tile may still be read
    if (static_cast<int>(threadIdx.x) < count) tile[threadIdx.x] = in(j0 + static_cast<int>(threadIdx.x));
    __syncthreads();
    if (i < n)
      for (int j = 0; j < count; ++j) rank += precedes(tile[j], j0 + j, v, i);
  }
  if (i < n) *reinterpret_cast<int32_t*>(element(dst, rank, row, 0, 0)) = i;
}

}  // namespace

void launch_argsort(const Launch& l, cudaStream_t stream) {
  const dim3 grid(blocks_for(l.dst.ne[1], 1), grid_yz((l.dst.ne[0] + kThreads - 1) / kThreads));
  argsort_kernel<<<grid, kThreads, 0, stream>>>(l.src[0], l.dst);
  check_launch("argsort_kernel");
}

}  // namespace engine::cuda
