#version 450
#extension GL_GOOGLE_include_directive : require
// SCALE, SILU, GELU: one element of src0 to the same element of dst.
#include "common.glsl"
#include "vec_math.glsl"
layout(local_size_x = 256) in;

void main() {
  const uint i = flat_invocation();
  const uvec4 ne = D.ne[3];
  if (i >= ne.x * ne.y * ne.z * ne.w) return;
  const uvec4 at = unravel(i, ne);
  const float x = src0_f32[byte_at(0, at) / 4];
#if defined(OP_SCALE)
  const float y = x * intBitsToFloat(D.params0.x);
#elif defined(OP_SILU)
  const float y = div_rn(x, 1.0 + vec_expf(-x));
#elif defined(OP_GELU)
  // tanh form; tanh(u) = 1 - 2 / (exp(2u) + 1) stays finite where exp overflows
  const float u = 0.7978845608 * x * (1.0 + 0.044715 * x * x);
  const float y = 0.5 * x * (2.0 - 2.0 / (exp(2.0 * u) + 1.0));
#endif
  dst_f32[byte_at(3, at) / 4] = y;
}
