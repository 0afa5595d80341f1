#version 450
#extension GL_GOOGLE_include_directive : require
// MUL_MAT: dst[r, c] = dot(src0 row r, src1 row c) over k = ne0, src0's batches broadcast
// over src1's (dims 2 and 3). A workgroup computes ROWS rows (dispatch.cpp's kMulMatRows), one
// per invocation, walking k a group of weights at a time (dequant.glsl's weight_group,
// weight_at for a tail): the invocations read the same activation at each step, a uniform
// load, and each weight is dequantized once per COLUMNS columns.
#include "common.glsl"
#define ROWS 8
#define COLUMNS 8
layout(local_size_x = ROWS) in;
#include "dequant.glsl"

// Activations meet f16 weights (the KV cache's attention products above all) rounded to f16, as
// ggml's CPU dot products take them. Not so for bf16: a rounding step of 2^-8 would turn every
// last-bit difference of summation order into a difference of that size.
float activation(float x) {
#if defined(WEIGHT_F16)
  return float(float16_t(x));
#else
  return x;
#endif
}

// Columns c0 .. c0 + n - 1 (n <= COLUMNS, a constant where called so the loops unroll) of row r,
// whose weights start at byte `row`; written only when r is a row of dst.
void columns(const uint n, uint c0, uint r, uint row, uint i12, uint i13) {
  const uint k = D.ne[0].x, step1 = D.nb[1].x / 4, groups = k / WEIGHT_GROUP;
  float sums[COLUMNS];
  uint acts[COLUMNS];
  for (uint c = 0; c < n; ++c) {
    sums[c] = 0.0;
    acts[c] = byte_at(1, uvec4(0, c0 + c, i12, i13)) / 4;
  }
  for (uint g = 0; g < groups; ++g) {
    float w[WEIGHT_GROUP];
    weight_group(row, g, w);
    const uint i0 = g * WEIGHT_GROUP;
    for (uint c = 0; c < n; ++c) {
      float s = 0.0;
      for (uint e = 0; e < WEIGHT_GROUP; ++e) s += w[e] * activation(src1_f32[acts[c] + (i0 + e) * step1]);
      sums[c] += s;
    }
  }
  for (uint i = groups * WEIGHT_GROUP; i < k; ++i) {
    const float w = weight_at(row, i);
    for (uint c = 0; c < n; ++c) sums[c] += w * activation(src1_f32[acts[c] + i * step1]);
  }
  if (r < D.ne[3].x)
    for (uint c = 0; c < n; ++c) dst_f32[byte_at(3, uvec4(r, c0 + c, i12, i13)) / 4] = sums[c];
}

void main() {
  const uvec4 ne = D.ne[3];
  const uint r0 = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * ROWS;
  if (r0 >= ne.x) return;
  const uint r = r0 + gl_LocalInvocationID.x;
  const uint i12 = gl_WorkGroupID.z % ne.z, i13 = gl_WorkGroupID.z / ne.z;
  const uint i02 = i12 / (ne.z / D.ne[0].z), i03 = i13 / (ne.w / D.ne[0].w);
  // Rows past the end read the last row's weights, so every load stays in the tensor.
  const uint row = byte_at(0, uvec4(0, min(r, ne.x - 1), i02, i03));
  uint c0 = 0;
  for (; c0 + COLUMNS <= ne.y; c0 += COLUMNS) columns(COLUMNS, c0, r, row, i12, i13);
  if (c0 + 4 <= ne.y) {
    columns(4, c0, r, row, i12, i13);
    c0 += 4;
  }
  if (c0 + 2 <= ne.y) {
    columns(2, c0, r, row, i12, i13);
    c0 += 2;
  }
  if (c0 < ne.y) columns(1, c0, r, row, i12, i13);
}
