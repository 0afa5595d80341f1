// The 256-bit SIMD kernels (AVX2 + FMA + F16C; the 16-lane float orders run on pairs of 8-lane
// registers, the bf16 dot product is emulated), for simd_avx2.cpp and its integer dot-product
// twins simd_avx2_vnni.cpp and simd_avx2_vnni_evex.cpp. Their includer opens the namespace and
// defines ENGINE_SIMD_VNNI; where it is 1, also ENGINE_DPBUSD256 and ENGINE_DPWSSD256 (the
// 256-bit u8 x s8 and int16 dot-product intrinsics of its encoding). No include guard.

namespace {

struct VF {
  __m256 lo, hi;  // lanes 0..7 and 8..15
};

inline VF vf_zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
inline VF vf_set1(float v) { return {_mm256_set1_ps(v), _mm256_set1_ps(v)}; }
inline VF vf_load_f32(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
inline VF vf_load_f16(const uint16_t* p) {
  return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
          _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8)))};
}
// The first `count` (0..16) elements at p, zeros after them; nothing past them is read.
inline VF vf_load_first(const float* p, int64_t count) {
  float v[16] = {};
  std::memcpy(v, p, static_cast<size_t>(count) * sizeof(float));
  return vf_load_f32(v);
}
inline VF vf_load_first(const uint16_t* p, int64_t count) {
  uint16_t v[16] = {};
  std::memcpy(v, p, static_cast<size_t>(count) * sizeof(uint16_t));
  return vf_load_f16(v);
}
inline VF vf_add(VF a, VF b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
inline VF vf_sub(VF a, VF b) { return {_mm256_sub_ps(a.lo, b.lo), _mm256_sub_ps(a.hi, b.hi)}; }
inline VF vf_mul(VF a, VF b) { return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)}; }
inline VF vf_div(VF a, VF b) { return {_mm256_div_ps(a.lo, b.lo), _mm256_div_ps(a.hi, b.hi)}; }
// max(a, b) per lane, b where either is NaN or both are zeros: std::max(b, a), as the scalar code writes it.
inline VF vf_max(VF a, VF b) { return {_mm256_max_ps(a.lo, b.lo), _mm256_max_ps(a.hi, b.hi)}; }
inline VF vf_fma(VF a, VF b, VF c) { return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)}; }
inline void vf_store(float* p, VF v) {
  _mm256_storeu_ps(p, v.lo);
  _mm256_storeu_ps(p + 8, v.hi);
}
inline __m256 vf_fold8(VF v) { return _mm256_add_ps(v.hi, v.lo); }  // lanes i + (i + 8)
// To half precision, rounding to nearest even (as fp32_to_fp16).
inline void vf_store_f16(uint16_t* p, VF v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v.lo, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 8), _mm256_cvtps_ph(v.hi, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// 2^k for integral k in [-126, 127].
inline __m256 pow2_8(__m256i k) { return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23)); }

// j * 2^n as two exact power-of-two products (n integral, |n| <= 192), so that only the last
// rounds, as ldexp does; 0 or inf where |n| > 192.
inline __m256 exp_scale8(__m256 j, __m256 n) {
  const __m256i ni = _mm256_cvttps_epi32(n);
  const __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
  const __m256 r = _mm256_mul_ps(_mm256_mul_ps(j, pow2_8(n1)), pow2_8(n2));
  const __m256 abs_n = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), n);
  const __m256 big = _mm256_cmp_ps(abs_n, _mm256_set1_ps(192.0f), _CMP_GT_OQ);
  const __m256 positive = _mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_GT_OQ);
  const __m256 limit = _mm256_and_ps(positive, _mm256_set1_ps(__builtin_inff()));
  return _mm256_blendv_ps(r, limit, big);
}

inline VF vf_exp_scale(VF j, VF n) { return {exp_scale8(j.lo, n.lo), exp_scale8(j.hi, n.hi)}; }

// The odd / even elements of 16 bf16 pairs as floats.
inline __m256 bf16_odd8(__m256i x) { return _mm256_castsi256_ps(_mm256_and_si256(x, _mm256_set1_epi32(static_cast<int32_t>(0xffff0000u)))); }
inline __m256 bf16_even8(__m256i x) { return _mm256_castsi256_ps(_mm256_slli_epi32(x, 16)); }

