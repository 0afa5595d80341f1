// ADD, MUL, DIV, SCALE, SILU, GELU, CONT and CPY: one thread per element of dst.
#include <cuda_fp16.h>

#include "cuda/common.cuh"

namespace engine::cuda {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ int64_t flat_thread() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }

// dst = a op b, b repeated along every dimension it is shorter in; kOp is ADD, MUL or DIV.
template <Op kOp>
__global__ void binary_kernel(TensorArg a, TensorArg b, TensorArg dst) {
  const int64_t i = flat_thread();
  if (i >= elements(dst)) return;
  int64_t at[4];
  unravel(i, dst.ne, at);
  const float x = *reinterpret_cast<const float*>(element(a, at[0], at[1], at[2], at[3]));
  const float y = *reinterpret_cast<const float*>(element(b, at[0] % b.ne[0], at[1] % b.ne[1], at[2] % b.ne[2], at[3] % b.ne[3]));
  float z;
  if constexpr (kOp == Op::ADD)
    z = x + y;
  else if constexpr (kOp == Op::MUL)
    z = x * y;
  else
    z = __fdiv_rn(x, y);  // correctly rounded, as the CPU's division
  *reinterpret_cast<float*>(element(dst, at[0], at[1], at[2], at[3])) = z;
}

__global__ void unary_kernel(TensorArg a, TensorArg dst, Op op, float scale) {
  const int64_t i = flat_thread();
  if (i >= elements(dst)) return;
  int64_t at[4];
  unravel(i, dst.ne, at);
  const float x = *reinterpret_cast<const float*>(element(a, at[0], at[1], at[2], at[3]));
  float y;
  if (op == Op::SCALE) {
    y = x * scale;
  } else if (op == Op::SILU) {
    y = __fdiv_rn(x, 1.0f + expf(-x));
  } else {  // GELU, tanh form; tanh(u) = 1 - 2 / (exp(2u) + 1) stays finite where exp overflows
    const float u = 0.7978845608f * x * (1.0f + 0.044715f * x * x);
    y = 0.5f * x * (2.0f - 2.0f / (expf(2.0f * u) + 1.0f));
  }
  *reinterpret_cast<float*>(element(dst, at[0], at[1], at[2], at[3])) = y;
}

// Element i of src (in its own shape's order) to element i of dst, as f32 or f16.
template <bool kToF16>
__global__ void copy_kernel(TensorArg src, TensorArg dst) {
  const int64_t i = flat_thread();
  if (i >= elements(dst)) return;
  int64_t from[4], to[4];
  unravel(i, src.ne, from);
  unravel(i, dst.ne, to);
  const float x = *reinterpret_cast<const float*>(element(src, from[0], from[1], from[2], from[3]));
  char* out = element(dst, to[0], to[1], to[2], to[3]);
  if constexpr (kToF16)
    *reinterpret_cast<__half*>(out) = __float2half_rn(x);
  else
    *reinterpret_cast<float*>(out) = x;
}

unsigned element_blocks(const TensorArg& t) { return blocks_for(t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3], kThreads); }

}  // namespace

void launch_binary(const Launch& l, cudaStream_t stream) {
  const auto kernel = l.op == Op::ADD   ? binary_kernel<Op::ADD>
                      : l.op == Op::MUL ? binary_kernel<Op::MUL>
                                        : binary_kernel<Op::DIV>;
  kernel<<<element_blocks(l.dst), kThreads, 0, stream>>>(l.src[0], l.src[1], l.dst);
  check_launch("binary_kernel");
}

void launch_unary(const Launch& l, cudaStream_t stream) {
  unary_kernel<<<element_blocks(l.dst), kThreads, 0, stream>>>(l.src[0], l.dst, l.op, l.params[0]);
  check_launch("unary_kernel");
}

void launch_copy(const Launch& l, cudaStream_t stream) {
  if (l.dst_type == DType::F16)
    copy_kernel<true><<<element_blocks(l.dst), kThreads, 0, stream>>>(l.src[0], l.dst);
  else
    copy_kernel<false><<<element_blocks(l.dst), kThreads, 0, stream>>>(l.src[0], l.dst);
  check_launch("copy_kernel");
}

}  // namespace engine::cuda
