#version 450
#extension GL_GOOGLE_include_directive : require
// MUL_MAT: dst[r, c] = dot(src0 row r, src1 row c) over k = ne0, src0's batches broadcast
// over src1's (dims 2 and 3). A workgroup computes ROWS rows (dispatch.cpp's kMulMatRows), SPAN
// per invocation, walking k a group of weights at a time (dequant.glsl's weight_group,
// weight_at for a tail): the invocations read the same activations at each step, four at a
// time where a column is dense, and each weight is dequantized once per COLUMNS columns.
// With MUL_MAT_ID (MUL_MAT_ID): a workgroup's z is one slot (i, t), its column the product of
// expert ids[i, t] (src2) with src1's row (i, or 0 where src1 has one per token) of batch t.
#include "common.glsl"
#define INVOCATIONS 8
#define SPAN 2
#define ROWS (INVOCATIONS * SPAN)
#define COLUMNS 8
layout(local_size_x = INVOCATIONS) in;
#include "dequant.glsl"
layout(std430, binding = 1) readonly buffer Src1V4 { vec4 src1_v4[]; };

// Columns c0 .. c0 + n - 1 (n <= COLUMNS) of src1 times the invocation's rows r[], whose
// weights start at bytes row[], into dst's columns d0 ..; a row past dst's is not written. `dense`: every column's elements adjacent and
// 16-byte aligned, read as vec4, each once for all SPAN rows. n and dense are constants where
// called, so the loops unroll and hold no branch.
void columns(const uint n, const bool dense, uint c0, uint d0, uint r[SPAN], uint row[SPAN], uint i12, uint i13) {
  const uint k = D.ne[0].x, step1 = D.nb[1].x / 4, groups = k / WEIGHT_GROUP;
  float sums[SPAN][COLUMNS];
  uint acts[COLUMNS];
  for (uint c = 0; c < n; ++c) {
    for (uint s = 0; s < SPAN; ++s) sums[s][c] = 0.0;
    acts[c] = byte_at(1, uvec4(0, c0 + c, i12, i13)) / 4;
  }
  for (uint g = 0; g < groups; ++g) {
    float w[SPAN][WEIGHT_GROUP];
    for (uint s = 0; s < SPAN; ++s) weight_group(row[s], g, w[s]);
    const uint i0 = g * WEIGHT_GROUP;
    for (uint c = 0; c < n; ++c) {
      if (dense)
        for (uint e = 0; e < WEIGHT_GROUP; e += 4) {
          const vec4 a = src1_v4[(acts[c] + i0 + e) / 4];
          for (uint s = 0; s < SPAN; ++s) sums[s][c] += dot(vec4(w[s][e], w[s][e + 1], w[s][e + 2], w[s][e + 3]), a);
        }
      else
        for (uint e = 0; e < WEIGHT_GROUP; ++e) {
          const float a = src1_f32[acts[c] + (i0 + e) * step1];
          for (uint s = 0; s < SPAN; ++s) sums[s][c] += w[s][e] * a;
        }
    }
  }
  for (uint i = groups * WEIGHT_GROUP; i < k; ++i)
    for (uint s = 0; s < SPAN; ++s) {
      const float w = weight_at(row[s], i);
      for (uint c = 0; c < n; ++c) sums[s][c] += w * src1_f32[acts[c] + i * step1];
    }
  for (uint s = 0; s < SPAN; ++s)
    if (r[s] < push.row_end)
      for (uint c = 0; c < n; ++c) dst_f32[byte_at(3, uvec4(r[s], d0 + c, i12, i13)) / 4] = sums[s][c];
}

// Columns c0 .. c0 + n - 1 into d0 .., dense or not.
void columns(const uint n, uint c0, uint d0, uint r[SPAN], uint row[SPAN], uint i12, uint i13) {
  bool dense = D.nb[1].x == 4;
  for (uint c = 0; c < n; ++c) dense = dense && byte_at(1, uvec4(0, c0 + c, i12, i13)) % 16 == 0;
  if (dense)
    columns(n, true, c0, d0, r, row, i12, i13);
  else
    columns(n, false, c0, d0, r, row, i12, i13);
}

#if defined(WEIGHT_F16)
#include "dot_f16.glsl"
#elif defined(WEIGHT_BF16)
#include "vec_math.glsl"
// bf16 weights meet activations rounded to bf16 (to nearest even) and summed in the lane order
// of the CPU's AVX512_BF16 dot products (kernels/cpu/dot_float.cpp), as f16 weights in dot_f16.glsl.
float act_at(uint act, uint step1, uint i, uint k) {
  if (i >= k) return 0.0;
  const uint b = floatBitsToUint(src1_f32[act + i * step1]);
  return uintBitsToFloat((b + 0x7FFFu + ((b >> 16) & 1u)) & 0xFFFF0000u);
}
float weight_or_zero(uint row, uint i, uint k) { return i < k ? weight_at(row, i) : 0.0; }
#endif

