// AVX2/FMA/F16C dot products. Each function is compiled for those features only, so the
// library still runs (on the scalar paths) on CPUs without them.
#include "cpu/vec_dot_avx2.h"

#include <immintrin.h>

#include "engine/quants.h"
#include "quant_formats.h"

#define ENGINE_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace engine::cpu::avx2 {
namespace {

using namespace engine::quant;

ENGINE_AVX2 inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Eight int32 sums of products of signed int8 lanes (pairs and quads summed).
ENGINE_AVX2 inline __m256i dot_i8(__m256i x, __m256i y) {
  const __m256i ax = _mm256_sign_epi8(x, x);
  const __m256i sy = _mm256_sign_epi8(y, x);
  return _mm256_madd_epi16(_mm256_maddubs_epi16(ax, sy), _mm256_set1_epi16(1));
}

// The 32 four-bit levels of 16 bytes: low nibbles first, then high nibbles.
ENGINE_AVX2 inline __m256i nibbles(const uint8_t* qs) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(raw, 4), raw);
  return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

ENGINE_AVX2 inline __m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

}  // namespace

bool cpu_has_features() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
}

ENGINE_AVX2 float dot_q4_0_q8_0(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ4_0*>(vx);
  const auto* y = static_cast<const BlockQ8_0*>(vy);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK; ++i) {
    const __m256i q = _mm256_sub_epi8(nibbles(x[i].qs), _mm256_set1_epi8(8));
    const __m256i s = dot_i8(q, load32(y[i].qs));
    const __m256 d = _mm256_set1_ps(fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d));
    acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(s), acc);
  }
  return hsum(acc);
}

ENGINE_AVX2 float dot_q8_0_q8_0(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ8_0*>(vx);
  const auto* y = static_cast<const BlockQ8_0*>(vy);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK; ++i) {
    const __m256i s = dot_i8(load32(x[i].qs), load32(y[i].qs));
    const __m256 d = _mm256_set1_ps(fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d));
    acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(s), acc);
  }
  return hsum(acc);
}

ENGINE_AVX2 float dot_q4_K_q8_K(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ4_K*>(vx);
  const auto* y = static_cast<const BlockQ8_K*>(vy);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  __m256 acc = _mm256_setzero_ps();
  float min_sum = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    int sc[8], mn[8];
    for (int j = 0; j < 8; ++j) {
      if (j < 4) {
        sc[j] = x[i].scales[j] & 63;
        mn[j] = x[i].scales[j + 4] & 63;
      } else {
        sc[j] = (x[i].scales[j + 4] & 0xF) | ((x[i].scales[j - 4] >> 6) << 4);
        mn[j] = (x[i].scales[j + 4] >> 4) | ((x[i].scales[j] >> 6) << 4);
      }
    }
    int msum = 0;
    for (int j = 0; j < 8; ++j) msum += mn[j] * (y[i].bsums[2 * j] + y[i].bsums[2 * j + 1]);
    min_sum += y[i].d * fp16_to_fp32(x[i].dmin) * static_cast<float>(msum);

    __m256i sumi = _mm256_setzero_si256();
    for (int j = 0; j < 4; ++j) {
      const __m256i q = load32(x[i].qs + 32 * j);
      const __m256i lo = _mm256_and_si256(q, low4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
      const __m256i p_lo = _mm256_maddubs_epi16(lo, load32(y[i].qs + 64 * j));
      const __m256i p_hi = _mm256_maddubs_epi16(hi, load32(y[i].qs + 64 * j + 32));
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p_lo, _mm256_set1_epi16(static_cast<int16_t>(sc[2 * j]))));
      sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p_hi, _mm256_set1_epi16(static_cast<int16_t>(sc[2 * j + 1]))));
    }
    const __m256 d = _mm256_set1_ps(y[i].d * fp16_to_fp32(x[i].d));
    acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(sumi), acc);
  }
  return hsum(acc) - min_sum;
}

ENGINE_AVX2 float dot_q6_K_q8_K(int64_t n, const void* vx, const void* vy) {
  const auto* x = static_cast<const BlockQ6_K*>(vx);
  const auto* y = static_cast<const BlockQ8_K*>(vy);
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i low2 = _mm256_set1_epi8(0x03);
  const __m256i offset = _mm256_set1_epi8(32);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    __m256i sumi = _mm256_setzero_si256();
    for (int half = 0; half < 2; ++half) {
      const __m256i ql0 = load32(x[i].ql + 64 * half);
      const __m256i ql1 = load32(x[i].ql + 64 * half + 32);
      const __m256i qh = load32(x[i].qh + 32 * half);
      // Unsigned six-bit levels of the four 32-element runs of this half.
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(ql0, low4), _mm256_slli_epi16(_mm256_and_si256(qh, low2), 4)),
          _mm256_or_si256(_mm256_and_si256(ql1, low4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), low2), 4)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), low2), 4)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), low2), 4)),
      };
      for (int k = 0; k < 4; ++k) {
        const __m256i a = load32(y[i].qs + 128 * half + 32 * k);
        // (q - 32) * a as q * a - 32 * a, both in 16-bit pair sums.
        const __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(q[k], a), _mm256_maddubs_epi16(offset, a));
        const int g = 8 * half + 2 * k;
        const __m256i scales = _mm256_set_m128i(_mm_set1_epi16(x[i].scales[g + 1]), _mm_set1_epi16(x[i].scales[g]));
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, scales));
      }
    }
    const __m256 d = _mm256_set1_ps(y[i].d * fp16_to_fp32(x[i].d));
    acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(sumi), acc);
  }
  return hsum(acc);
}

}  // namespace engine::cpu::avx2
