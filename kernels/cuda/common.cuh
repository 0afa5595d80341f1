#pragma once
// What the kernel families share: element addressing of a TensorArg, grid sizes, block-wide
// sums, and the dispatch from a weight dtype to a kernel instantiated for it.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
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

// The activation a product of T weights multiplies: f16 and bf16 weights meet activations
// rounded to their own type (to nearest even), as the CPU backend's products take them.
template <DType T>
__device__ __forceinline__ float activation(float a) {
  if constexpr (T == DType::F16) return __half2float(__float2half_rn(a));
  if constexpr (T == DType::BF16) return __bfloat162float(__float2bfloat16_rn(a));
  return a;
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

struct Add {
  template <class T>
  __device__ T operator()(T a, T b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// v combined by `op` over the warp, on every lane.
template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
  for (int o = kWarp / 2; o > 0; o /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
template <class T>
__device__ __forceinline__ T warp_sum(T v) { return warp_reduce(v, Add{}); }

// v combined by `op` over the block (blockDim.x a multiple of 32, at most 1024), on every thread.
template <class T, class Op>
__device__ T block_reduce(T v, Op op) {
  __shared__ T partial[kWarp];
  v = warp_reduce(v, op);
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  __syncthreads();  // partial may still be read by a previous call
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  T total = partial[0];
  for (int w = 1; w < static_cast<int>(blockDim.x / kWarp); ++w) total = op(total, partial[w]);
  return total;
}
template <class T>
__device__ T block_sum(T v) { return block_reduce(v, Add{}); }
__device__ inline float block_max(float v) { return block_reduce(v, Max{}); }

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
