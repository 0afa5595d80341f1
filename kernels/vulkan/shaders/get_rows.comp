#version 450
#extension GL_GOOGLE_include_directive : require
// GET_ROWS: dst[:, i, j] = src0 row ids[i, j] (src1, i32), converted to f32 from the table's
// dtype (dequant.glsl). One invocation per element of dst; a dispatch of a chunk of the table's
// rows writes the elements whose ids fall in it.
#include "common.glsl"
layout(local_size_x = 256) in;
#include "dequant.glsl"

void main() {
  const uint i = flat_invocation();
  const uvec4 ne = D.ne[3];
  if (i >= ne.x * ne.y * ne.z * ne.w) return;
  const uvec4 at = unravel(i, ne);
  const uint id = uint(src1_i32[(D.offset[1] + at.y * D.nb[1].x + at.z * D.nb[1].y) / 4]);
  if (id < push.first_row || id >= push.row_end) return;  // another chunk's row
  const uint row = byte_at(0, uvec4(0, id, at.z % D.ne[0].z, 0));
  dst_f32[byte_at(3, at) / 4] = weight_at(row, at.x);
}