// One AVX512_BF16 dot-product step, emulated on eight lanes (16 bf16 pairs): lane j adds pair
// 2j+1's product, then pair 2j's, each an FMA (a bf16 product is exact in float); the caller's
// Bf16Denormals scope flushes denormal inputs and results as the instruction does.
inline __m256 dpbf16_8(__m256 acc, const uint16_t* w, const uint16_t* a) {
  const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
  const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
  return _mm256_fmadd_ps(bf16_even8(wv), bf16_even8(av), _mm256_fmadd_ps(bf16_odd8(wv), bf16_odd8(av), acc));
}

template <bool Native>
inline VF dpbf16(VF acc, const uint16_t* w, const uint16_t* a) {
  static_assert(!Native, "AVX2 has no bf16 dot-product instruction");
  return {dpbf16_8(acc.lo, w, a), dpbf16_8(acc.hi, w + 16, a + 16)};
}

// Row lanes: one 32-bit lane per weight row, 8 rows per register (integer and float).
using VI = __m256i;
using VR = __m256;
constexpr int kRowLanes = 8;

// q[j] lane r = dword j of the 16 bytes at rows[r] (a 4 x 4 dword transpose per 128-bit lane).
inline void load_row_quads(const uint8_t* const* rows, VI (&q)[4]) {
  VI x[4];
  for (int k = 0; k < 4; ++k)
    x[k] = _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(rows[k + 4]), reinterpret_cast<const __m128i*>(rows[k]));
  const VI t0 = _mm256_unpacklo_epi32(x[0], x[1]), t1 = _mm256_unpackhi_epi32(x[0], x[1]);
  const VI t2 = _mm256_unpacklo_epi32(x[2], x[3]), t3 = _mm256_unpackhi_epi32(x[2], x[3]);
  q[0] = _mm256_unpacklo_epi64(t0, t2);
  q[1] = _mm256_unpackhi_epi64(t0, t2);
  q[2] = _mm256_unpacklo_epi64(t1, t3);
  q[3] = _mm256_unpackhi_epi64(t1, t3);
}
inline VI vi_load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline void vi_store(void* p, VI v) { _mm256_storeu_si256(static_cast<__m256i*>(p), v); }
// 32 signed bytes widened to int16 pairs: out[h] lane L = elements 4L + 2h and 4L + 2h + 1.
inline void q8_pairs(const int8_t* q, __m256i* out) {
  const __m256i split = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  const __m256i lo = _mm256_permutevar8x32_epi32(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q))), split);
  const __m256i hi = _mm256_permutevar8x32_epi32(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16))), split);
  _mm256_storeu_si256(out, _mm256_permute2x128_si256(lo, hi, 0x20));
  _mm256_storeu_si256(out + 1, _mm256_permute2x128_si256(lo, hi, 0x31));
}
// The row's 16 signed bytes at p widened to int16.
inline VI vi_widen_i8(const void* p) { return _mm256_cvtepi8_epi16(_mm_loadu_si128(static_cast<const __m128i*>(p))); }
// The same from a register: each row's 16 signed bytes in its 128-bit lane of v.
inline VI vi_widen_rows_i8(__m256i v) { return _mm256_cvtepi8_epi16(_mm256_castsi256_si128(v)); }
// int16 products of u8 x with s8 y, adjacent pairs summed (no saturation for the levels used).
inline VI vi_maddubs(VI x, VI y) { return _mm256_maddubs_epi16(x, y); }
inline VI vi_madd16(VI a, VI b) { return _mm256_madd_epi16(a, b); }
inline VI vi_sub(VI a, VI b) { return _mm256_sub_epi32(a, b); }
inline VI vi_sub16(VI a, VI b) { return _mm256_sub_epi16(a, b); }
// The row's 128-bit half n in both halves.
template <int N>
inline VI vi_row_half(VI v) { return _mm256_broadcastsi128_si256(N == 0 ? _mm256_castsi256_si128(v) : _mm256_extracti128_si256(v, 1)); }
// Bytes picked within every 128-bit lane.
inline VI vi_pick_bytes(VI v, __m256i pick) { return _mm256_shuffle_epi8(v, pick); }
inline VI vi_set1(int32_t v) { return _mm256_set1_epi32(v); }
inline VI vi_low_nibbles(VI v) { return _mm256_and_si256(v, _mm256_set1_epi8(0x0F)); }
inline VI vi_high_nibbles(VI v) { return _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0F)); }
// Sixteen times the high nibbles, in one operation instead of two (a shift and a mask).
inline VI vi_high_nibbles_x16(VI v) { return _mm256_and_si256(v, _mm256_set1_epi8(static_cast<char>(0xF0))); }
// acc + per lane the dot of four unsigned bytes of x (< 128 without VNNI) with four signed bytes:
// those at y4, or y's.
inline VI vi_dot_u8v(VI acc, VI x, VI y) {
#if ENGINE_SIMD_VNNI
  return ENGINE_DPBUSD256(acc, x, y);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(x, y), _mm256_set1_epi16(1)));
