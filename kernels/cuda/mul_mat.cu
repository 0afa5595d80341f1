// MUL_MAT: dst[r, c] = dot(src0 row r, src1 row c) over k = ne0, src0's batches broadcast over
// src1's (dims 2 and 3), the weights dequantized on the fly a group at a time (dequant.cuh).
// Few columns (decode): a warp a row, its lanes taking whole groups, up to kVecCols columns
// sharing each. Many (prefill): 64 x 64 output tiles, each weight dequantized into shared
// memory once per 64 columns.
#include "cuda/common.cuh"

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

// Element i0 .. i0 + n - 1 of column c, four at a time where the column is dense and aligned.
template <int kN>
__device__ __forceinline__ float dot_column(const float (&w)[kN], const TensorArg& x, int64_t i0, int64_t c, const Batch& b) {
  const char* a = element(x, i0, c, b.i12, b.i13);
  float sum = 0.0f;
  if (x.nb[0] == sizeof(float) && reinterpret_cast<uintptr_t>(a) % 16 == 0) {
#pragma unroll
    for (int e = 0; e < kN; e += 4) {
      const float4 v = *reinterpret_cast<const float4*>(a + e * sizeof(float));
      sum += w[e] * v.x + w[e + 1] * v.y + w[e + 2] * v.z + w[e + 3] * v.w;
    }
  } else {
#pragma unroll
    for (int e = 0; e < kN; ++e) sum += w[e] * *reinterpret_cast<const float*>(a + e * x.nb[0]);
  }
  return sum;
}

// A warp a row: each lane dequantizes whole groups of the row (Weight<T>::group), lane l taking
// groups l, l + 32, ..., each group once for all the block's columns.
template <DType T, int kCols>
__global__ void mul_mat_vec_kernel(TensorArg w, TensorArg x, TensorArg dst) {
  using W = Weight<T>;
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kVecWarps + warp;
  if (r >= dst.ne[0]) return;
  const int64_t c0 = static_cast<int64_t>(blockIdx.y) * kCols;
  const int n = static_cast<int>(min(static_cast<int64_t>(kCols), dst.ne[1] - c0));
  const Batch b = batch_of(w, dst, blockIdx.z);
  const auto* row = reinterpret_cast<const uint8_t*>(element(w, 0, r, b.i02, b.i03));
  const int64_t k = w.ne[0], groups = k / W::kGroup;
  float sums[kCols] = {};
  for (int64_t g = lane; g < groups; g += kWarp) {
    float wv[W::kGroup];
    W::group(row, g, wv);
#pragma unroll
    for (int c = 0; c < kCols; ++c)
      if (c < n) sums[c] += dot_column(wv, x, g * W::kGroup, c0 + c, b);
  }
  for (int64_t i = groups * W::kGroup + lane; i < k; i += kWarp) {  // a float row's tail
    const float wv = W::at(row, i);
#pragma unroll
    for (int c = 0; c < kCols; ++c)
      if (c < n) sums[c] += wv * act_at(x, i, c0 + c, b);
  }
#pragma unroll
  for (int c = 0; c < kCols; ++c) {
    const float s = warp_sum(sums[c]);
    if (lane == 0 && c < n) *reinterpret_cast<float*>(element(dst, r, c0 + c, b.i12, b.i13)) = s;
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
      tile_x[kk][t] = k0 + kk < k ? act_at(x, k0 + kk, min(c0 + t, cols - 1), b) : 0.0f;
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
