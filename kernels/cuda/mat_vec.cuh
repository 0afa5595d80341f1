#pragma once
// The matrix-vector core MUL_MAT and MUL_MAT_ID share: a warp's dot products of one weight row
// with up to kCols f32 activation columns, the row dequantized a group at a time
// (Weight<T>::group), each group once for all the columns.
#include "cuda/common.cuh"

namespace engine::cuda {

// Elements 0 .. kN - 1 of a column from `a` on, `stride` bytes apart, dotted with w (weights of
// dtype T); four at a time where the column is dense and aligned.
template <DType T, int kN>
__device__ __forceinline__ float dot_group(const float (&w)[kN], const char* a, int64_t stride) {
  float sum = 0.0f;
  if (stride == sizeof(float) && reinterpret_cast<uintptr_t>(a) % 16 == 0) {
#pragma unroll
    for (int e = 0; e < kN; e += 4) {
      const float4 v = *reinterpret_cast<const float4*>(a + e * sizeof(float));
      sum += w[e] * activation<T>(v.x) + w[e + 1] * activation<T>(v.y) + w[e + 2] * activation<T>(v.z) +
             w[e + 3] * activation<T>(v.w);
    }
  } else {
#pragma unroll
    for (int e = 0; e < kN; ++e) sum += w[e] * activation<T>(*reinterpret_cast<const float*>(a + e * stride));
  }
  return sum;
}

// This lane's share of dot(row, column c) in sums[c] for the first n of the k-element columns
// (element i of column c at column(c) + i * stride); the warp's sum of them is the dot. Lane l
// takes groups l, l + 32, ..., then a float row's tail past the last whole group.
template <DType T, int kCols, class Column>
__device__ __forceinline__ void warp_row_dots(const uint8_t* row, int64_t k, Column column, int64_t stride, int n,
                                              float (&sums)[kCols]) {
  using W = Weight<T>;
  const int lane = threadIdx.x % kWarp;
  const int64_t groups = k / W::kGroup;
  for (int64_t g = lane; g < groups; g += kWarp) {
    float wv[W::kGroup];
    W::group(row, g, wv);
#pragma unroll
    for (int c = 0; c < kCols; ++c)
      if (c < n) sums[c] += dot_group<T>(wv, column(c) + g * W::kGroup * stride, stride);
  }
  for (int64_t i = groups * W::kGroup + lane; i < k; i += kWarp) {
    const float wv = W::at(row, i);
#pragma unroll
    for (int c = 0; c < kCols; ++c)
      if (c < n) sums[c] += wv * activation<T>(*reinterpret_cast<const float*>(column(c) + i * stride));
  }
}

}  // namespace engine::cuda
