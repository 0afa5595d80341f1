// ROPE: rotates the first n_rot elements of each [head_dim] row by angles
// pos * freq_scale * freq_base^(-2i/n_rot) / factor[i], cos and sin scaled by attn_factor;
// later elements are copied.
#include <cmath>

#include "cpu/cpu_features.h"
#include "cpu/kernels.h"
#include "cpu/rows.h"
#include "engine/op_params.h"

namespace engine::cpu {
namespace {

// cos/sin of every rotated pair for one position; theta advances by repeated
// multiplication in float, as ggml's rope cache does, so angles match it bit for bit.
void fill_angles(float pos, const RopeParams& rp, const Tensor* factors, float* cos_sin) {
  const int n_rot = rp.n_rot;
  const float theta_scale = std::pow(rp.freq_base, -2.0f / static_cast<float>(n_rot));
  float theta = pos;
  for (int i = 0; i < n_rot / 2; ++i) {
    const float factor =
        factors ? *reinterpret_cast<const float*>(static_cast<const char*>(factors->data) + i * factors->nb[0]) : 1.0f;
    const float angle = rp.freq_scale * (theta / factor);
    cos_sin[2 * i] = std::cos(angle) * rp.attn_factor;
    cos_sin[2 * i + 1] = std::sin(angle) * rp.attn_factor;
    theta *= theta_scale;
  }
}

// Rotates a row's pairs by cos_sin (fill_angles). Each output's first product is fused, as
// llama.cpp's CPU backend built with FMA contraction computes it.
[[gnu::always_inline]] inline void rotate_pairs(char* x, size_t xs, char* d, size_t ds, const float* cos_sin, int half,
                                                bool neox) {
  for (int k = 0; k < half; ++k) {
    const int64_t j0 = neox ? k : 2 * k;
    const int64_t j1 = neox ? k + half : 2 * k + 1;
    const float c = cos_sin[2 * k];
    const float s = cos_sin[2 * k + 1];
    const float x0 = f32_at(x, j0, xs);
    const float x1 = f32_at(x, j1, xs);
    f32_at(d, j0, ds) = std::fma(x0, c, -(x1 * s));
    f32_at(d, j1, ds) = std::fma(x0, s, x1 * c);
  }
}

// The same loop twice: std::fma is one instruction where the target has FMA and a library call
// (as exact, ten times slower) where it may not.
void rotate_pairs_portable(char* x, size_t xs, char* d, size_t ds, const float* cos_sin, int half, bool neox) {
  rotate_pairs(x, xs, d, ds, cos_sin, half, neox);
}
__attribute__((target("fma"))) void rotate_pairs_fma(char* x, size_t xs, char* d, size_t ds, const float* cos_sin,
                                                      int half, bool neox) {
  rotate_pairs(x, xs, d, ds, cos_sin, half, neox);
}

// A thread's work memory: the cos / sin of one position's rotated pairs.
size_t thread_slice_bytes(const Tensor* dst) { return work_bytes(static_cast<size_t>(rope_params(*dst).n_rot) * sizeof(float)); }

}  // namespace

size_t rope_work_size(const Tensor* dst, int nth) { return static_cast<size_t>(nth) * thread_slice_bytes(dst); }

void rope(const ComputeParams& p, Tensor* dst) {
  const Tensor* a = dst->src[0];
  const Tensor* pos = dst->src[1];
  const Tensor* factors = dst->src[2];
  const RopeParams rp = rope_params(*dst);
  const int n_rot = rp.n_rot;
  const bool neox = rp.mode == kRopeNeox;
  const int half = n_rot / 2;
  const bool has_fma = simd_level() != SimdLevel::kScalar;  // every SIMD level has FMA

  require_work(p, rope_work_size(dst, p.nth), dst);
  auto* cos_sin = reinterpret_cast<float*>(thread_work(p, 0, thread_slice_bytes(dst)));
  int64_t angles_for = -1;  // flat token index (i2, i3) the angles were computed for
  const RowRange rows = split_rows(dst->nrows(), p);
  for (int64_t r = rows.begin; r < rows.end; ++r) {
    const RowIndex i = row_index(dst, r);
    const int64_t token = i.i2 + i.i3 * dst->ne[2];
    if (token != angles_for) {
      const int32_t position = *reinterpret_cast<const int32_t*>(static_cast<const char*>(pos->data) + i.i2 * pos->nb[0]);
      fill_angles(static_cast<float>(position), rp, factors, cos_sin);
      angles_for = token;
    }
    char* d = row_ptr(dst, i);
    char* x = row_ptr(a, i);
    const size_t xs = a->nb[0];
    const size_t ds = dst->nb[0];
    (has_fma ? rotate_pairs_fma : rotate_pairs_portable)(x, xs, d, ds, cos_sin, half, neox);
    for (int64_t k = n_rot; k < dst->ne[0]; ++k) f32_at(d, k, ds) = f32_at(x, k, xs);
  }
}

}  // namespace engine::cpu
