// Part of the SIMD kernel bodies (simd_kernels_impl.h lists the parts, in order): integer helpers.

// ---------------------------------------------------------------------------------------------
// Integer helpers (256-bit).

inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// acc + eight int32 lanes, lane L = sum of x*y over bytes 4L..4L+3; x unsigned, y signed.
inline __m256i dot_u8_lanes(__m256i acc, __m256i x, __m256i y) {
#if ENGINE_SIMD_VNNI
  return ENGINE_DPBUSD256(acc, x, y);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(x, y), _mm256_set1_epi16(1)));
#endif
}

// Eight int32 lanes of sum(scale * x * y) over bytes 4L..4L+3; x unsigned (< 64), scale an
// int16 per byte pair (bytes 0..15 take the low half's scale, 16..31 the high half's).
inline __m256i dot_u8_scaled(__m256i x, __m256i y, __m256i scale16) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(x, y), scale16);
}

// Lane r of the result = sum of the eight lanes of v[r].
inline __m256i sum_rows8(const __m256i* v) {
  const __m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
  const __m256i b = _mm256_hadd_epi32(_mm256_hadd_epi32(v[4], v[5]), _mm256_hadd_epi32(v[6], v[7]));
  return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31));
}

inline int32_t hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
  return _mm_cvtsi128_si32(s);
}


// The 32 unsigned nibbles of 16 bytes in element order: low nibbles, then high nibbles.
inline __m256i nibbles32(const uint8_t* qs) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i m = _mm_set1_epi8(0x0F);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(b, 4), m), _mm_and_si128(b, m));
}

// 32 bits of qh spread to one byte each (0 or 0x10 = the fifth bit of a 5-bit level).
inline __m256i fifth_bits(const uint8_t* qh_bytes) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  const __m256i shuf = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0);
  const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int32_t>(qh)), shuf);
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit), _mm256_set1_epi8(0x10));
}

// Exact for every finite half, as fp16_to_fp32.
inline float half(uint16_t h) { return _cvtsh_ss(h); }
