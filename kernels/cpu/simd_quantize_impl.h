// Part of the SIMD kernel bodies (simd_kernels_impl.h lists the parts, in order): activation quantizers.

// ---------------------------------------------------------------------------------------------
// Activation quantizers: llama.cpp's SIMD Q8_0 / Q8_1 (x * 127 / amax, half to even) and Q8_K.

inline __m256i round_to_i8x32(const float* x, __m256 id) {
  const __m256i i0 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x), id));
  const __m256i i1 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8), id));
  const __m256i i2 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 16), id));
  const __m256i i3 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 24), id));
  // packs interleave 128-bit halves; the permute puts the 32 bytes back in element order.
  const __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(i0, i1), _mm256_packs_epi32(i2, i3));
  return _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

inline float absmax32(const float* x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 m = _mm256_andnot_ps(sign, _mm256_loadu_ps(x));
  for (int j = 8; j < 32; j += 8) m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + j)));
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

// One block: its scale d (already in half precision as dh) and inverse id.
template <typename Block>
void quantize_q8_block(const float* x, Block& y, float d, uint16_t dh, float id) {
  y.d = dh;
  const __m256i q = round_to_i8x32(x, _mm256_set1_ps(id));
  store256(reinterpret_cast<uint8_t*>(y.qs), q);
  if constexpr (std::is_same_v<Block, BlockQ8_1>) {
    const int sum = hsum_i32(_mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), q), _mm256_set1_epi16(1)));
    y.s = fp32_to_fp16(static_cast<float>(sum) * d);
  }
}

// Eight blocks at a time share the divisions and the conversion of their scales to half
// precision (F16C's rounding is fp32_to_fp16's): a block at a time, those took most of its time.
template <typename Block>
void quantize_q8_simd(const float* x, Block* y, int64_t nb) {
  int64_t i = 0;
  for (; i + 8 <= nb; i += 8, x += 8 * kQK) {
    alignas(32) float amax[8], d[8], id[8];
    alignas(16) uint16_t dh[8];
    for (int b = 0; b < 8; ++b) amax[b] = absmax32(x + b * kQK);
    const __m256 a = _mm256_load_ps(amax), dv = _mm256_div_ps(a, _mm256_set1_ps(127.0f));
    const __m256 zero = _mm256_cmp_ps(dv, _mm256_setzero_ps(), _CMP_EQ_OQ);
    _mm256_store_ps(d, dv);
    _mm256_store_ps(id, _mm256_andnot_ps(zero, _mm256_div_ps(_mm256_set1_ps(127.0f), a)));
    _mm_store_si128(reinterpret_cast<__m128i*>(dh), _mm256_cvtps_ph(dv, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (int b = 0; b < 8; ++b) quantize_q8_block(x + b * kQK, y[i + b], d[b], dh[b], id[b]);
  }
  for (; i < nb; ++i, x += kQK) {
    const float amax = absmax32(x);
    const float d = amax / 127;
    quantize_q8_block(x, y[i], d, fp32_to_fp16(d), d == 0 ? 0.0f : 127.0f / amax);
  }
}

void quantize_q8_K_simd(const float* x, BlockQ8_K* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK_K) {
    float amax = 0;
    for (int j = 0; j < kQK_K; j += kQK) {
      const float m = absmax32(x + j);
      amax = m > amax ? m : amax;
    }
    if (amax == 0) {
      std::memset(&y[i], 0, sizeof(BlockQ8_K));
      continue;
    }
    // The first element of largest magnitude gives the sign, as in the scalar search.
    int first = 0;
    const __m256 target = _mm256_set1_ps(amax), sign = _mm256_set1_ps(-0.0f);
    for (int j = 0; j < kQK_K; j += 8) {
      const int mask = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + j)), target, _CMP_EQ_OQ));
      if (mask) {
        first = j + __builtin_ctz(static_cast<unsigned>(mask));
        break;
      }
    }
    const float iscale = -127.f / x[first];
    const __m256 is = _mm256_set1_ps(iscale);
    for (int j = 0; j < kQK_K; j += kQK) {
      const __m256i q = _mm256_min_epi8(round_to_i8x32(x + j, is), _mm256_set1_epi8(127));
      store256(reinterpret_cast<uint8_t*>(y[i].qs + j), q);
      // Group sums of 16: bytes to int16 pairs, then pairs within each 8-byte half.
      const __m256i pairs = _mm256_maddubs_epi16(_mm256_set1_epi8(1), q);
      const __m256i quads = _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));  // lane L: bytes 4L..4L+3
      alignas(32) int32_t l[8];
      _mm256_store_si256(reinterpret_cast<__m256i*>(l), quads);
      y[i].bsums[j / 16] = static_cast<int16_t>(l[0] + l[1] + l[2] + l[3]);
      y[i].bsums[j / 16 + 1] = static_cast<int16_t>(l[4] + l[5] + l[6] + l[7]);
    }
    y[i].d = 1 / iscale;
  }
}

// F16 activations: the F16C conversion, bit-identical to fp32_to_fp16 (NaNs quieted alike).
void convert_f16_simd(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + kVecLanes <= n; i += kVecLanes) vf_store_f16(y + i, vf_load_f32(x + i));
  for (; i < n; ++i) y[i] = fp32_to_fp16(x[i]);
}

bool quantize_activation_impl(DType act, const float* x, void* dst, int64_t n) {
  switch (act) {
    case DType::F16: return convert_f16_simd(x, static_cast<uint16_t*>(dst), n), true;
    case DType::Q8_0: return quantize_q8_simd(x, static_cast<BlockQ8_0*>(dst), n / kQK), true;
    case DType::Q8_1: return quantize_q8_simd(x, static_cast<BlockQ8_1*>(dst), n / kQK), true;
    case DType::Q8_K: return quantize_q8_K_simd(x, static_cast<BlockQ8_K*>(dst), n / kQK_K), true;
    default: return false;
  }
}
