#version 450
#extension GL_GOOGLE_include_directive : require
// RMS_NORM: x / sqrt(mean(x^2) + eps); NORM: (x - mean) / sqrt(var + eps). One workgroup a row.
#include "common.glsl"
#define REDUCE_SIZE 256
layout(local_size_x = REDUCE_SIZE) in;
#include "vec_math.glsl"
#include "reduce.glsl"

void main() {
  const uvec4 ne = D.ne[3];
  const uint row = workgroup_row();
  if (row >= ne.y * ne.z * ne.w) return;
  const uvec4 at = unravel(row * ne.x, ne);
  const uint src = byte_at(0, at) / 4, dst = byte_at(3, at) / 4;
  const uint step0 = D.nb[0].x / 4, step3 = D.nb[3].x / 4;
  const float eps = intBitsToFloat(D.params0.x);
  float mean = 0.0;
#if defined(OP_NORM)
  float sum = 0.0;
  for (uint i = gl_LocalInvocationID.x; i < ne.x; i += REDUCE_SIZE) sum += src0_f32[src + i * step0];
  mean = workgroup_sum(sum) / float(ne.x);
#endif
  // The squares' sum is carried in two floats, the mean and its root rounded as the CPU backend's.
  vec2 squares = vec2(0.0);
  for (uint i = gl_LocalInvocationID.x; i < ne.x; i += REDUCE_SIZE) {
    precise const float d = src0_f32[src + i * step0] - mean;
    precise const float square = d * d;
    squares = pair_add(squares, vec2(square, 0.0));
  }
  precise const float inv = 1.0 / sqrt(pair_over(workgroup_pair_sum(squares), float(ne.x)) + eps);
  for (uint i = gl_LocalInvocationID.x; i < ne.x; i += REDUCE_SIZE) dst_f32[dst + i * step3] = (src0_f32[src + i * step0] - mean) * inv;
}