#if defined(WEIGHT_BF16)
// One dot-product instruction on the 32 elements from i0: lane j adds the product of element
// 2j + 1, then that of element 2j, each product exact in f32.
void add_pairs(inout float acc[16], uint row, uint act, uint step1, uint i0, uint k) {
  for (uint j = 0; j < 16; ++j) {
    const uint e = i0 + 2 * j;
    precise const float odd = acc[j] + weight_or_zero(row, e + 1, k) * act_at(act, step1, e + 1, k);
    precise const float even = odd + weight_or_zero(row, e, k) * act_at(act, step1, e, k);
    acc[j] = even;
  }
}

// The batch order: one accumulator. The row order: two, 64 elements a step, then the leftovers
// as a double would add them, or over a padded span as one more step.
float dot_bf16(uint row, uint act, uint step1, uint k, uint order) {
  float acc0[16], acc1[16];
  for (uint j = 0; j < 16; ++j) {
    acc0[j] = 0.0;
    acc1[j] = 0.0;
  }
  uint i = 0;
  if (order == ORDER_BATCH) {
    for (; i < k; i += 32) add_pairs(acc0, row, act, step1, i, k);
    return lanes_sum(acc0);
  }
  const uint whole = order == ORDER_ROW_PADDED ? k : k / 64 * 64;
  for (; i < whole; i += 64) {
    add_pairs(acc0, row, act, step1, i, k);
    add_pairs(acc1, row, act, step1, i + 32, k);
  }
  vec2 sum = pair_add(vec2(lanes_sum(acc0), 0.0), vec2(lanes_sum(acc1), 0.0));
  for (; i < k; ++i) {
    precise const float product = weight_at(row, i) * act_at(act, step1, i, k);
    sum = pair_add(sum, vec2(product, 0.0));
  }
  return sum.x + sum.y;
}
#endif

void main() {
  const uvec4 ne = D.ne[3];
  const uint r0 = push.first_row + (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * ROWS;
  if (r0 >= push.row_end) return;
#if defined(MUL_MAT_ID)
  const uint slot = gl_WorkGroupID.z % ne.y, i12 = gl_WorkGroupID.z / ne.y, i13 = 0;
  const int expert = src2_i32[(D.offset[2] + slot * D.nb[2].x + i12 * D.nb[2].y) / 4];
  if (expert < 0 || uint(expert) >= D.ne[0].z) {  // no such expert: its column reads NaN, no weight
    for (uint s = 0; s < SPAN; ++s) {
      const uint rs = r0 + gl_LocalInvocationID.x + s * INVOCATIONS;
      if (rs < push.row_end) dst_f32[byte_at(3, uvec4(rs, slot, i12, 0)) / 4] = uintBitsToFloat(0x7FC00000u);
    }
    return;
  }
  const uint i02 = uint(expert), i03 = 0, act0 = D.ne[1].y == 1 ? 0 : slot, dst0 = slot, n_cols = 1;
#else
  const uint i12 = gl_WorkGroupID.z % ne.z, i13 = gl_WorkGroupID.z / ne.z;
  const uint i02 = i12 / (ne.z / D.ne[0].z), i03 = i13 / (ne.w / D.ne[0].w);
  const uint act0 = 0, dst0 = 0, n_cols = ne.y;
#endif
  uint r[SPAN], row[SPAN];
  for (uint s = 0; s < SPAN; ++s) {
    r[s] = r0 + gl_LocalInvocationID.x + s * INVOCATIONS;
    // Rows past the end read the last row's weights, so every load stays in the binding.
    row[s] = byte_at(0, uvec4(0, min(r[s], push.row_end - 1), i02, i03));
  }
#if defined(WEIGHT_F16) || defined(WEIGHT_BF16)
  for (uint c = 0; c < n_cols; ++c)
    for (uint s = 0; s < SPAN; ++s) {
      const uint act = byte_at(1, uvec4(0, act0 + c, i12, i13)) / 4, step1 = D.nb[1].x / 4;
#if defined(WEIGHT_F16)
      const float v = dot_f16(DOT_SRC0_SRC1, row[s], act, step1, D.ne[0].x, D.extra.x);
#else
      const float v = dot_bf16(row[s], act, step1, D.ne[0].x, D.extra.x);
#endif
      if (r[s] < push.row_end) dst_f32[byte_at(3, uvec4(r[s], dst0 + c, i12, i13)) / 4] = v;
    }
#else
  uint c0 = 0;
  for (; c0 + COLUMNS <= n_cols; c0 += COLUMNS) columns(COLUMNS, act0 + c0, dst0 + c0, r, row, i12, i13);
  if (c0 + 4 <= n_cols) {
    columns(4, act0 + c0, dst0 + c0, r, row, i12, i13);
    c0 += 4;
  }
  if (c0 + 2 <= n_cols) {
    columns(2, act0 + c0, dst0 + c0, r, row, i12, i13);
    c0 += 2;
  }
  if (c0 < n_cols) columns(1, act0 + c0, dst0 + c0, r, row, i12, i13);
#endif
}
