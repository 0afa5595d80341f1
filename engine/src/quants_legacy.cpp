// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1: 32-element blocks, as ggml's reference quantizers.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "engine/quants.h"
#include "quant_formats.h"

namespace engine::quant {
namespace {

// The signed value of largest magnitude (first one on ties), as ggml picks it.
float signed_absmax(const float* x, int n) {
  float amax = 0, max = 0;
  for (int j = 0; j < n; ++j)
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  return max;
}

void min_max(const float* x, int n, float& min, float& max) {
  min = FLT_MAX;
  max = -FLT_MAX;
  for (int j = 0; j < n; ++j) {
    min = std::min(min, x[j]);
    max = std::max(max, x[j]);
  }
}

float absmax(const float* x, int n) {
  float amax = 0;
  for (int j = 0; j < n; ++j) amax = std::max(amax, std::fabs(x[j]));
  return amax;
}

// Packs the fifth bits of 32 five-bit values into the 32-bit qh word.
void pack_q5(const uint8_t* l, uint8_t* qs, uint8_t* qh_bytes) {
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    qs[j] = static_cast<uint8_t>((l[j] & 0x0F) | ((l[j + 16] & 0x0F) << 4));
    qh |= static_cast<uint32_t>((l[j] & 0x10) >> 4) << j;
    qh |= static_cast<uint32_t>((l[j + 16] & 0x10) >> 4) << (j + 16);
  }
  std::memcpy(qh_bytes, &qh, 4);
}

// The five-bit values of a Q5 block, in element order.
void unpack_q5(const uint8_t* qs, const uint8_t* qh_bytes, int* l) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  for (int j = 0; j < 16; ++j) {
    l[j] = (qs[j] & 0x0F) | static_cast<int>(((qh >> j) << 4) & 0x10);
    l[j + 16] = (qs[j] >> 4) | static_cast<int>((qh >> (j + 12)) & 0x10);
  }
}

}  // namespace

void quantize_q4_0(const float* x, BlockQ4_0* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    const float d = signed_absmax(x, kQK) / -8;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y[i].d = fp32_to_fp16(d);
    for (int j = 0; j < 16; ++j) {
      const uint8_t lo = std::min<uint8_t>(15, static_cast<uint8_t>(static_cast<int8_t>(x[j] * id + 8.5f)));
      const uint8_t hi = std::min<uint8_t>(15, static_cast<uint8_t>(static_cast<int8_t>(x[j + 16] * id + 8.5f)));
      y[i].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

void quantize_q4_1(const float* x, BlockQ4_1* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float min, max;
    min_max(x, kQK, min, max);
    const float d = (max - min) / 15;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y[i].d = fp32_to_fp16(d);
    y[i].m = fp32_to_fp16(min);
    for (int j = 0; j < 16; ++j) {
      const uint8_t lo = std::min<uint8_t>(15, static_cast<uint8_t>(static_cast<int8_t>((x[j] - min) * id + 0.5f)));
      const uint8_t hi = std::min<uint8_t>(15, static_cast<uint8_t>(static_cast<int8_t>((x[j + 16] - min) * id + 0.5f)));
      y[i].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

void quantize_q5_0(const float* x, BlockQ5_0* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    const float d = signed_absmax(x, kQK) / -16;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y[i].d = fp32_to_fp16(d);
    uint8_t l[kQK];
    for (int j = 0; j < kQK; ++j)
      l[j] = std::min<uint8_t>(31, static_cast<uint8_t>(static_cast<int8_t>(x[j] * id + 16.5f)));
    pack_q5(l, y[i].qs, y[i].qh);
  }
}

void quantize_q5_1(const float* x, BlockQ5_1* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float min, max;
    min_max(x, kQK, min, max);
    const float d = (max - min) / 31;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y[i].d = fp32_to_fp16(d);
    y[i].m = fp32_to_fp16(min);
    uint8_t l[kQK];
    for (int j = 0; j < kQK; ++j) l[j] = static_cast<uint8_t>((x[j] - min) * id + 0.5f);
    pack_q5(l, y[i].qs, y[i].qh);
  }
}

void quantize_q8_0(const float* x, BlockQ8_0* y, int64_t nb, Q8Flavor flavor) {
  const bool simd = flavor == Q8Flavor::kSimd;
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    const float amax = absmax(x, kQK);
    const float d = amax / 127;
    const float id = d == 0 ? 0.0f : simd ? 127.0f / amax : 1.0f / d;
    y[i].d = fp32_to_fp16(d);
    for (int j = 0; j < kQK; ++j) y[i].qs[j] = static_cast<int8_t>(simd ? std::nearbyint(x[j] * id) : std::round(x[j] * id));
  }
}

void quantize_q8_1(const float* x, BlockQ8_1* y, int64_t nb, Q8Flavor flavor) {
  const bool simd = flavor == Q8Flavor::kSimd;
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    const float amax = absmax(x, kQK);
    const float d = amax / 127;
    const float id = d == 0 ? 0.0f : simd ? 127.0f / amax : 1.0f / d;
    y[i].d = fp32_to_fp16(d);
    int sum = 0;
    for (int j = 0; j < kQK; ++j) {
      y[i].qs[j] = static_cast<int8_t>(simd ? std::nearbyint(x[j] * id) : std::round(x[j] * id));
      sum += y[i].qs[j];
    }
    y[i].s = fp32_to_fp16(static_cast<float>(sum) * d);
  }
}

void dequantize_q4_0(const BlockQ4_0* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_fp32(x[i].d);
    for (int j = 0; j < 16; ++j) {
      y[j] = static_cast<float>((x[i].qs[j] & 0x0F) - 8) * d;
      y[j + 16] = static_cast<float>((x[i].qs[j] >> 4) - 8) * d;
    }
  }
}

void dequantize_q4_1(const BlockQ4_1* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_fp32(x[i].d), m = fp16_to_fp32(x[i].m);
    for (int j = 0; j < 16; ++j) {
      y[j] = static_cast<float>(x[i].qs[j] & 0x0F) * d + m;
      y[j + 16] = static_cast<float>(x[i].qs[j] >> 4) * d + m;
    }
  }
}

void dequantize_q5_0(const BlockQ5_0* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_fp32(x[i].d);
    int l[kQK];
    unpack_q5(x[i].qs, x[i].qh, l);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(l[j] - 16) * d;
  }
}

void dequantize_q5_1(const BlockQ5_1* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_fp32(x[i].d), m = fp16_to_fp32(x[i].m);
    int l[kQK];
    unpack_q5(x[i].qs, x[i].qh, l);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(l[j]) * d + m;
  }
}

void dequantize_q8_0(const BlockQ8_0* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_fp32(x[i].d);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(x[i].qs[j]) * d;
  }
}

void dequantize_q8_1(const BlockQ8_1* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_fp32(x[i].d);
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(x[i].qs[j]) * d;
  }
}

}  // namespace engine::quant
