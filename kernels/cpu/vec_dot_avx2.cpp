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

ENGINE_AVX2 inline __m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

}  // namespace

bool cpu_has_features() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
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

}  // namespace engine::cpu::avx2
