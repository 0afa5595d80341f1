// MUL_MAT: dst[r, c] = dot(src0 row r, src1 row c) over k = ne0, src0's batches broadcast over
// src1's (dims 2 and 3), the weights dequantized on the fly a group at a time (dequant.cuh).
// Few columns (decode): a warp a row, its lanes taking whole groups, up to kVecCols columns
// sharing each. Many (prefill): 64 x 64 output tiles, each weight dequantized into shared
// memory once per 64 columns.
#include "cuda/common.cuh"
#include "cuda/mat_vec.cuh"

namespace engine::cuda {
namespace {

constexpr int64_t kTiledMinColumns = 16;  // from here products run tiled
constexpr int kVecCols = 8;
constexpr int kVecWarps = 4;  // rows per block of the matrix-vector kernel
constexpr int kTile = 64, kTileK = 32, kTileThreads = 256;

struct Batch {
  int64_t i02, i03, i12, i13;
};

__device__ __forceinline__ Batch batch_of(const TensorArg& w, const TensorArg& dst, int64_t z) {
  Batch b;
  b.i12 = z % dst.ne[2];
  b.i13 = z / dst.ne[2];
  b.i02 = b.i12 / (dst.ne[2] / w.ne[2]);
  b.i03 = b.i13 / (dst.ne[3] / w.ne[3]);
  return b;
}

__device__ __forceinline__ float act_at(const TensorArg& x, int64_t i, int64_t c, const Batch& b) {
  return *reinterpret_cast<const float*>(element(x, i, c, b.i12, b.i13));
}

// A warp a row (mat_vec.cuh), up to kCols columns sharing each dequantized group.
template <DType T, int kCols>
__global__ void mul_mat_vec_kernel(TensorArg w, TensorArg x, TensorArg dst) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kVecWarps + threadIdx.x / kWarp;
  if (r >= dst.ne[0]) return;
  const int64_t c0 = static_cast<int64_t>(blockIdx.y) * kCols;
  const int n = static_cast<int>(min(static_cast<int64_t>(kCols), dst.ne[1] - c0));
  const Batch b = batch_of(w, dst, blockIdx.z);
  const auto* row = reinterpret_cast<const uint8_t*>(element(w, 0, r, b.i02, b.i03));
  const auto column = [&](int c) { return element(x, 0, c0 + c, b.i12, b.i13); };
  float sums[kCols] = {};
  warp_row_dots<T, kCols>(row, w.ne[0], column, x.nb[0], n, sums);
#pragma unroll
  for (int c = 0; c < kCols; ++c) {
    const float s = warp_sum(sums[c]);
    if (threadIdx.x % kWarp == 0 && c < n) *reinterpret_cast<float*>(element(dst, r, c0 + c, b.i12, b.i13)) = s;
  }
}

template <DType T>
__global__ void mul_mat_tiled_kernel(TensorArg w, TensorArg x, TensorArg dst) {
  using W = Weight<T>;
  static_assert(kTileK % W::kGroup == 0);
  // k-major, padded by one so that a warp's stores along k hit different banks
  __shared__ float tile_w[kTileK][kTile + 1];
  __shared__ float tile_x[kTileK][kTile + 1];
  const int64_t r0 = static_cast<int64_t>(blockIdx.x) * kTile, c0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const Batch b = batch_of(w, dst, blockIdx.z);
  const int64_t k = w.ne[0], rows = dst.ne[0], cols = dst.ne[1];
  const int tid = threadIdx.x, rows_at = (tid / 16) * 4, cols_at = (tid % 16) * 4;
  float sums[4][4] = {};
  for (int64_t k0 = 0; k0 < k; k0 += kTileK) {
    // The weights a group at a time; rows and columns past the end read the last one, so every
    // load stays in the tensor.
    constexpr int kGroups = kTileK / W::kGroup;
    for (int e = tid; e < kTile * kGroups; e += kTileThreads) {
      const int t = e / kGroups, first = (e % kGroups) * W::kGroup;
      const auto* row = reinterpret_cast<const uint8_t*>(element(w, 0, min(r0 + t, rows - 1), b.i02, b.i03));
      float wv[W::kGroup];
      if (k0 + first + W::kGroup <= k) {
        W::group(row, (k0 + first) / W::kGroup, wv);
      } else {
#pragma unroll
        for (int j = 0; j < W::kGroup; ++j) wv[j] = k0 + first + j < k ? W::at(row, k0 + first + j) : 0.0f;
      }
#pragma unroll
      for (int j = 0; j < W::kGroup; ++j) tile_w[first + j][t] = wv[j];
    }
    for (int e = tid; e < kTile * kTileK; e += kTileThreads) {
      const int t = e / kTileK, kk = e % kTileK;
      tile_x[kk][t] = k0 + kk < k ? activation<T>(act_at(x, k0 + kk, min(c0 + t, cols - 1), b)) : 0.0f;
    }
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < kTileK; ++kk) {
      float wv[4], xv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        wv[i] = tile_w[kk][rows_at + i];
        xv[i] = tile_x[kk][cols_at + i];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) sums[i][j] += wv[i] * xv[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int64_t r = r0 + rows_at + i, c = c0 + cols_at + j;
      if (r < rows && c < cols) *reinterpret_cast<float*>(element(dst, r, c, b.i12, b.i13)) = sums[i][j];
    }
}

}  // namespace

void launch_mul_mat(const Launch& l, cudaStream_t stream) {
  const TensorArg &w = l.src[0], &x = l.src[1], &dst = l.dst;
  const unsigned batches = grid_yz(dst.ne[2] * dst.ne[3]);
  with_weight_type(l.src0_type, [&]<DType T>() {
    if (dst.ne[1] >= kTiledMinColumns) {
      const dim3 grid(blocks_for(dst.ne[0], kTile), grid_yz((dst.ne[1] + kTile - 1) / kTile), batches);
      mul_mat_tiled_kernel<T><<<grid, kTileThreads, 0, stream>>>(w, x, dst);
    } else if (dst.ne[1] == 1) {
      const dim3 grid(blocks_for(dst.ne[0], kVecWarps), 1, batches);
      mul_mat_vec_kernel<T, 1><<<grid, kVecWarps * kWarp, 0, stream>>>(w, x, dst);
    } else {
      const dim3 grid(blocks_for(dst.ne[0], kVecWarps), grid_yz((dst.ne[1] + kVecCols - 1) / kVecCols), batches);
      mul_mat_vec_kernel<T, kVecCols><<<grid, kVecWarps * kWarp, 0, stream>>>(w, x, dst);
    }
  });
  check_launch("mul_mat");
}

}  // namespace engine::cuda
