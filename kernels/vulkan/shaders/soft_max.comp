#version 450
#extension GL_GOOGLE_include_directive : require
// SOFT_MAX: softmax(x * scale + mask) along each row; the mask (src1, optional) row is the
// row's index in dim 1. One workgroup a row. Rounded as the CPU backend rounds: the exps of
// each 16-element group summed by vec_math's lane tree, the groups' sums carried in two floats.
#include "common.glsl"
#include "vec_math.glsl"
#define REDUCE_SIZE 64  // rows are KV spans, a few thousand at most; lavapipe pays per subgroup of a workgroup
layout(local_size_x = REDUCE_SIZE) in;
#include "reduce.glsl"

void main() {
  const uvec4 ne = D.ne[3];
  const uint row = workgroup_row();
  if (row >= ne.y * ne.z * ne.w) return;
  const uvec4 at = unravel(row * ne.x, ne);
  const uint src = byte_at(0, at) / 4, dst = byte_at(3, at) / 4;
  const uint step0 = D.nb[0].x / 4, step3 = D.nb[3].x / 4;
  const bool masked = D.extra.x != 0;
  const uint mask = masked ? byte_at(1, uvec4(0, at.y, 0, 0)) / 4 : 0;
  const uint step1 = D.nb[1].x / 4;
  const float scale = intBitsToFloat(D.params0.x);
  float top = -1.0 / 0.0;
  for (uint i = gl_LocalInvocationID.x; i < ne.x; i += REDUCE_SIZE) {
    precise const float scaled = src0_f32[src + i * step0] * scale;
    const float w = scaled + (masked ? src1_f32[mask + i * step1] : 0.0);
    dst_f32[dst + i * step3] = w;
    top = max(top, w);
  }
  top = workgroup_max(top);
  if (top == -1.0 / 0.0) {  // every element masked: zeros
    for (uint i = gl_LocalInvocationID.x; i < ne.x; i += REDUCE_SIZE) dst_f32[dst + i * step3] = 0.0;
    return;
  }
  memoryBarrierBuffer();  // the scaled inputs were written by other invocations of this workgroup
  barrier();
  vec2 sum = vec2(0.0);
  const uint groups = (ne.x + 15) / 16;
  for (uint g = gl_LocalInvocationID.x; g < groups; g += REDUCE_SIZE) {
    const uint n = min(16u, ne.x - 16 * g);
    float e[16];
    for (uint l = 0; l < n; ++l) e[l] = dst_f32[dst + (16 * g + l) * step3];
    sum = pair_add(sum, exp_group(e, n, top));
    for (uint l = 0; l < n; ++l) dst_f32[dst + (16 * g + l) * step3] = e[l];
  }
  const float inv = pair_reciprocal(workgroup_pair_sum(sum));
  for (uint g = gl_LocalInvocationID.x; g < groups; g += REDUCE_SIZE)
    for (uint l = 0; l < 16 && 16 * g + l < ne.x; ++l) dst_f32[dst + (16 * g + l) * step3] *= inv;
}
