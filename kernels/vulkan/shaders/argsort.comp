#version 450
#extension GL_GOOGLE_include_directive : require
// ARGSORT: for each row of src0, dst (i32) lists its element indices largest first. One
// invocation per element writes its index at its rank: the count of elements before it in
// the order (larger, or equal with a smaller index; NaN after every number), a permutation.
#include "common.glsl"
layout(local_size_x = 256) in;

bool before(float a, uint ia, float b, uint ib) {
  if (isnan(a) || isnan(b)) return !isnan(a) || (isnan(b) && ia < ib);
  return a > b || (a == b && ia < ib);
}

void main() {
  const uint i = flat_invocation();
  const uvec4 ne = D.ne[3];
  if (i >= ne.x * ne.y * ne.z * ne.w) return;
  const uvec4 at = unravel(i, ne);
  const float v = src0_f32[byte_at(0, at) / 4];
  uint rank = 0;
  for (uint m = 0; m < ne.x; ++m)
    if (before(src0_f32[byte_at(0, uvec4(m, at.yzw)) / 4], m, v, at.x)) ++rank;
  dst_i32[byte_at(3, uvec4(rank, at.yzw)) / 4] = int(at.x);
}
