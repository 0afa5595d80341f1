#version 450
#extension GL_GOOGLE_include_directive : require
// MUL_MAT over many columns (prefill), the same product as mul_mat.comp: a workgroup computes
// a TILE_ROWS x TILE_COLS tile of dst, walking k TILE_K elements at a time. At each step its
// invocations dequantize the tile's weights and load its activations into shared memory once,
// then each accumulates a 4 x 4 block of outputs from there, so every weight is dequantized
// once per TILE_COLS columns and every activation read once per TILE_ROWS rows.
#include "common.glsl"
#define TILE_ROWS 32
#define TILE_COLS 32
#define TILE_K 32
#define INVOCATIONS 64
layout(local_size_x = INVOCATIONS) in;
#include "dequant.glsl"

// k-major, padded by one so that the invocations of a row of the tile hit different banks.
shared float tile_weights[TILE_K][TILE_ROWS + 1];
shared float tile_acts[TILE_K][TILE_COLS + 1];

void main() {
  const uvec4 ne = D.ne[3];
  const uint k = D.ne[0].x, step1 = D.nb[1].x / 4;
  const uint r0 = push.first_row + gl_WorkGroupID.x * TILE_ROWS, c0 = gl_WorkGroupID.y * TILE_COLS;
  const uint i12 = gl_WorkGroupID.z % ne.z, i13 = gl_WorkGroupID.z / ne.z;
  const uint i02 = i12 / (ne.z / D.ne[0].z), i03 = i13 / (ne.w / D.ne[0].w);
  const uint id = gl_LocalInvocationID.x;
  const uint rows_at = (id / 8) * 4, cols_at = (id % 8) * 4;  // this invocation's 4 x 4 block
  const uint groups_per_step = TILE_K / WEIGHT_GROUP;
  float sums[4][4];
  for (uint i = 0; i < 4; ++i)
    for (uint j = 0; j < 4; ++j) sums[i][j] = 0.0;

  for (uint k0 = 0; k0 < k; k0 += TILE_K) {
    for (uint p = id; p < TILE_ROWS * groups_per_step; p += INVOCATIONS) {
      const uint tr = p / groups_per_step, i0 = k0 + (p % groups_per_step) * WEIGHT_GROUP;
      // Rows past the end read the last row's weights, so every load stays in the binding.
      const uint row = byte_at(0, uvec4(0, min(r0 + tr, push.row_end - 1), i02, i03));
      float w[WEIGHT_GROUP];
      if (i0 + WEIGHT_GROUP <= k)
        weight_group(row, i0 / WEIGHT_GROUP, w);
      else
        for (uint e = 0; e < WEIGHT_GROUP; ++e) w[e] = i0 + e < k ? weight_at(row, i0 + e) : 0.0;
      for (uint e = 0; e < WEIGHT_GROUP; ++e) tile_weights[i0 - k0 + e][tr] = w[e];
    }
    for (uint p = id; p < TILE_K * TILE_COLS; p += INVOCATIONS) {
      const uint tc = p / TILE_K, kk = p % TILE_K;
      const uint act = byte_at(1, uvec4(0, min(c0 + tc, ne.y - 1), i12, i13)) / 4;
      tile_acts[kk][tc] = k0 + kk < k ? src1_f32[act + (k0 + kk) * step1] : 0.0;
    }
    barrier();
    for (uint kk = 0; kk < TILE_K; ++kk) {
      float w[4], a[4];
      for (uint i = 0; i < 4; ++i) {
        w[i] = tile_weights[kk][rows_at + i];
        a[i] = tile_acts[kk][cols_at + i];
      }
      for (uint i = 0; i < 4; ++i)
        for (uint j = 0; j < 4; ++j) sums[i][j] += w[i] * a[j];
    }
    barrier();
  }

  for (uint i = 0; i < 4; ++i)
    for (uint j = 0; j < 4; ++j) {
      const uint r = r0 + rows_at + i, c = c0 + cols_at + j;
      if (r < push.row_end && c < ne.y) dst_f32[byte_at(3, uvec4(r, c, i12, i13)) / 4] = sums[i][j];
    }
}
