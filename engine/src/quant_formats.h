#pragma once
// GGUF block layouts (byte-exact) and the per-family row converters behind quants.h.
// Shared by the CPU dot products, which read the same blocks.
#include <cstdint>
#include <cstring>

#include "engine/dtype.h"

namespace engine::quant {

constexpr int kQK = 32;    // elements per legacy block
constexpr int kQK_K = 256; // elements per K-quant super-block

struct BlockQ4_0 { uint16_t d; uint8_t qs[16]; };
struct BlockQ4_1 { uint16_t d, m; uint8_t qs[16]; };
struct BlockQ5_0 { uint16_t d; uint8_t qh[4]; uint8_t qs[16]; };
struct BlockQ5_1 { uint16_t d, m; uint8_t qh[4]; uint8_t qs[16]; };
struct BlockQ8_0 { uint16_t d; int8_t qs[32]; };
struct BlockQ8_1 { uint16_t d, s; int8_t qs[32]; };
struct BlockQ2_K { uint8_t scales[16]; uint8_t qs[64]; uint16_t d, dmin; };
struct BlockQ3_K { uint8_t hmask[32]; uint8_t qs[64]; uint8_t scales[12]; uint16_t d; };
struct BlockQ4_K { uint16_t d, dmin; uint8_t scales[12]; uint8_t qs[128]; };
struct BlockQ5_K { uint16_t d, dmin; uint8_t scales[12]; uint8_t qh[32]; uint8_t qs[128]; };
struct BlockQ6_K { uint8_t ql[128]; uint8_t qh[64]; int8_t scales[16]; uint16_t d; };
struct BlockQ8_K { float d; int8_t qs[256]; int16_t bsums[16]; };

static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22 &&
              sizeof(BlockQ5_1) == 24 && sizeof(BlockQ8_0) == 34 && sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ2_K) == 84 && sizeof(BlockQ3_K) == 110 && sizeof(BlockQ4_K) == 144 &&
              sizeof(BlockQ5_K) == 176 && sizeof(BlockQ6_K) == 210 && sizeof(BlockQ8_K) == 292);

// Rounds to nearest, ties to even, exactly as ggml's float-magic trick (|x| < 2^22).
inline int nearest_int(float x) {
  float v = x + 12582912.f;
  int32_t i;
  std::memcpy(&i, &v, sizeof i);
  return (i & 0x007fffff) - 0x00400000;
}

// Legacy 32-element formats; `nb` is the block count.
void quantize_q4_0(const float* x, BlockQ4_0* y, int64_t nb);
void quantize_q4_1(const float* x, BlockQ4_1* y, int64_t nb);
void quantize_q5_0(const float* x, BlockQ5_0* y, int64_t nb);
void quantize_q5_1(const float* x, BlockQ5_1* y, int64_t nb);
// Q8_0 / Q8_1 come in two flavors: weights as ggml's reference quantizer (x / d, half away
// from zero); activations as its SIMD quantizers (x * 127 / amax, half to even), so that
// dot products match llama.cpp's bit for bit.
enum class Q8Flavor { kReference, kSimd };
void quantize_q8_0(const float* x, BlockQ8_0* y, int64_t nb, Q8Flavor flavor = Q8Flavor::kReference);
void quantize_q8_1(const float* x, BlockQ8_1* y, int64_t nb, Q8Flavor flavor = Q8Flavor::kReference);
void dequantize_q4_0(const BlockQ4_0* x, float* y, int64_t nb);
void dequantize_q4_1(const BlockQ4_1* x, float* y, int64_t nb);
void dequantize_q5_0(const BlockQ5_0* x, float* y, int64_t nb);
void dequantize_q5_1(const BlockQ5_1* x, float* y, int64_t nb);
void dequantize_q8_0(const BlockQ8_0* x, float* y, int64_t nb);
void dequantize_q8_1(const BlockQ8_1* x, float* y, int64_t nb);

// K-quant super-blocks (reference, non-imatrix quantizers).
void quantize_q2_K(const float* x, BlockQ2_K* y, int64_t nb);
void quantize_q3_K(const float* x, BlockQ3_K* y, int64_t nb);
void quantize_q4_K(const float* x, BlockQ4_K* y, int64_t nb);
void quantize_q5_K(const float* x, BlockQ5_K* y, int64_t nb);
void quantize_q6_K(const float* x, BlockQ6_K* y, int64_t nb);
void quantize_q8_K(const float* x, BlockQ8_K* y, int64_t nb);

// One K-quant super-block unpacked to integers in element order: element i is
// (d * scale[i/16]) * q[i] - (dmin * min[i/16]). Dequantization and the scalar dot share it.
struct KBlockInts {
  float d = 0, dmin = 0;
  int8_t q[kQK_K];
  int scale[16];
  int min[16];
};
void unpack_k_block(DType type, const void* block, KBlockInts& out);
// Only d, dmin, scale and min of unpack_k_block (the SIMD dot products unpack q themselves).
void unpack_k_scales(DType type, const void* block, KBlockInts& out);
void dequantize_k(DType type, const void* x, float* y, int64_t nb);

}  // namespace engine::quant
