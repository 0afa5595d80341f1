#version 450
#extension GL_GOOGLE_include_directive : require
// SOFT_MAX: softmax(x * scale + mask) along each row; the mask (src1, optional) row is the
// row's index in dim 1. One workgroup a row.
#include "common.glsl"
#define REDUCE_SIZE 256
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
  for (uint i = gl_LocalInvocationID.x; i < ne.x; i += REDUCE_SIZE)
    top = max(top, src0_f32[src + i * step0] * scale + (masked ? src1_f32[mask + i * step1] : 0.0));
  top = workgroup_max(top);
  float sum = 0.0;
  for (uint i = gl_LocalInvocationID.x; i < ne.x; i += REDUCE_SIZE) {
    const float e = exp(src0_f32[src + i * step0] * scale + (masked ? src1_f32[mask + i * step1] : 0.0) - top);
    dst_f32[dst + i * step3] = e;
    sum += e;
  }
  const float inv = 1.0 / workgroup_sum(sum);
  for (uint i = gl_LocalInvocationID.x; i < ne.x; i += REDUCE_SIZE) dst_f32[dst + i * step3] *= inv;
}
