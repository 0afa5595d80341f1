#version 450
#extension GL_GOOGLE_include_directive : require
// ROPE: rotates the first n_rot elements of each [head_dim] row of src0 by the angles of the
// row's token position (src1, i32 by dim 2): pair k turns by pos * freq_scale *
// freq_base^(-2k/n_rot) / factor[k] (src2, optional), cos and sin scaled by attn_factor. One
// invocation per pair; elements past n_rot are copied. Record: params0 = (n_rot, mode,
// freq_base^(-2/n_rot), freq_scale), params1.x = attn_factor, extra.x = factors.
#include "common.glsl"
#include "vec_math.glsl"
layout(local_size_x = 256) in;

void main() {
  const uvec4 ne = D.ne[3];
  const uint pairs = ne.x / 2;
  const uint i = flat_invocation();
  if (i >= pairs * ne.y * ne.z * ne.w) return;
  const uint k = i % pairs;
  const uvec4 row = unravel((i / pairs) * ne.x, ne);
  const uint src = byte_at(0, row) / 4, dst = byte_at(3, row) / 4;
  const uint step0 = D.nb[0].x / 4, step3 = D.nb[3].x / 4;
  const uint n_rot = uint(D.params0.x);
  const bool neox = D.params0.y == 2;
  if (k >= n_rot / 2) {
    const uint j = n_rot + 2 * (k - n_rot / 2);
    dst_f32[dst + j * step3] = src0_f32[src + j * step0];
    dst_f32[dst + (j + 1) * step3] = src0_f32[src + (j + 1) * step0];
    return;
  }
  const float pos = float(src1_i32[(D.offset[1] + row.z * D.nb[1].x) / 4]);
  const float theta_scale = intBitsToFloat(D.params0.z);
  // theta advances by repeated multiplication, as the CPU backend's (and ggml's) rope cache does
  float theta = pos;
  for (uint j = 0; j < k; ++j) theta *= theta_scale;
  const float factor = D.extra.x != 0 ? src2_f32[(D.offset[2] + k * D.nb[2].x) / 4] : 1.0;
  precise const float angle = intBitsToFloat(D.params0.w) * div_rn(theta, factor);
  precise float s, c;
  sin_cos(angle, s, c);
  const float attn_factor = intBitsToFloat(D.params1.x);
  s *= attn_factor;
  c *= attn_factor;
  const uint j0 = neox ? k : 2 * k;
  const uint j1 = neox ? k + n_rot / 2 : 2 * k + 1;
  const float x0 = src0_f32[src + j0 * step0], x1 = src0_f32[src + j1 * step0];
  // the first product of each sum fused, as in the CPU backend
  precise const float x1s = x1 * s, x1c = x1 * c;
  dst_f32[dst + j0 * step3] = fused(x0, c, -x1s);
  dst_f32[dst + j1 * step3] = fused(x0, s, x1c);
}
