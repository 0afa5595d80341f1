#version 450
#extension GL_GOOGLE_include_directive : require
// ADD / MUL / DIV: dst = src0 op src1, src1 repeated along every dimension it is shorter in.
#include "common.glsl"
#include "vec_math.glsl"
layout(local_size_x = 256) in;

void main() {
  const uint i = flat_invocation();
  const uvec4 ne = D.ne[3];
  if (i >= ne.x * ne.y * ne.z * ne.w) return;
  const uvec4 at = unravel(i, ne);
  const float a = src0_f32[byte_at(0, at) / 4];
  const float b = src1_f32[byte_at(1, at % D.ne[1]) / 4];
#if defined(OP_ADD)
  dst_f32[byte_at(3, at) / 4] = a + b;
#elif defined(OP_MUL)
  dst_f32[byte_at(3, at) / 4] = a * b;
#elif defined(OP_DIV)
  dst_f32[byte_at(3, at) / 4] = div_rn(a, b);  // correctly rounded, as the CPU's
#endif
}
