#version 450
#extension GL_GOOGLE_include_directive : require
// SUM_ROWS: dst[0, i1, i2, i3] = the sum of src0's row, one invocation per row, kept as a pair
// of floats (vec_math.glsl's pair_add) and rounded once, as the CPU backend's sum in double.
#include "common.glsl"
#include "vec_math.glsl"
layout(local_size_x = 64) in;

void main() {
  const uint r = flat_invocation();
  const uvec4 ne = D.ne[3];
  if (r >= ne.y * ne.z * ne.w) return;
  const uvec4 at = unravel(r, uvec4(1, ne.y, ne.z, ne.w));
  vec2 sum = vec2(0.0);
  for (uint k = 0; k < D.ne[0].x; ++k) sum = pair_add(sum, vec2(src0_f32[byte_at(0, uvec4(k, at.yzw)) / 4], 0.0));
  dst_f32[byte_at(3, at) / 4] = sum.x + sum.y;
}
