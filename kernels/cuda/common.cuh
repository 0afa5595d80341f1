#pragma once
// What the kernel families share: element addressing of a TensorArg, grid sizes, block-wide
// sums, and the dispatch from a weight dtype to a kernel instantiated for it.
#include <cuda_runtime.h>

#include <string>

#include "cuda/cuda_check.h"
#include "cuda/dequant.cuh"
#include "cuda/launch.h"
#include "engine/error.h"

namespace engine::cuda {

constexpr int kWarp = 32;

__device__ __forceinline__ int64_t elements(const TensorArg& t) { return t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]; }

// The byte address of element (i0, i1, i2, i3).
__device__ __forceinline__ char* element(const TensorArg& t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  return t.data + i0 * t.nb[0] + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}

// The index of flat element i of shape `ne`, fastest dimension first.
__device__ __forceinline__ void unravel(int64_t i, const int64_t ne[4], int64_t at[4]) {
  at[0] = i % ne[0];
  i /= ne[0];
  at[1] = i % ne[1];
  i /= ne[1];
  at[2] = i % ne[2];
  at[3] = i / ne[2];
}

// Blocks of `threads` covering n items, within one grid dimension.
inline unsigned blocks_for(int64_t n, int threads) {
  const int64_t blocks = (n + threads - 1) / threads;
  if (blocks > 0x7fffffff) throw Error("cuda backend: " + std::to_string(n) + " items exceed one grid");
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

// A grid dimension of `n` blocks, checked against the 65535 of dimensions y and z.
inline unsigned grid_yz(int64_t n) {
  if (n > 65535) throw Error("cuda backend: " + std::to_string(n) + " blocks exceed a grid's y or z dimension");
  return static_cast<unsigned>(n < 1 ? 1 : n);
}

// The launch just queued, checked.
inline void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

template <class T>
__device__ __forceinline__ T warp_sum(T v) {
  for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
  for (int o = kWarp / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The sum of v over the block (blockDim.x a multiple of 32, at most 1024), on every thread.
template <class T>
__device__ T block_sum(T v) {
  __shared__ T partial[kWarp];
  v = warp_sum(v);
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  __syncthreads();  // partial may still be read by a previous call
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  T total = 0;
  for (int w = 0; w < static_cast<int>(blockDim.x / kWarp); ++w) total += partial[w];
  return total;
}

__device__ inline float block_max(float v) {
  __shared__ float partial[kWarp];
  v = warp_max(v);
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  __syncthreads();
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  float top = -INFINITY;
  for (int w = 0; w < static_cast<int>(blockDim.x / kWarp); ++w) top = fmaxf(top, partial[w]);
  return top;
}

// Calls f.template operator()<T>() with T the weight dtype `type`.
template <class F>
void with_weight_type(DType type, F&& f) {
  switch (type) {
    case DType::F32: return f.template operator()<DType::F32>();
    case DType::F16: return f.template operator()<DType::F16>();
    case DType::BF16: return f.template operator()<DType::BF16>();
    case DType::Q4_0: return f.template operator()<DType::Q4_0>();
    case DType::Q4_1: return f.template operator()<DType::Q4_1>();
    case DType::Q5_0: return f.template operator()<DType::Q5_0>();
    case DType::Q5_1: return f.template operator()<DType::Q5_1>();
    case DType::Q8_0: return f.template operator()<DType::Q8_0>();
    case DType::Q2_K: return f.template operator()<DType::Q2_K>();
    case DType::Q3_K: return f.template operator()<DType::Q3_K>();
    case DType::Q4_K: return f.template operator()<DType::Q4_K>();
    case DType::Q5_K: return f.template operator()<DType::Q5_K>();
    case DType::Q6_K: return f.template operator()<DType::Q6_K>();
    default: throw Error("cuda backend: no kernel reads " + std::string(dtype_name(type)) + " weights");
  }
}

}  // namespace engine::cuda
