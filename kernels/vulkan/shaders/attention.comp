#version 450
#extension GL_GOOGLE_include_directive : require
// Attention of one query of one head: the kq MUL_MAT, its SOFT_MAX and the kqv MUL_MAT in one
// dispatch, the row of scores kept in shared memory, each rounded as those three nodes round it
// (dot_f16.glsl, soft_max.comp). Bindings: K (src0, f16 [head_dim, n_kv, kv_heads]), the queries
// (src1, f32 [head_dim, n_tokens, heads]), V (src2, f16 [n_kv, head_dim, kv_heads]), kqv (dst,
// f32 [head_dim, n_tokens, heads]), the mask (src3, f32, one row of n_kv per query). Record:
// params0.x the softmax scale; extra = (scores' dot order, output's dot order, masked).
#include "common.glsl"
#include "vec_math.glsl"
#define REDUCE_SIZE 64
layout(local_size_x = REDUCE_SIZE) in;
#include "reduce.glsl"
#define MAX_KV 4096  // dispatch.cpp's kAttentionMaxKv
shared float scores[MAX_KV];
#define SHARED_ACTIVATIONS scores
#include "dot_f16.glsl"

void main() {
  const uint n_kv = D.ne[0].y, head_dim = D.ne[0].x, n_tokens = D.ne[1].y, heads = D.ne[1].z;
  const uint row = workgroup_row();
  if (row >= n_tokens * heads) return;
  const uint t = row % n_tokens, h = row / n_tokens, me = gl_LocalInvocationID.x;
  const uint kh = h / (heads / D.ne[0].z), vh = h / (heads / D.ne[2].z);
  const uint query = byte_at(1, uvec4(0, t, h, 0)) / 4;
  const bool masked = D.extra.z != 0;
  const uint mask = (D.src3.x + t * D.src3.y) / 4;
  const float scale = intBitsToFloat(D.params0.x);

  float top = -1.0 / 0.0;
  for (uint j = me; j < n_kv; j += REDUCE_SIZE) {
    const float s = dot_f16(DOT_SRC0_SRC1, byte_at(0, uvec4(0, j, kh, 0)), query, D.nb[1].x / 4, head_dim, D.extra.x);
    precise const float scaled = s * scale;
    const float w = scaled + (masked ? src3_f32[mask + j] : 0.0);
    scores[j] = w;
    top = max(top, w);
  }
  top = workgroup_max(top);  // its barriers also publish every score

  const uint groups = (n_kv + 15) / 16;
  vec2 sum = vec2(0.0);
  if (top != -1.0 / 0.0)
    for (uint g = me; g < groups; g += REDUCE_SIZE) {
      const uint n = min(16u, n_kv - 16 * g);
      float e[16];
      for (uint l = 0; l < n; ++l) e[l] = scores[16 * g + l];
      sum = pair_add(sum, exp_group(e, n, top));
      for (uint l = 0; l < n; ++l) scores[16 * g + l] = e[l];
    }
  sum = workgroup_pair_sum(sum);
  // a row with every score masked is all zeros, as soft_max.comp writes it
  const float inv = top != -1.0 / 0.0 ? pair_reciprocal(sum) : 0.0;
  for (uint g = me; g < groups; g += REDUCE_SIZE)
    for (uint l = 0; l < 16 && 16 * g + l < n_kv; ++l) scores[16 * g + l] = top != -1.0 / 0.0 ? scores[16 * g + l] * inv : 0.0;
  barrier();

  for (uint d = me; d < D.ne[2].y; d += REDUCE_SIZE) {
    const float o = dot_f16(DOT_SRC2_SHARED, byte_at(2, uvec4(0, d, vh, 0)), 0, 1, n_kv, D.extra.y);
    dst_f32[byte_at(3, uvec4(d, t, h, 0)) / 4] = o;
  }
}
