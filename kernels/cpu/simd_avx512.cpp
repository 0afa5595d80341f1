// The SIMD kernels for AVX-512 (F, BW, DQ, VL, VNNI): 16 float lanes in one register; the
// bf16 dot product natively (AVX512_BF16) or emulated. Compiled for those features by target
// pragma only, and called only when the CPU has them (cpu_features.cpp).
// GCC 12's AVX-512 intrinsics pass a self-initialized "undefined" vector that -Wuninitialized
// then reports wherever they inline (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "cpu/repack.h"
#include "cpu/simd_kernels.h"
#include "cpu/vec_math.h"
#include "cpu/work_memory.h"
#include "engine/error.h"
#include "engine/quants.h"
#include "quant_formats.h"

// Everything below (and nothing above: the headers' inline functions stay portable).
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,avx2,fma,f16c,bmi,bmi2")
// GCC 12's AVX-512 intrinsics start from an undefined vector and trip this warning.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace engine::cpu::avx512 {
namespace {

using VF = __m512;

inline VF vf_zero() { return _mm512_setzero_ps(); }
inline VF vf_set1(float v) { return _mm512_set1_ps(v); }
inline VF vf_load_f32(const float* p) { return _mm512_loadu_ps(p); }
inline VF vf_load_f16(const uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
// The first `count` (0..16) elements at p, zeros after them; nothing past them is read.
inline VF vf_load_first(const float* p, int64_t count) {
  return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << count) - 1), p);
}
inline VF vf_load_first(const uint16_t* p, int64_t count) {
  return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(static_cast<__mmask16>((1u << count) - 1), p));
}
inline VF vf_add(VF a, VF b) { return _mm512_add_ps(a, b); }
inline VF vf_sub(VF a, VF b) { return _mm512_sub_ps(a, b); }
inline VF vf_mul(VF a, VF b) { return _mm512_mul_ps(a, b); }
inline VF vf_div(VF a, VF b) { return _mm512_div_ps(a, b); }
// max(a, b) per lane, b where either is NaN or both are zeros: std::max(b, a), as the scalar code writes it.
inline VF vf_max(VF a, VF b) { return _mm512_max_ps(a, b); }
inline VF vf_fma(VF a, VF b, VF c) { return _mm512_fmadd_ps(a, b, c); }
inline void vf_store(float* p, VF v) { _mm512_storeu_ps(p, v); }
inline __m256 vf_fold8(VF v) { return _mm256_add_ps(_mm512_extractf32x8_ps(v, 1), _mm512_castps512_ps256(v)); }  // lanes i + (i + 8)
// reduce_lanes of v[0..3] at once, the four sums in order: each step of the lane tree runs on
// all four vectors' partial sums side by side.
inline VF vf_fold8_pair(VF a, VF b) {  // [a[i] + a[i + 8] | b[i] + b[i + 8]], i < 8
  return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));
}
inline __m128 vf_reduce4(const VF (&v)[4]) {
  const VF h01 = vf_fold8_pair(v[0], v[1]), h23 = vf_fold8_pair(v[2], v[3]);
  // 128-bit lane j: h_j[i] + h_j[i + 4], i < 4
  const VF q = _mm512_add_ps(_mm512_shuffle_f32x4(h01, h23, 0x88), _mm512_shuffle_f32x4(h01, h23, 0xDD));
  const VF p = _mm512_add_ps(q, _mm512_permute_ps(q, 0x4E));  // q0 + q2, q1 + q3
  const VF r = _mm512_add_ps(p, _mm512_permute_ps(p, 0xB1));  // (q0 + q2) + (q1 + q3) in lane 0 of each
  return _mm512_castps512_ps128(_mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), r));
}
// To half precision, rounding to nearest even (as fp32_to_fp16).
inline void vf_store_f16(uint16_t* p, VF v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

inline VF vf_exp_scale(VF j, VF n) {
  const __mmask16 big = _mm512_cmp_ps_mask(_mm512_abs_ps(n), _mm512_set1_ps(192.0f), _CMP_GT_OQ);
  const __mmask16 positive = _mm512_cmp_ps_mask(n, _mm512_setzero_ps(), _CMP_GT_OQ);
  const VF r = _mm512_mask_mov_ps(_mm512_scalef_ps(j, n), big, _mm512_setzero_ps());
  return _mm512_mask_mov_ps(r, big & positive, _mm512_set1_ps(__builtin_inff()));
}

// The odd / even elements of 32 bf16 pairs as floats.
inline VF bf16_odd(__m512i x) { return _mm512_castsi512_ps(_mm512_and_si512(x, _mm512_set1_epi32(static_cast<int32_t>(0xffff0000u)))); }
inline VF bf16_even(__m512i x) { return _mm512_castsi512_ps(_mm512_slli_epi32(x, 16)); }

// One AVX512_BF16 dot-product step, emulated: lane j adds pair 2j+1's product, then pair 2j's,
// each an FMA (a bf16 product is exact in float); the caller's Bf16Denormals scope flushes
// denormal inputs and results as the instruction does.
inline VF dpbf16_emulated(VF acc, const uint16_t* w, const uint16_t* a) {
  const __m512i wv = _mm512_loadu_si512(w), av = _mm512_loadu_si512(a);
  return _mm512_fmadd_ps(bf16_even(wv), bf16_even(av), _mm512_fmadd_ps(bf16_odd(wv), bf16_odd(av), acc));
}

// The instruction itself, in assembly: its intrinsic needs the avx512bf16 target, and a function
// of that target is not inlined into the loops of this file's, so each step was a call (the
// BF16 GEMM at a fifth of its speed). Run only where the CPU has AVX512_BF16.
inline VF dpbf16_native(VF acc, const uint16_t* w, const uint16_t* a) {
  const __m512i wv = _mm512_loadu_si512(w), av = _mm512_loadu_si512(a);
  asm("vdpbf16ps %[w], %[a], %[acc]" : [acc] "+v"(acc) : [a] "v"(av), [w] "v"(wv));
  return acc;
}

template <bool Native>
inline VF dpbf16(VF acc, const uint16_t* w, const uint16_t* a) {
  if constexpr (Native) return dpbf16_native(acc, w, a);
  return dpbf16_emulated(acc, w, a);
}

// Row lanes: one 32-bit lane per weight row, 16 rows per register (integer and float).
using VI = __m512i;
using VR = __m512;
constexpr int kRowLanes = 16;

// q[j] lane r = dword j of the 16 bytes at rows[r] (a 4 x 4 dword transpose per 128-bit lane).
inline void load_row_quads(const uint8_t* const* rows, VI (&q)[4]) {
  VI x[4];
  auto row = [&](int r) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[r])); };
  for (int k = 0; k < 4; ++k) {
    VI v = _mm512_castsi128_si512(row(k));
    v = _mm512_inserti32x4(v, row(k + 4), 1);
    v = _mm512_inserti32x4(v, row(k + 8), 2);
    x[k] = _mm512_inserti32x4(v, row(k + 12), 3);
  }
  const VI t0 = _mm512_unpacklo_epi32(x[0], x[1]), t1 = _mm512_unpackhi_epi32(x[0], x[1]);
  const VI t2 = _mm512_unpacklo_epi32(x[2], x[3]), t3 = _mm512_unpackhi_epi32(x[2], x[3]);
  q[0] = _mm512_unpacklo_epi64(t0, t2);
  q[1] = _mm512_unpackhi_epi64(t0, t2);
  q[2] = _mm512_unpacklo_epi64(t1, t3);
  q[3] = _mm512_unpackhi_epi64(t1, t3);
}
inline VI vi_load(const void* p) { return _mm512_loadu_si512(p); }
inline void vi_store(void* p, VI v) { _mm512_storeu_si512(p, v); }
// 32 signed bytes widened to int16 pairs: out[h] lane L = elements 4L + 2h and 4L + 2h + 1.
inline void q8_pairs(const int8_t* q, __m256i* out) {
  const __m512i wide = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)));
  const __m512i split = _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15), wide);
  _mm256_storeu_si256(out, _mm512_castsi512_si256(split));
  _mm256_storeu_si256(out + 1, _mm512_extracti64x4_epi64(split, 1));
}
// Each row's 16 signed bytes at p (the register's rows one after the other) widened to int16.
inline VI vi_widen_i8(const void* p) { return _mm512_cvtepi8_epi16(_mm256_loadu_si256(static_cast<const __m256i*>(p))); }
// The same from a register: each row's 16 signed bytes in its 128-bit lane of v.
inline VI vi_widen_rows_i8(__m256i v) { return _mm512_cvtepi8_epi16(v); }
// int16 products of u8 x with s8 y, adjacent pairs summed (no saturation for the levels used).
inline VI vi_maddubs(VI x, VI y) { return _mm512_maddubs_epi16(x, y); }
inline VI vi_madd16(VI a, VI b) { return _mm512_madd_epi16(a, b); }
inline VI vi_sub(VI a, VI b) { return _mm512_sub_epi32(a, b); }
inline VI vi_sub16(VI a, VI b) { return _mm512_sub_epi16(a, b); }
// Each row's 128-bit half n (of its 256 bits) in both halves of that row's 256 bits.
template <int N>
inline VI vi_row_half(VI v) { return _mm512_shuffle_i64x2(v, v, N == 0 ? 0xA0 : 0xF5); }
// Bytes picked within every 128-bit lane; `pick` (32 bytes) applies to each row's 256 bits.
inline VI vi_pick_bytes(VI v, __m256i pick) { return _mm512_shuffle_epi8(v, _mm512_broadcast_i64x4(pick)); }
inline VI vi_set1(int32_t v) { return _mm512_set1_epi32(v); }
inline VI vi_low_nibbles(VI v) { return _mm512_and_si512(v, _mm512_set1_epi8(0x0F)); }
inline VI vi_high_nibbles(VI v) { return _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0F)); }
// Sixteen times the high nibbles, in one operation instead of two (a shift and a mask).
inline VI vi_high_nibbles_x16(VI v) { return _mm512_and_si512(v, _mm512_set1_epi8(static_cast<char>(0xF0))); }
// acc + per lane the dot of four unsigned bytes of x with the four signed bytes at y4.
inline VI vi_dot_u8(VI acc, VI x, const int8_t* y4) {
  return _mm512_dpbusd_epi32(acc, x, _mm512_broadcastd_epi32(_mm_loadu_si32(y4)));
}
inline VI vi_add(VI a, VI b) { return _mm512_add_epi32(a, b); }
inline VI vi_mul16(VI a, VI b) { return _mm512_mullo_epi16(a, b); }  // low 16 bits of int16 products
// acc + per lane the dot of the two int16 pairs.
inline VI vi_dot16(VI acc, VI a, VI b) { return _mm512_dpwssd_epi32(acc, a, b); }
inline VI vi_mul(VI a, VI b) { return _mm512_mullo_epi32(a, b); }
inline VI vi_shift_right(VI v, int n) { return _mm512_srai_epi32(v, n); }  // arithmetic
// Lanes whose high 16 bits are zero times the int16 y (exact 32-bit products).
inline VI vi_mul_u16(VI x, int16_t y) { return _mm512_madd_epi16(x, _mm512_set1_epi32(static_cast<uint16_t>(y))); }
inline VI vi_bits(VI v, int shift, int32_t mask) { return _mm512_and_si512(_mm512_srli_epi32(v, shift), _mm512_set1_epi32(mask)); }
inline VI vi_or_shifted(VI a, VI b, int shift) { return _mm512_or_si512(a, _mm512_slli_epi32(b, shift)); }
inline VI vi_or(VI a, VI b) { return _mm512_or_si512(a, b); }
inline VI vi_sub8(VI a, VI b) { return _mm512_sub_epi8(a, b); }
// Per byte b of each 32-bit lane, 0x10 where bit 4j + b of that lane's qh word is set:
// the fifth bits of a legacy block's elements 4j .. 4j + 3, each lane one row.
inline VI vi_fifth_bits(VI qh, int j) {
  const char byte = static_cast<char>(j / 2);
  const __m128i pick = _mm_setr_epi8(byte, byte, byte, byte, byte + 4, byte + 4, byte + 4, byte + 4, byte + 8, byte + 8, byte + 8, byte + 8,
                                     byte + 12, byte + 12, byte + 12, byte + 12);
  const VI spread = _mm512_shuffle_epi8(qh, _mm512_broadcast_i32x4(pick));
  const __mmask64 set = _mm512_test_epi8_mask(spread, _mm512_set1_epi32(static_cast<int32_t>(0x08040201u << (4 * (j % 2)))));
  return _mm512_maskz_mov_epi8(set, _mm512_set1_epi8(0x10));
}
// Bits `from` .. `from` + width - 1 of each byte of v moved to bits `to` .., every other bit cleared.
inline VI vi_move_bits(VI v, int from, int to, int width = 1) {
  const VI moved = to == from ? v : to > from ? _mm512_slli_epi32(v, to - from) : _mm512_srli_epi32(v, from - to);
  return _mm512_and_si512(moved, _mm512_set1_epi8(static_cast<char>(((1 << width) - 1) << to)));
}
// Per byte: the low (or high) nibble of v, or-ed with bits whose low four bits are clear.
inline VI vi_low_nibble_or(VI v, VI bits) { return _mm512_ternarylogic_epi32(v, _mm512_set1_epi8(0x0F), bits, 0xEA); }
inline VI vi_high_nibble_or(VI v, VI bits) { return vi_low_nibble_or(_mm512_srli_epi16(v, 4), bits); }
// Per 32-bit lane: the low 16 bits of lo, then those of hi (lanes holding int16 values).
inline VI vi_pair_low16(VI lo, VI hi) {
  // Bytes 4i + 2, 4i + 3 of each 128-bit lane take hi's bytes 4i, 4i + 1.
  const VI pick = _mm512_broadcast_i32x4(_mm_setr_epi32(0x0100'0000, 0x0504'0000, 0x0908'0000, 0x0D0C'0000));
  return _mm512_mask_shuffle_epi8(lo, 0xCCCC'CCCC'CCCC'CCCCull, hi, pick);
}
inline VI vi_shift_left(VI v, int n) { return _mm512_slli_epi32(v, n); }
// The halves in the low / high 16 bits of each lane, as floats.
inline VR vr_half_low(VI v) { return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(v)); }
inline VR vr_half_high(VI v) { return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(v, 16))); }
// Eight-lane groups: each register holds the eight lanes of kRowLanes / 8 = 2 rows.
inline VI vi_join(const __m256i* rows) { return _mm512_inserti64x4(_mm512_castsi256_si512(rows[0]), rows[1], 1); }
inline VI vi_repeat(__m256i v) { return _mm512_broadcast_i64x4(v); }
// 32 bytes (eight dwords) into the low lanes, and dword j (< 8) of such a register in every lane.
inline VI vi_dwords32(const int8_t* p) { return _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
inline VI vi_dword(VI v, int j) { return _mm512_permutexvar_epi32(_mm512_set1_epi32(j), v); }
inline VI vi_dword_at(const int8_t* p) { return _mm512_broadcastd_epi32(_mm_loadu_si32(p)); }
inline VI vi_dot_u8v(VI acc, VI x, VI y) { return _mm512_dpbusd_epi32(acc, x, y); }
// vi_dot_u8v under the 256-bit forms' names for nibble levels (simd_avx2_impl.h): int32 sums each step.
inline VI vi_nibble_dot(VI acc, VI x, VI y) { return vi_dot_u8v(acc, x, y); }
inline VI vi_add_nibble_dots(VI a, VI b) { return _mm512_add_epi32(a, b); }
inline VI vi_widen_nibble_dots(VI v) { return v; }
inline VI vi_scaled_nibble_dots(VI v, VI scale) { return _mm512_mullo_epi32(v, scale); }
// Signed x times signed y as (x + 128) * y - 128 * y: vi_dot_s8v(vi_signed_offset(y),
// vi_signed_levels(x), y), the two preparations shared by every row / column.
inline VI vi_signed_levels(VI x) { return _mm512_xor_si512(x, _mm512_set1_epi8(static_cast<char>(0x80))); }
inline VI vi_signed_offset(VI y) {
  return _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(static_cast<char>(0x80)), y));
}
inline VI vi_dot_s8v(VI acc, VI x, VI y) { return _mm512_dpbusd_epi32(acc, x, y); }
inline VR vr_set_groups(const float* s) {
  return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_set1_ps(s[0])), _mm256_set1_ps(s[1]), 1);
}
// Each of the register's two rows (eight lanes each) gets its scale: d[2g], d[2g + 1].
inline VR vr_row_groups(__m256 d, int g) {
  const __m512i pick = _mm512_setr_epi32(2 * g, 2 * g, 2 * g, 2 * g, 2 * g, 2 * g, 2 * g, 2 * g, 2 * g + 1, 2 * g + 1, 2 * g + 1, 2 * g + 1,
                                         2 * g + 1, 2 * g + 1, 2 * g + 1, 2 * g + 1);
  return _mm512_permutexvar_ps(pick, _mm512_castps256_ps512(d));
}
// Register g of eight-lane groups over the rows in v's lanes: rows 2g and 2g + 1, each lane
// spread over its row's eight.
inline __m512i spread_rows_index(int g) {
  return _mm512_add_epi32(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1), _mm512_set1_epi32(2 * g));
}
inline VI vi_spread_rows(VI v, int g) { return _mm512_permutexvar_epi32(spread_rows_index(g), v); }
inline VR vr_spread_rows(VR v, int g) { return _mm512_permutexvar_ps(spread_rows_index(g), v); }
// The register's two rows of 16 nibble bytes (qs[0], qs[1]) as 32 levels each in element order:
// each row's bytes in two 128-bit lanes, the second shifted down a nibble.
inline VI vi_nibbles_rows(const uint8_t* const* qs) {
  const __m256i both = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs[0]))),
                                               _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs[1])), 1);
  const __m512i spread = _mm512_shuffle_i64x2(_mm512_castsi256_si512(both), _mm512_castsi256_si512(both), 0x50);
  return _mm512_and_si512(_mm512_srlv_epi64(spread, _mm512_setr_epi64(0, 0, 4, 4, 0, 0, 4, 4)), _mm512_set1_epi8(0x0F));
}
inline VR vr_from_i32(VI v) { return _mm512_cvtepi32_ps(v); }
inline VR vr_load_f16(const uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
// Each of the register's two rows (eight lanes each) gets its half-precision scale from d[0..1].
inline VR vr_rows_f16(const uint16_t* d) {
  return _mm512_cvtph_ps(_mm256_set_m128i(_mm_set1_epi16(static_cast<short>(d[1])), _mm_set1_epi16(static_cast<short>(d[0]))));
}
inline VR vr_set1(float v) { return _mm512_set1_ps(v); }
inline VR vr_zero() { return _mm512_setzero_ps(); }
inline VR vr_mul(VR a, VR b) { return _mm512_mul_ps(a, b); }
inline VR vr_add(VR a, VR b) { return _mm512_add_ps(a, b); }
inline VR vr_fma(VR a, VR b, VR c) { return _mm512_fmadd_ps(a, b, c); }
inline void vr_store(float* p, VR v) { _mm512_storeu_ps(p, v); }

#define ENGINE_SIMD_VNNI 1
#define ENGINE_DPBUSD256 _mm256_dpbusd_epi32
#define ENGINE_TILE_ROWS 4
#define ENGINE_TILE_COLS 6
#define ENGINE_VF_REDUCE4 1
#include "cpu/simd_kernels_impl.h"
#undef ENGINE_SIMD_VNNI
#undef ENGINE_DPBUSD256
#undef ENGINE_TILE_ROWS
#undef ENGINE_TILE_COLS
#undef ENGINE_VF_REDUCE4

}  // namespace

bool dot_tile(DType weight, DotOrder order, const DotTile& t, bool native_bf16) {
  return native_bf16 ? dot_tile_impl<true>(weight, order, t) : dot_tile_impl<false>(weight, order, t);
}

size_t dot_tile_work_size(DType weight, DotOrder order, const DotTile& t) { return dot_tile_work_size_impl(weight, order, t); }

bool quantize_activation(DType act, const float* x, void* dst, int64_t n) { return quantize_activation_impl(act, x, dst, n); }

double exp_shifted(const float* x, float shift, float* y, int64_t n) { return exp_shifted_impl(x, shift, y, n); }

void silu(const float* x, float* y, int64_t n) { silu_impl(x, y, n); }
void soft_max_row(const float* x, const float* m, int64_t live, float scale, float* d, int64_t n, float* w) {
  soft_max_row_impl(x, m, live, scale, d, n, w);
}

}  // namespace engine::cpu::avx512

#pragma GCC pop_options