#endif
}
inline VI vi_dot_u8(VI acc, VI x, const int8_t* y4) { return vi_dot_u8v(acc, x, _mm256_broadcastd_epi32(_mm_loadu_si32(y4))); }
// Dots of unsigned nibbles x (< 16) with signed bytes y, at most eight summed (vi_nibble_dot,
// vi_add_nibble_dots) before vi_widen_nibble_dots makes them per-lane int32 sums. Without VNNI
// the byte-pair sums add up in 16 bits (|sum| <= 8 * 2 * 15 * 128 < 2^15) and widen once, where
// vi_dot_u8v widens every step: a third fewer operations on the ports both run on.
#if ENGINE_SIMD_VNNI
inline VI vi_nibble_dot(VI acc, VI x, VI y) { return vi_dot_u8v(acc, x, y); }
inline VI vi_add_nibble_dots(VI a, VI b) { return _mm256_add_epi32(a, b); }
inline VI vi_widen_nibble_dots(VI v) { return v; }
inline VI vi_scaled_nibble_dots(VI v, VI scale) { return _mm256_mullo_epi32(v, scale); }
#else
inline VI vi_nibble_dot(VI acc, VI x, VI y) { return _mm256_add_epi16(acc, _mm256_maddubs_epi16(x, y)); }
inline VI vi_add_nibble_dots(VI a, VI b) { return _mm256_add_epi16(a, b); }
inline VI vi_widen_nibble_dots(VI v) { return _mm256_madd_epi16(v, _mm256_set1_epi16(1)); }
#endif
#if !ENGINE_SIMD_VNNI
// vi_widen_nibble_dots(v) times scale (lanes below 2^15): the widening multiply-add takes the
// scale, copied to both int16 halves, instead of ones, a 32-bit multiply fewer.
inline VI vi_scaled_nibble_dots(VI v, VI scale) {
  const VI low_word_twice = _mm256_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13, 0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13);
  return _mm256_madd_epi16(v, _mm256_shuffle_epi8(scale, low_word_twice));
}
#endif
inline VI vi_add(VI a, VI b) { return _mm256_add_epi32(a, b); }
inline VI vi_mul16(VI a, VI b) { return _mm256_mullo_epi16(a, b); }  // low 16 bits of int16 products
// acc + per lane the dot of the two int16 pairs.
#if ENGINE_SIMD_VNNI
inline VI vi_dot16(VI acc, VI a, VI b) { return ENGINE_DPWSSD256(acc, a, b); }
#else
inline VI vi_dot16(VI acc, VI a, VI b) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)); }
#endif
inline VI vi_mul(VI a, VI b) { return _mm256_mullo_epi32(a, b); }
inline VI vi_shift_right(VI v, int n) { return _mm256_srai_epi32(v, n); }  // arithmetic
// Lanes whose high 16 bits are zero times the int16 y (exact 32-bit products).
inline VI vi_mul_u16(VI x, int16_t y) { return _mm256_madd_epi16(x, _mm256_set1_epi32(static_cast<uint16_t>(y))); }
inline VI vi_bits(VI v, int shift, int32_t mask) { return _mm256_and_si256(_mm256_srli_epi32(v, shift), _mm256_set1_epi32(mask)); }
inline VI vi_or_shifted(VI a, VI b, int shift) { return _mm256_or_si256(a, _mm256_slli_epi32(b, shift)); }
inline VI vi_or(VI a, VI b) { return _mm256_or_si256(a, b); }
inline VI vi_sub8(VI a, VI b) { return _mm256_sub_epi8(a, b); }
// Per byte b of each 32-bit lane, 0x10 where bit 4j + b of that lane's qh word is set:
// the fifth bits of a legacy block's elements 4j .. 4j + 3, each lane one row.
inline VI vi_fifth_bits(VI qh, int j) {
  const char byte = static_cast<char>(j / 2);
  const VI spread = _mm256_shuffle_epi8(qh, _mm256_setr_epi8(byte, byte, byte, byte, byte + 4, byte + 4, byte + 4, byte + 4, byte + 8,
                                                              byte + 8, byte + 8, byte + 8, byte + 12, byte + 12, byte + 12, byte + 12,
                                                              byte, byte, byte, byte, byte + 4, byte + 4, byte + 4, byte + 4, byte + 8,
                                                              byte + 8, byte + 8, byte + 8, byte + 12, byte + 12, byte + 12, byte + 12));
  const int shift = 4 * (j % 2);
  const VI bits = _mm256_set1_epi32(static_cast<int32_t>(0x08040201u << shift));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bits), bits), _mm256_set1_epi8(0x10));
}
// Bits `from` .. `from` + width - 1 of each byte of v moved to bits `to` .., every other bit cleared.
inline VI vi_move_bits(VI v, int from, int to, int width = 1) {
  const VI moved = to == from ? v : to > from ? _mm256_slli_epi32(v, to - from) : _mm256_srli_epi32(v, from - to);
  return _mm256_and_si256(moved, _mm256_set1_epi8(static_cast<char>(((1 << width) - 1) << to)));
}
// Per byte: the low (or high) nibble of v, or-ed with bits whose low four bits are clear.
inline VI vi_low_nibble_or(VI v, VI bits) { return _mm256_or_si256(_mm256_and_si256(v, _mm256_set1_epi8(0x0F)), bits); }
inline VI vi_high_nibble_or(VI v, VI bits) { return vi_low_nibble_or(_mm256_srli_epi16(v, 4), bits); }
// Per 32-bit lane: the low 16 bits of lo, then those of hi (lanes holding int16 values).
inline VI vi_pair_low16(VI lo, VI hi) { return _mm256_blend_epi16(lo, _mm256_slli_epi32(hi, 16), 0xAA); }
inline VI vi_shift_left(VI v, int n) { return _mm256_slli_epi32(v, n); }
// The halves in the low / high 16 bits of each lane, as floats.
inline VR vr_half_low(VI v) {
  const VI x = _mm256_and_si256(v, _mm256_set1_epi32(0xFFFF));
  return _mm256_cvtph_ps(_mm_packus_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1)));
}
inline VR vr_half_high(VI v) {
  const VI x = _mm256_srli_epi32(v, 16);
  return _mm256_cvtph_ps(_mm_packus_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1)));
}
// Eight-lane groups: each register holds the eight lanes of kRowLanes / 8 = 1 row.
inline VI vi_join(const __m256i* rows) { return rows[0]; }
inline VI vi_repeat(__m256i v) { return v; }
// 32 bytes (eight dwords) into the low lanes, and dword j (< 8) of such a register in every lane.
inline VI vi_dwords32(const int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline VI vi_dword(VI v, int j) { return _mm256_permutevar8x32_epi32(v, _mm256_set1_epi32(j)); }
// The dword at p in every lane, a broadcast load (no shuffle port).
inline VI vi_dword_at(const int8_t* p) { return _mm256_broadcastd_epi32(_mm_loadu_si32(p)); }
#if ENGINE_SIMD_VNNI
// Signed x times signed y as (x + 128) * y - 128 * y: vi_dot_s8v(vi_signed_offset(y),
// vi_signed_levels(x), y), the two preparations shared by every row / column.
inline VI vi_signed_levels(VI x) { return _mm256_xor_si256(x, _mm256_set1_epi8(static_cast<char>(0x80))); }
inline VI vi_signed_offset(VI y) {
  return _mm256_sub_epi32(_mm256_setzero_si256(), ENGINE_DPBUSD256(_mm256_setzero_si256(), _mm256_set1_epi8(static_cast<char>(0x80)), y));
}
inline VI vi_dot_s8v(VI acc, VI x, VI y) { return ENGINE_DPBUSD256(acc, x, y); }
#else
// Signed x times signed y (|x| * y negated where x < 0; the byte-pair sums would overflow with
// an offset): the preparations are identity / zero.
inline VI vi_signed_levels(VI x) { return x; }
inline VI vi_signed_offset(VI) { return _mm256_setzero_si256(); }
inline VI vi_dot_s8v(VI acc, VI x, VI y) { return vi_dot_u8v(acc, _mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x)); }
#endif
inline VR vr_set_groups(const float* s) { return _mm256_set1_ps(s[0]); }
// Each of the register's rows (one) gets d[g], the row its register g holds.
inline VR vr_row_groups(__m256 d, int g) { return _mm256_permutevar8x32_ps(d, _mm256_set1_epi32(g)); }
// Register g of eight-lane groups over the rows in v's lanes: row g, its lane spread over eight.
inline VI vi_spread_rows(VI v, int g) { return _mm256_permutevar8x32_epi32(v, _mm256_set1_epi32(g)); }
inline VR vr_spread_rows(VR v, int g) { return _mm256_permutevar8x32_ps(v, _mm256_set1_epi32(g)); }
// The register's row (one) of 16 nibble bytes at qs[0] as 32 levels in element order.
inline VI vi_nibbles_rows(const uint8_t* const* qs) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs[0]));
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(b, 4), b), _mm256_set1_epi8(0x0F));
}
inline VR vr_from_i32(VI v) { return _mm256_cvtepi32_ps(v); }
inline VR vr_load_f16(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
// The register's one row (eight lanes) gets its half-precision scale d[0].
inline VR vr_rows_f16(const uint16_t* d) { return _mm256_cvtph_ps(_mm_set1_epi16(static_cast<short>(d[0]))); }
inline VR vr_set1(float v) { return _mm256_set1_ps(v); }
inline VR vr_zero() { return _mm256_setzero_ps(); }
inline VR vr_mul(VR a, VR b) { return _mm256_mul_ps(a, b); }
inline VR vr_add(VR a, VR b) { return _mm256_add_ps(a, b); }
inline VR vr_fma(VR a, VR b, VR c) { return _mm256_fmadd_ps(a, b, c); }
inline void vr_store(float* p, VR v) { _mm256_storeu_ps(p, v); }

// 3 x 2 outputs of two-register accumulators: 12 of the 16 registers (2 x 4 took all 16 and spilled).
#define ENGINE_TILE_ROWS 3
#define ENGINE_TILE_COLS 2
#include "cpu/simd_kernels_impl.h"
#undef ENGINE_TILE_ROWS
#undef ENGINE_TILE_COLS

}  // namespace

bool dot_tile(DType weight, DotOrder order, const DotTile& t) { return dot_tile_impl<false>(weight, order, t); }

size_t dot_tile_work_size(DType weight, DotOrder order, const DotTile& t) { return dot_tile_work_size_impl(weight, order, t); }

#if !ENGINE_SIMD_VNNI  // the ops without integer dot products: the same code in every 256-bit form
bool quantize_activation(DType act, const float* x, void* dst, int64_t n) { return quantize_activation_impl(act, x, dst, n); }

double exp_shifted(const float* x, float shift, float* y, int64_t n) { return exp_shifted_impl(x, shift, y, n); }

void silu(const float* x, float* y, int64_t n) { silu_impl(x, y, n); }
void soft_max_row(const float* x, const float* m, int64_t live, float scale, float* d, int64_t n, float* w) {
  soft_max_row_impl(x, m, live, scale, d, n, w);
}
#endif
