// ROPE: rotates the first n_rot elements of each [head_dim] row of src0 by the angles of the
// row's token position (src1, i32 by dim 2): pair k turns by pos * freq_scale *
// theta_scale^k / factor[k] (src2, optional), theta advanced by repeated multiplication as the
// CPU backend's rope cache does; cos and sin scaled by attn_factor. One thread per pair; elements past n_rot are copied.
#include "cuda/common.cuh"
#include "engine/op_params.h"

namespace engine::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void rope_kernel(TensorArg src, TensorArg pos, TensorArg factors, TensorArg dst, float theta_scale,
                            float freq_scale, float attn_factor, int n_rot, bool neox, bool has_factors) {
  const int64_t pairs = dst.ne[0] / 2;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= pairs * dst.ne[1] * dst.ne[2] * dst.ne[3]) return;
  const int64_t k = i % pairs, row = i / pairs;
  const int64_t i1 = row % dst.ne[1], i2 = row / dst.ne[1] % dst.ne[2], i3 = row / (dst.ne[1] * dst.ne[2]);
  const char* x = element(src, 0, i1, i2, i3);
  char* y = element(dst, 0, i1, i2, i3);
  auto in = [&](int64_t j) { return *reinterpret_cast<const float*>(x + j * src.nb[0]); };
  auto out = [&](int64_t j) -> float& { return *reinterpret_cast<float*>(y + j * dst.nb[0]); };
  if (k >= n_rot / 2) {
    const int64_t j = n_rot + 2 * (k - n_rot / 2);
    out(j) = in(j);
    out(j + 1) = in(j + 1);
    return;
  }
  float theta = static_cast<float>(*reinterpret_cast<const int32_t*>(pos.data + i2 * pos.nb[0]));
  for (int64_t j = 0; j < k; ++j) theta *= theta_scale;
  const float factor = has_factors ? *reinterpret_cast<const float*>(factors.data + k * factors.nb[0]) : 1.0f;
  const float angle = freq_scale * __fdiv_rn(theta, factor);
  float s, c;
  sincosf(angle, &s, &c);
  s = __fmul_rn(s, attn_factor);
  c = __fmul_rn(c, attn_factor);
  const int64_t j0 = neox ? k : 2 * k, j1 = neox ? k + n_rot / 2 : 2 * k + 1;
  const float x0 = in(j0), x1 = in(j1);
  // the first product of each sum fused, as in the CPU backend
  out(j0) = fmaf(x0, c, -__fmul_rn(x1, s));
  out(j1) = fmaf(x0, s, __fmul_rn(x1, c));
}

}  // namespace

void launch_rope(const Launch& l, cudaStream_t stream) {
  const int64_t pairs = l.dst.ne[0] / 2 * l.dst.ne[1] * l.dst.ne[2] * l.dst.ne[3];
  rope_kernel<<<blocks_for(pairs, kThreads), kThreads, 0, stream>>>(l.src[0], l.src[1], l.src[2], l.dst, l.params[0],
                                                                     l.params[1], l.params[2], l.flags[0], l.flags[1] == kRopeNeox,
                                                                     l.flags[2] != 0);
  check_launch("rope_kernel");
}

}  // namespace engine::cuda
