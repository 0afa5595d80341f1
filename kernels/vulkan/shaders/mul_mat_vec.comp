#version 450
#extension GL_GOOGLE_include_directive : require
#if defined(SUBGROUP_SUMS)
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
// MUL_MAT of few columns (decode) on GPUs, the same product as mul_mat.comp: a workgroup takes
// one row, its invocations striding the row a weight group at a time (neighbours read
// neighbouring groups, each weight byte once), up to COLUMNS columns sharing each group, then
// adding their partial sums: within each subgroup, then across subgroups through shared
// memory (SUBGROUP_SUMS, where the device has subgroup arithmetic); or by a shared-memory tree.
#include "common.glsl"
#define INVOCATIONS 64
#define COLUMNS 8
layout(local_size_x = INVOCATIONS) in;
#include "dequant.glsl"

shared float partial[COLUMNS][INVOCATIONS];

// Adds each invocation's sums[c] for c < n, the total of column c written to dst[r, c0 + c].
void write_totals(float sums[COLUMNS], uint n, uint r, uint c0, uint i12, uint i13) {
  const uint id = gl_LocalInvocationID.x;
#if defined(SUBGROUP_SUMS)
  for (uint c = 0; c < n; ++c) {
    const float s = subgroupAdd(sums[c]);
    if (subgroupElect()) partial[c][gl_SubgroupID] = s;
  }
  barrier();
  if (id < n) {
    float total = 0.0;
    for (uint s = 0; s < gl_NumSubgroups; ++s) total += partial[id][s];
    dst_f32[byte_at(3, uvec4(r, c0 + id, i12, i13)) / 4] = total;
  }
#else
  for (uint c = 0; c < n; ++c) partial[c][id] = sums[c];
  barrier();
  for (uint half_size = INVOCATIONS / 2; half_size > 0; half_size >>= 1) {
    if (id < half_size)
      for (uint c = 0; c < n; ++c) partial[c][id] += partial[c][id + half_size];
    barrier();
  }
  if (id < n) dst_f32[byte_at(3, uvec4(r, c0 + id, i12, i13)) / 4] = partial[id][0];
#endif
  barrier();  // partial is filled again for the next columns
}

void main() {
  const uvec4 ne = D.ne[3];
  const uint r = push.first_row + gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (r >= push.row_end) return;
  const uint id = gl_LocalInvocationID.x;
  const uint i12 = gl_WorkGroupID.z % ne.z, i13 = gl_WorkGroupID.z / ne.z;
  const uint i02 = i12 / (ne.z / D.ne[0].z), i03 = i13 / (ne.w / D.ne[0].w);
  const uint row = byte_at(0, uvec4(0, r, i02, i03));
  const uint k = D.ne[0].x, step1 = D.nb[1].x / 4, groups = k / WEIGHT_GROUP;
  for (uint c0 = 0; c0 < ne.y; c0 += COLUMNS) {
    const uint n = min(COLUMNS, ne.y - c0);
    float sums[COLUMNS];
    uint acts[COLUMNS];
    for (uint c = 0; c < COLUMNS; ++c) {
      sums[c] = 0.0;
      acts[c] = byte_at(1, uvec4(0, c0 + min(c, n - 1), i12, i13)) / 4;
    }
    for (uint g = id; g < groups; g += INVOCATIONS) {
      float w[WEIGHT_GROUP];
      weight_group(row, g, w);
      const uint i0 = g * WEIGHT_GROUP;
      for (uint c = 0; c < n; ++c)
        for (uint e = 0; e < WEIGHT_GROUP; ++e) sums[c] += w[e] * src1_f32[acts[c] + (i0 + e) * step1];
    }
    for (uint i = groups * WEIGHT_GROUP + id; i < k; i += INVOCATIONS) {
      const float w = weight_at(row, i);
      for (uint c = 0; c < n; ++c) sums[c] += w * src1_f32[acts[c] + i * step1];
    }
    write_totals(sums, n, r, c0, i12, i13);
  }
}
