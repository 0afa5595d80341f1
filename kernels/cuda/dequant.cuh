#pragma once
// Per-element weight accessors for every weight dtype, shared by CUDA kernels and host-side tests.
#include <cstdint>
#include <cstring>

#include "engine/dtype.h"

#ifdef __CUDACC__
#define ENGINE_HD __host__ __device__ __forceinline__
#else
#define ENGINE_HD inline
#endif

// Asks nvcc to unroll the next loop (its trip count is a compile-time constant); nothing on the host,
// where an unknown pragma would warn.
#ifdef __CUDA_ARCH__
#define ENGINE_UNROLL _Pragma("unroll")
#else
#define ENGINE_UNROLL
#endif

namespace engine::cuda {

namespace detail {

// Reinterprets bits as a float, with the intrinsic on the device and memcpy on the host.
ENGINE_HD float float_of(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

// The little-endian 16 bits at p, from byte loads (rows may be only 2-byte aligned).
ENGINE_HD uint16_t u16_at(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

// The K-quant element (d * scale) * q - dmin * min, in dequantize_k's order.
ENGINE_HD float k_elem(float d, int scale, int q, float dmin, int min) {
  return d * static_cast<float>(scale) * static_cast<float>(q) - dmin * static_cast<float>(min);
}

// Six-bit scale and min of 32-element sub-block sb in the 12-byte Q4_K/Q5_K field (get_scale_min_k4).
ENGINE_HD void scale_min_k4(const uint8_t* q, int sb, int& scale, int& min) {
  if (sb < 4) {
    scale = q[sb] & 63;
    min = q[sb + 4] & 63;
  } else {
    scale = (q[sb + 4] & 15) | ((q[sb - 4] >> 6) << 4);
    min = (q[sb + 4] >> 4) | ((q[sb] >> 6) << 4);
  }
}

}  // namespace detail

// IEEE half bits -> float, without cuda_fp16.h (host code uses it too). Mirrors fp16_to_fp32 bit
// for bit, nan payloads included.
ENGINE_HD float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24 is exact in float
    const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return (h & 0x8000) ? -v : v;
  }
  if (exp == 31) return detail::float_of(sign | 0x7f800000 | (mant << 13));
  return detail::float_of(sign | ((exp + 112) << 23) | (mant << 13));
}

// Every product below that feeds an addition is exact (an f16's 11-bit significand times an
// integer below 2^11 fits a float's 24 bits), so nvcc contracting it into an fma changes no result.

// Element i (>= 0) of a weight row of dtype T that starts at `row` (the GGUF block layout; rows
// start at block boundaries). kBlockElems: elements per block; kBlockBytes: bytes per block.
// group(row, g, out) writes elements kGroup * g .. kGroup * g + kGroup - 1 to out[0 .. kGroup - 1],
// equal to at()'s bit for bit (the same float operations in the same order), decoding the group's
// scales once and loading each of its bytes once. kGroup: 32 for the quantized dtypes (a legacy
// block, or a 32-element sub-block of a K-quant super-block, which lies in super-block g / 8 as
// sub-block g % 8), 8 for F32, F16 and BF16; it divides kBlockElems or is a multiple of it.
template <DType T>
struct Weight;

// Assembled from bytes, as rows may be only 2-byte aligned.
template <>
struct Weight<DType::F32> {
  static constexpr int kBlockElems = 1;
  static constexpr int kBlockBytes = 4;
  ENGINE_HD static float at(const uint8_t* row, int64_t i) {
    const uint8_t* p = row + 4 * i;
    return detail::float_of(detail::u16_at(p) | static_cast<uint32_t>(detail::u16_at(p + 2)) << 16);
  }
  static constexpr int kGroup = 8;
  ENGINE_HD static void group(const uint8_t* row, int64_t g, float* out) {
    const uint8_t* p = row + 4 * kGroup * g;
    ENGINE_UNROLL
    for (int e = 0; e < kGroup; ++e)
      out[e] = detail::float_of(detail::u16_at(p + 4 * e) | static_cast<uint32_t>(detail::u16_at(p + 4 * e + 2)) << 16);
  }
};

template <>
struct Weight<DType::F16> {
  static constexpr int kBlockElems = 1;
  static constexpr int kBlockBytes = 2;
  ENGINE_HD static float at(const uint8_t* row, int64_t i) { return half_to_float(detail::u16_at(row + 2 * i)); }
  static constexpr int kGroup = 8;
  ENGINE_HD static void group(const uint8_t* row, int64_t g, float* out) {
    const uint8_t* p = row + 2 * kGroup * g;
    ENGINE_UNROLL
    for (int e = 0; e < kGroup; ++e) out[e] = half_to_float(detail::u16_at(p + 2 * e));
  }
};

// The upper 16 bits of an f32.
template <>
struct Weight<DType::BF16> {
  static constexpr int kBlockElems = 1;
  static constexpr int kBlockBytes = 2;
  ENGINE_HD static float at(const uint8_t* row, int64_t i) {
    return detail::float_of(static_cast<uint32_t>(detail::u16_at(row + 2 * i)) << 16);
  }
  static constexpr int kGroup = 8;
  ENGINE_HD static void group(const uint8_t* row, int64_t g, float* out) {
    const uint8_t* p = row + 2 * kGroup * g;
    ENGINE_UNROLL
    for (int e = 0; e < kGroup; ++e) out[e] = detail::float_of(static_cast<uint32_t>(detail::u16_at(p + 2 * e)) << 16);
  }
};

// {f16 d; u8 qs[16]}: element j is (nibble - 8) * d, low nibbles first.
template <>
struct Weight<DType::Q4_0> {
  static constexpr int kBlockElems = 32;
  static constexpr int kBlockBytes = 18;
  ENGINE_HD static float at(const uint8_t* row, int64_t i) {
    const uint8_t* b = row + i / kBlockElems * kBlockBytes;
    const int j = static_cast<int>(i % kBlockElems);
    const int q = (b[2 + j % 16] >> (4 * (j / 16))) & 15;
    return static_cast<float>(q - 8) * half_to_float(detail::u16_at(b));
  }
  static constexpr int kGroup = 32;
  ENGINE_HD static void group(const uint8_t* row, int64_t g, float* out) {
    const uint8_t* b = row + g * kBlockBytes;
    const float d = half_to_float(detail::u16_at(b));
    ENGINE_UNROLL
    for (int l = 0; l < 16; ++l) {
      const int q = b[2 + l];
      out[l] = static_cast<float>((q & 15) - 8) * d;
      out[l + 16] = static_cast<float>((q >> 4) - 8) * d;
    }
  }
};

// {f16 d, m; u8 qs[16]}: element j is nibble * d + m, low nibbles first.
template <>
struct Weight<DType::Q4_1> {
  static constexpr int kBlockElems = 32;
  static constexpr int kBlockBytes = 20;
  ENGINE_HD static float at(const uint8_t* row, int64_t i) {
    const uint8_t* b = row + i / kBlockElems * kBlockBytes;
    const int j = static_cast<int>(i % kBlockElems);
    const int q = (b[4 + j % 16] >> (4 * (j / 16))) & 15;
    const float d = half_to_float(detail::u16_at(b));
    return static_cast<float>(q) * d + half_to_float(detail::u16_at(b + 2));
  }
  static constexpr int kGroup = 32;
  ENGINE_HD static void group(const uint8_t* row, int64_t g, float* out) {
    const uint8_t* b = row + g * kBlockBytes;
    const float d = half_to_float(detail::u16_at(b));
    const float m = half_to_float(detail::u16_at(b + 2));
    ENGINE_UNROLL
    for (int l = 0; l < 16; ++l) {
      const int q = b[4 + l];
      out[l] = static_cast<float>(q & 15) * d + m;
      out[l + 16] = static_cast<float>(q >> 4) * d + m;
    }
  }
};

// {f16 d; u8 qh[4]; u8 qs[16]}: element j is ((bit j of qh << 4 | nibble) - 16) * d, low nibbles first.
template <>
struct Weight<DType::Q5_0> {
  static constexpr int kBlockElems = 32;
  static constexpr int kBlockBytes = 22;
  ENGINE_HD static float at(const uint8_t* row, int64_t i) {
    const uint8_t* b = row + i / kBlockElems * kBlockBytes;
    const int j = static_cast<int>(i % kBlockElems);
    const int lo = (b[6 + j % 16] >> (4 * (j / 16))) & 15;
    const int hi = (b[2 + j / 8] >> (j % 8)) & 1;
    return static_cast<float>((lo | hi << 4) - 16) * half_to_float(detail::u16_at(b));
  }
  static constexpr int kGroup = 32;
  ENGINE_HD static void group(const uint8_t* row, int64_t g, float* out) {
    const uint8_t* b = row + g * kBlockBytes;
    const float d = half_to_float(detail::u16_at(b));
    const uint32_t qh = b[2] | b[3] << 8 | b[4] << 16 | static_cast<uint32_t>(b[5]) << 24;
    ENGINE_UNROLL
    for (int l = 0; l < 16; ++l) {
      const int q = b[6 + l];
      out[l] = static_cast<float>(((q & 15) | static_cast<int>((qh >> l) & 1) << 4) - 16) * d;
      out[l + 16] = static_cast<float>(((q >> 4) | static_cast<int>((qh >> (l + 16)) & 1) << 4) - 16) * d;
    }
  }
};

// {f16 d, m; u8 qh[4]; u8 qs[16]}: element j is (bit j of qh << 4 | nibble) * d + m, low nibbles first.
template <>
struct Weight<DType::Q5_1> {
  static constexpr int kBlockElems = 32;
  static constexpr int kBlockBytes = 24;
  ENGINE_HD static float at(const uint8_t* row, int64_t i) {
    const uint8_t* b = row + i / kBlockElems * kBlockBytes;
    const int j = static_cast<int>(i % kBlockElems);
    const int lo = (b[8 + j % 16] >> (4 * (j / 16))) & 15;
    const int hi = (b[4 + j / 8] >> (j % 8)) & 1;
    const float d = half_to_float(detail::u16_at(b));
    return static_cast<float>(lo | hi << 4) * d + half_to_float(detail::u16_at(b + 2));
  }
  static constexpr int kGroup = 32;
  ENGINE_HD static void group(const uint8_t* row, int64_t g, float* out) {
    const uint8_t* b = row + g * kBlockBytes;
    const float d = half_to_float(detail::u16_at(b));
    const float m = half_to_float(detail::u16_at(b + 2));
    const uint32_t qh = b[4] | b[5] << 8 | b[6] << 16 | static_cast<uint32_t>(b[7]) << 24;
    ENGINE_UNROLL
    for (int l = 0; l < 16; ++l) {
      const int q = b[8 + l];
      out[l] = static_cast<float>((q & 15) | static_cast<int>((qh >> l) & 1) << 4) * d + m;
      out[l + 16] = static_cast<float>((q >> 4) | static_cast<int>((qh >> (l + 16)) & 1) << 4) * d + m;
    }
  }
};

// {f16 d; i8 qs[32]}: element j is qs[j] * d.
template <>
struct Weight<DType::Q8_0> {
  static constexpr int kBlockElems = 32;
  static constexpr int kBlockBytes = 34;
  ENGINE_HD static float at(const uint8_t* row, int64_t i) {
    const uint8_t* b = row + i / kBlockElems * kBlockBytes;
    const int j = static_cast<int>(i % kBlockElems);
    return static_cast<float>(static_cast<int8_t>(b[2 + j])) * half_to_float(detail::u16_at(b));
  }
  static constexpr int kGroup = 32;
  ENGINE_HD static void group(const uint8_t* row, int64_t g, float* out) {
    const uint8_t* b = row + g * kBlockBytes;
    const float d = half_to_float(detail::u16_at(b));
    ENGINE_UNROLL
    for (int l = 0; l < 32; ++l) out[l] = static_cast<float>(static_cast<int8_t>(b[2 + l])) * d;
  }
};

// {u8 scales[16] (scale | min << 4); u8 qs[64]; f16 d, dmin}: element 128n + 32k + l is bits 2k of qs[32n + l].
template <>
struct Weight<DType::Q2_K> {
  static constexpr int kBlockElems = 256;
  static constexpr int kBlockBytes = 84;
  ENGINE_HD static float at(const uint8_t* row, int64_t i) {
    const uint8_t* b = row + i / kBlockElems * kBlockBytes;
    const int j = static_cast<int>(i % kBlockElems);
    const int sc = b[j / 16];
    const int q = (b[16 + 32 * (j / 128) + j % 32] >> (2 * ((j / 32) % 4))) & 3;
    const float d = half_to_float(detail::u16_at(b + 80));
    const float dmin = half_to_float(detail::u16_at(b + 82));
    return detail::k_elem(d, sc & 15, q, dmin, sc >> 4);
  }
  // Sub-block sb: bits 2 (sb % 4) of qs[32 (sb / 4) + l]; scales[2 sb] for l < 16, scales[2 sb + 1] after.
  static constexpr int kGroup = 32;
  ENGINE_HD static void group(const uint8_t* row, int64_t g, float* out) {
    const uint8_t* b = row + g / 8 * kBlockBytes;
    const int sb = static_cast<int>(g % 8), shift = 2 * (sb % 4);
    const uint8_t* qs = b + 16 + 32 * (sb / 4);
    const float d = half_to_float(detail::u16_at(b + 80));
    const float dmin = half_to_float(detail::u16_at(b + 82));
    ENGINE_UNROLL
    for (int h = 0; h < 2; ++h) {
      const int sc = b[2 * sb + h];
      const float ds = d * static_cast<float>(sc & 15), dm = dmin * static_cast<float>(sc >> 4);
      ENGINE_UNROLL
      for (int l = 16 * h; l < 16 * h + 16; ++l) out[l] = ds * static_cast<float>((qs[l] >> shift) & 3) - dm;
    }
  }
};

// {u8 hmask[32]; u8 qs[64]; u8 scales[12] (six-bit, biased by 32); f16 d}: Q2_K's 2 bits, less 4
// where bit j / 32 of hmask[j % 32] is clear. No min: the CPU's "- 0 * 0" changes no result.
template <>
struct Weight<DType::Q3_K> {
  static constexpr int kBlockElems = 256;
  static constexpr int kBlockBytes = 110;
  ENGINE_HD static float at(const uint8_t* row, int64_t i) {
    const uint8_t* b = row + i / kBlockElems * kBlockBytes;
    const int j = static_cast<int>(i % kBlockElems), g = j / 16;
    const int lo = (b[32 + 32 * (j / 128) + j % 32] >> (2 * ((j / 32) % 4))) & 3;
    const int hi = (b[j % 32] >> (j / 32)) & 1;
    const int sc_lo = (b[96 + g % 8] >> (4 * (g / 8))) & 15;
    const int sc_hi = (b[104 + g % 4] >> (2 * (g / 4))) & 3;
    const float d = half_to_float(detail::u16_at(b + 108));
    const int sc = (sc_lo | sc_hi << 4) - 32;
    return d * static_cast<float>(sc) * static_cast<float>((lo | hi << 2) - 4);
  }
  // Sub-block sb: bits 2 (sb % 4) of qs[32 (sb / 4) + l], bit sb of hmask[l]; six-bit scales 2 sb and
  // 2 sb + 1 for the two halves.
  static constexpr int kGroup = 32;
  ENGINE_HD static void group(const uint8_t* row, int64_t g, float* out) {
    const uint8_t* b = row + g / 8 * kBlockBytes;
    const int sb = static_cast<int>(g % 8), shift = 2 * (sb % 4);
    const uint8_t* qs = b + 32 + 32 * (sb / 4);
    const float d = half_to_float(detail::u16_at(b + 108));
    ENGINE_UNROLL
    for (int h = 0; h < 2; ++h) {
      const int s = 2 * sb + h;
      const int sc_lo = (b[96 + s % 8] >> (4 * (s / 8))) & 15;
      const int sc_hi = (b[104 + s % 4] >> (2 * (s / 4))) & 3;
      const float ds = d * static_cast<float>((sc_lo | sc_hi << 4) - 32);
      ENGINE_UNROLL
      for (int l = 16 * h; l < 16 * h + 16; ++l) {
        const int q = ((qs[l] >> shift) & 3) | ((b[l] >> sb) & 1) << 2;
        out[l] = ds * static_cast<float>(q - 4);
      }
    }
  }
};

// {f16 d, dmin; u8 scales[12]; u8 qs[128]}: element 64k + l is the low nibble of qs[32k + l], 64k + 32 + l the high.
template <>
struct Weight<DType::Q4_K> {
  static constexpr int kBlockElems = 256;
  static constexpr int kBlockBytes = 144;
  ENGINE_HD static float at(const uint8_t* row, int64_t i) {
    const uint8_t* b = row + i / kBlockElems * kBlockBytes;
    const int j = static_cast<int>(i % kBlockElems);
    int sc, m;
    detail::scale_min_k4(b + 4, j / 32, sc, m);
    const int q = (b[16 + 32 * (j / 64) + j % 32] >> (4 * ((j / 32) % 2))) & 15;
    const float d = half_to_float(detail::u16_at(b));
    const float dmin = half_to_float(detail::u16_at(b + 2));
    return detail::k_elem(d, sc, q, dmin, m);
  }
  // Sub-block sb: nibble sb % 2 of qs[32 (sb / 2) + l].
  static constexpr int kGroup = 32;
  ENGINE_HD static void group(const uint8_t* row, int64_t g, float* out) {
    const uint8_t* b = row + g / 8 * kBlockBytes;
    const int sb = static_cast<int>(g % 8), shift = 4 * (sb % 2);
    const uint8_t* qs = b + 16 + 32 * (sb / 2);
    int sc, m;
    detail::scale_min_k4(b + 4, sb, sc, m);
    const float ds = half_to_float(detail::u16_at(b)) * static_cast<float>(sc);
    const float dm = half_to_float(detail::u16_at(b + 2)) * static_cast<float>(m);
    ENGINE_UNROLL
    for (int l = 0; l < 32; ++l) out[l] = ds * static_cast<float>((qs[l] >> shift) & 15) - dm;
  }
};

// {f16 d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}: Q4_K's nibble | bit j / 32 of qh[j % 32] << 4.
template <>
struct Weight<DType::Q5_K> {
  static constexpr int kBlockElems = 256;
  static constexpr int kBlockBytes = 176;
  ENGINE_HD static float at(const uint8_t* row, int64_t i) {
    const uint8_t* b = row + i / kBlockElems * kBlockBytes;
    const int j = static_cast<int>(i % kBlockElems);
    int sc, m;
    detail::scale_min_k4(b + 4, j / 32, sc, m);
    const int lo = (b[48 + 32 * (j / 64) + j % 32] >> (4 * ((j / 32) % 2))) & 15;
    const int hi = (b[16 + j % 32] >> (j / 32)) & 1;
    const float d = half_to_float(detail::u16_at(b));
    const float dmin = half_to_float(detail::u16_at(b + 2));
    return detail::k_elem(d, sc, lo | hi << 4, dmin, m);
  }
  // Sub-block sb: nibble sb % 2 of qs[32 (sb / 2) + l] | bit sb of qh[l] << 4.
  static constexpr int kGroup = 32;
  ENGINE_HD static void group(const uint8_t* row, int64_t g, float* out) {
    const uint8_t* b = row + g / 8 * kBlockBytes;
    const int sb = static_cast<int>(g % 8), shift = 4 * (sb % 2);
    const uint8_t* qs = b + 48 + 32 * (sb / 2);
    int sc, m;
    detail::scale_min_k4(b + 4, sb, sc, m);
    const float ds = half_to_float(detail::u16_at(b)) * static_cast<float>(sc);
    const float dm = half_to_float(detail::u16_at(b + 2)) * static_cast<float>(m);
    ENGINE_UNROLL
    for (int l = 0; l < 32; ++l) {
      const int q = ((qs[l] >> shift) & 15) | ((b[16 + l] >> sb) & 1) << 4;
      out[l] = ds * static_cast<float>(q) - dm;
    }
  }
};

// {u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d}: element 128n + 32k + l is (nibble k / 2 of
// ql[64n + 32(k % 2) + l] | bits 2k of qh[32n + l] << 4) - 32. No min, as for Q3_K.
template <>
struct Weight<DType::Q6_K> {
  static constexpr int kBlockElems = 256;
  static constexpr int kBlockBytes = 210;
  ENGINE_HD static float at(const uint8_t* row, int64_t i) {
    const uint8_t* b = row + i / kBlockElems * kBlockBytes;
    const int j = static_cast<int>(i % kBlockElems), n = j / 128, k = (j / 32) % 4, l = j % 32;
    const int lo = (b[64 * n + 32 * (k % 2) + l] >> (4 * (k / 2))) & 15;
    const int hi = (b[128 + 32 * n + l] >> (2 * k)) & 3;
    const int sc = static_cast<int8_t>(b[192 + j / 16]);
    const float d = half_to_float(detail::u16_at(b + 208));
    return d * static_cast<float>(sc) * static_cast<float>((lo | hi << 4) - 32);
  }
  // Sub-block sb = 4n + k: nibble k / 2 of ql[64n + 32 (k % 2) + l] | bits 2k of qh[32n + l] << 4;
  // scales[2 sb] for l < 16, scales[2 sb + 1] after.
  static constexpr int kGroup = 32;
  ENGINE_HD static void group(const uint8_t* row, int64_t g, float* out) {
    const uint8_t* b = row + g / 8 * kBlockBytes;
    const int sb = static_cast<int>(g % 8), n = sb / 4, k = sb % 4;
    const uint8_t* ql = b + 64 * n + 32 * (k % 2);
    const uint8_t* qh = b + 128 + 32 * n;
    const int lo_shift = 4 * (k / 2), hi_shift = 2 * k;
    const float d = half_to_float(detail::u16_at(b + 208));
    ENGINE_UNROLL
    for (int h = 0; h < 2; ++h) {
      const float ds = d * static_cast<float>(static_cast<int8_t>(b[192 + 2 * sb + h]));
      ENGINE_UNROLL
      for (int l = 16 * h; l < 16 * h + 16; ++l) {
        const int q = ((ql[l] >> lo_shift) & 15) | ((qh[l] >> hi_shift) & 3) << 4;
        out[l] = ds * static_cast<float>(q - 32);
      }
    }
  }
};

}  // namespace engine::cuda
