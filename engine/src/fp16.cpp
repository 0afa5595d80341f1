// IEEE half and bfloat16 conversions, bit-exact with round to nearest even.
#include <cstdint>
#include <cstring>

#include "engine/quants.h"

namespace engine {
namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Shifts m right by `shift` bits, rounding to nearest even.
uint32_t shift_round_even(uint32_t m, int shift) {
  const uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  return q + ((rem > half || (rem == half && (q & 1))) ? 1 : 0);
}

}  // namespace

float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24 is exact in float
    const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return (h & 0x8000) ? -v : v;
  }
  if (exp == 31) return float_of(sign | 0x7f800000 | (mant << 13));
  return float_of(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t fp32_to_fp16(float f) {
  const uint32_t x = bits_of(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t ax = x & 0x7fffffff;
  if (ax > 0x7f800000) return sign | 0x7e00 | static_cast<uint16_t>((ax >> 13) & 0x3ff);  // quiet nan
  if (ax >= 0x477ff000) return sign | 0x7c00;  // overflows (ties included) to infinity
  const int exp = static_cast<int>(ax >> 23);
  if (exp < 113) {  // below 2^-14: half subnormal q * 2^-24
    if (exp < 102) return sign;
    const uint32_t m = (ax & 0x7fffff) | 0x800000;
    return sign | static_cast<uint16_t>(shift_round_even(m, 126 - exp));
  }
  // Rounding may carry into the exponent, which is the correct result.
  const uint32_t combined = (static_cast<uint32_t>(exp - 112) << 23) | (ax & 0x7fffff);
  return sign | static_cast<uint16_t>(shift_round_even(combined, 13));
}

float bf16_to_fp32(uint16_t h) { return float_of(static_cast<uint32_t>(h) << 16); }

uint16_t fp32_to_bf16(float f) {
  const uint32_t x = bits_of(f);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);  // keep nan quiet
  return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

}  // namespace engine
