#version 450
#extension GL_GOOGLE_include_directive : require
// CONT and CPY: element i of the (strided) f32 src0 to element i of dst, in dst's dtype. dst
// is CONT's dense result or CPY's view (the shape src1 gives).
#include "common.glsl"
layout(local_size_x = 256) in;

void main() {
  const uint i = flat_invocation();
  const uvec4 ne = D.ne[3];
  if (i >= ne.x * ne.y * ne.z * ne.w) return;
  const float x = src0_f32[byte_at(0, unravel(i, D.ne[0])) / 4];
  const uvec4 at = unravel(i, ne);
#if defined(DST_F32)
  dst_f32[byte_at(3, at) / 4] = x;
#elif defined(DST_F16)
  dst_f16[byte_at(3, at) / 2] = float16_t(x);
#endif
}
