#include "engine/quants.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "cpu/vec_dot.h"
#include "engine/error.h"
#include "random_floats.h"

using namespace engine;

namespace {

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::vector<uint8_t> quantized(DType t, const std::vector<float>& x) {
  std::vector<uint8_t> q(row_bytes(t, static_cast<int64_t>(x.size())));
  quantize_row(t, x.data(), q.data(), static_cast<int64_t>(x.size()));
  return q;
}

std::vector<float> dequantized(DType t, const std::vector<uint8_t>& q, size_t n) {
  std::vector<float> y(n);
  dequantize_row(t, q.data(), y.data(), static_cast<int64_t>(n));
  return y;
}

void put_half(uint8_t* p, float v) {
  const uint16_t h = fp32_to_fp16(v);
  std::memcpy(p, &h, 2);
}

const DType kAllTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q4_0, DType::Q4_1,
                           DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::Q8_1, DType::Q2_K,
                           DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q8_K};

const DType kWeightTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q4_0, DType::Q4_1,
                              DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::Q2_K, DType::Q3_K,
                              DType::Q4_K, DType::Q5_K, DType::Q6_K};

}  // namespace

TEST(QuantsFp16, SpecialValues) {
  EXPECT_EQ(fp32_to_fp16(0.0f), 0x0000);
  EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(fp32_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(fp32_to_fp16(-2.0f), 0xc000);
  EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7bff);
  EXPECT_EQ(fp32_to_fp16(65519.0f), 0x7bff);
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7c00);  // tie rounds to even: infinity
  EXPECT_EQ(fp32_to_fp16(1e10f), 0x7c00);
  EXPECT_EQ(fp32_to_fp16(-std::numeric_limits<float>::infinity()), 0xfc00);
  const uint16_t nan = fp32_to_fp16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  EXPECT_TRUE(std::isnan(fp16_to_fp32(0x7e00)));
  EXPECT_TRUE(std::isinf(fp16_to_fp32(0x7c00)));
  EXPECT_EQ(fp16_to_fp32(0x3c00), 1.0f);
  EXPECT_EQ(fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(fp16_to_fp32(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(bits(fp16_to_fp32(0x8000)), 0x80000000u);
}

TEST(QuantsFp16, RoundsToNearestEvenIncludingSubnormals) {
  EXPECT_EQ(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie, even stays
  EXPECT_EQ(fp32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie, odd rounds up
  EXPECT_EQ(fp32_to_fp16(1.0f + 1.01f * std::ldexp(1.0f, -11)), 0x3c01);
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);           // tie to even zero
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(fp32_to_fp16(std::ldexp(3.0f, -25)), 0x0002);           // 1.5 ulp tie rounds to even 2
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1023.5f, -24)), 0x0400);        // rounds up into the normals
  EXPECT_EQ(fp32_to_fp16(std::ldexp(1.0f, -30)), 0x0000);
}

TEST(QuantsFp16, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = fp16_to_fp32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(fp32_to_fp16(f), h) << "half " << h;
  }
}

TEST(QuantsBf16, RoundingAndSpecialValues) {
  EXPECT_EQ(fp32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3f808000)), 0x3f80);  // tie, even stays
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3f818000)), 0x3f82);  // tie, odd rounds up
  EXPECT_EQ(fp32_to_bf16(from_bits(0x3f808001)), 0x3f81);
  EXPECT_EQ(fp32_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_TRUE(std::isnan(bf16_to_fp32(fp32_to_bf16(from_bits(0x7f800001)))));  // nan stays nan
  EXPECT_EQ(bf16_to_fp32(0xc000), -2.0f);
}

TEST(Quants, RoundTripErrorIsBoundedPerType) {
  struct Bound {
    DType type;
    double max_rel_rmse;
  };
  // Relative RMS error of quantize -> dequantize on Gaussian data, per bit width.
  const Bound bounds[] = {{DType::F32, 0.0},     {DType::F16, 3e-4},    {DType::BF16, 2.5e-3}, {DType::Q8_0, 7e-3},
                          {DType::Q8_1, 7e-3},   {DType::Q8_K, 8e-3},   {DType::Q6_K, 2.2e-2}, {DType::Q5_0, 5e-2},
                          {DType::Q5_1, 4.5e-2}, {DType::Q5_K, 4.5e-2}, {DType::Q4_0, 1e-1},   {DType::Q4_1, 9.5e-2},
                          {DType::Q4_K, 9e-2},   {DType::Q3_K, 1.8e-1}, {DType::Q2_K, 3.5e-1}};
  const auto x = random_floats(4096, 7);
  double norm = 0;
  for (float v : x) norm += double(v) * v;
  for (const auto& b : bounds) {
    const auto y = dequantized(b.type, quantized(b.type, x), x.size());
    double err = 0;
    for (size_t i = 0; i < x.size(); ++i) err += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
    const double rel = std::sqrt(err / norm);
    EXPECT_LE(rel, b.max_rel_rmse) << dtype_name(b.type);
  }
}

TEST(Quants, ZeroRowsStayZero) {
  const std::vector<float> zeros(512, 0.0f);
  for (DType t : kAllTypes) {
    const auto y = dequantized(t, quantized(t, zeros), zeros.size());
    for (float v : y) ASSERT_EQ(v, 0.0f) << dtype_name(t);
  }
}

TEST(Quants, HandBuiltQ4_0Block) {
  uint8_t block[18];
  put_half(block, 0.5f);
  for (int j = 0; j < 16; ++j) block[2 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  float y[32];
  dequantize_row(DType::Q4_0, block, y, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], (j - 8) * 0.5f);
    EXPECT_EQ(y[16 + j], (15 - j - 8) * 0.5f);
  }
}

TEST(Quants, HandBuiltQ8_0Block) {
  uint8_t block[34];
  put_half(block, 0.25f);
  for (int j = 0; j < 32; ++j) block[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(j - 16));
  float y[32];
  dequantize_row(DType::Q8_0, block, y, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], (j - 16) * 0.25f);
}

TEST(Quants, HandBuiltQ4_KBlock) {
  // Layout: d, dmin (f16), 12 bytes of 6-bit scales/mins, 128 bytes of nibbles.
  uint8_t block[144] = {};
  put_half(block, 1.0f);
  put_half(block + 2, 0.5f);
  uint8_t* sc = block + 4;
  int scale[8], min[8];
  for (int j = 0; j < 8; ++j) {
    scale[j] = j < 4 ? j + 1 : 40 + j;  // upper four use the high bits
    min[j] = j < 4 ? j : 20 + j;
  }
  for (int j = 0; j < 4; ++j) {
    sc[j] = static_cast<uint8_t>(scale[j] | ((scale[j + 4] >> 4) << 6));
    sc[j + 4] = static_cast<uint8_t>(min[j] | ((min[j + 4] >> 4) << 6));
    sc[j + 8] = static_cast<uint8_t>((scale[j + 4] & 0xF) | ((min[j + 4] & 0xF) << 4));
  }
  uint8_t* qs = block + 16;
  for (int i = 0; i < 128; ++i) qs[i] = static_cast<uint8_t>((i % 16) | ((15 - i % 16) << 4));
  float y[256];
  dequantize_row(DType::Q4_K, block, y, 256);
  for (int e = 0; e < 256; ++e) {
    const int chunk = e / 64, r = e % 64;
    const int sub = 2 * chunk + (r < 32 ? 0 : 1);
    const int q = r < 32 ? r % 16 : 15 - (r - 32) % 16;
    EXPECT_EQ(y[e], 1.0f * scale[sub] * q - 0.5f * min[sub]) << "element " << e;
  }
}

TEST(Quants, HandBuiltQ6_KBlock) {
  // Layout: ql[128] low nibbles, qh[64] high 2-bit pairs, int8 scales[16], d (f16).
  uint8_t block[210] = {};
  uint8_t* ql = block;
  uint8_t* qh = block + 128;
  auto* scales = reinterpret_cast<int8_t*>(block + 192);
  put_half(block + 208, 0.125f);
  for (int g = 0; g < 16; ++g) scales[g] = static_cast<int8_t>(g - 8);
  int L[256];
  for (int e = 0; e < 256; ++e) L[e] = (e * 7) % 64;
  for (int n = 0; n < 2; ++n)
    for (int l = 0; l < 32; ++l) {
      const int* h = L + 128 * n;
      ql[64 * n + l] = static_cast<uint8_t>((h[l] & 0xF) | ((h[l + 64] & 0xF) << 4));
      ql[64 * n + 32 + l] = static_cast<uint8_t>((h[l + 32] & 0xF) | ((h[l + 96] & 0xF) << 4));
      qh[32 * n + l] =
          static_cast<uint8_t>((h[l] >> 4) | ((h[l + 32] >> 4) << 2) | ((h[l + 64] >> 4) << 4) | ((h[l + 96] >> 4) << 6));
    }
  float y[256];
  dequantize_row(DType::Q6_K, block, y, 256);
  for (int e = 0; e < 256; ++e) EXPECT_EQ(y[e], 0.125f * scales[e / 16] * (L[e] - 32)) << "element " << e;
}

TEST(Quants, RejectsUnsupportedTypesAndPartialBlocks) {
  float x[32] = {};
  uint8_t buf[256] = {};
  EXPECT_THROW(dequantize_row(DType::I32, buf, x, 8), Error);
  EXPECT_THROW(quantize_row(DType::I32, x, buf, 8), Error);
  EXPECT_THROW(quantize_row(static_cast<DType>(99), x, buf, 8), Error);
  EXPECT_THROW(dequantize_row(DType::Q4_0, buf, x, 16), Error);
  EXPECT_THROW(quantize_row(DType::Q4_K, x, buf, 32), Error);
}

TEST(QuantsVecDot, ActivationTypesFollowGgml) {
  using cpu::vec_dot_type;
  EXPECT_EQ(vec_dot_type(DType::F32), DType::F32);
  EXPECT_EQ(vec_dot_type(DType::F16), DType::F16);
  EXPECT_EQ(vec_dot_type(DType::BF16), DType::BF16);
  EXPECT_EQ(vec_dot_type(DType::Q4_0), DType::Q8_0);
  EXPECT_EQ(vec_dot_type(DType::Q5_0), DType::Q8_0);
  EXPECT_EQ(vec_dot_type(DType::Q8_0), DType::Q8_0);
  EXPECT_EQ(vec_dot_type(DType::Q4_1), DType::Q8_1);
  EXPECT_EQ(vec_dot_type(DType::Q5_1), DType::Q8_1);
  for (DType t : {DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K})
    EXPECT_EQ(vec_dot_type(t), DType::Q8_K);
  EXPECT_THROW(vec_dot_type(DType::I32), Error);
}

namespace {

// dot() against the double-precision dot of the dequantized weight and activation rows.
void expect_dot_matches_dequantized(bool scalar_only) {
  cpu::set_cpu_features_override(scalar_only);
  const int64_t n = 1024;
  const auto w = random_floats(n, 11);
  const auto x = random_floats(n, 12, 3.0f);
  for (DType t : kWeightTypes) {
    const DType at = cpu::vec_dot_type(t);
    const auto qw = quantized(t, w);
    std::vector<uint8_t> qa(row_bytes(at, n));
    cpu::quantize_activation(t, x.data(), qa.data(), n);
    const auto dw = dequantized(t, qw, n);
    const auto da = dequantized(at, qa, n);
    double ref = 0, mag = 0;
    for (int64_t i = 0; i < n; ++i) {
      ref += double(dw[i]) * da[i];
      mag += std::fabs(double(dw[i]) * da[i]);
    }
    // Q8_1 keeps its block sum in f16, as ggml does, so its products carry that rounding too.
    const double tol = at == DType::Q8_1 ? 5e-4 : 1e-5;
    const float got = cpu::dot(t, n, qw.data(), qa.data());
    EXPECT_NEAR(got, ref, tol * mag) << dtype_name(t) << (scalar_only ? " scalar" : " simd");
  }
  cpu::set_cpu_features_override(false);
}

}  // namespace

TEST(QuantsVecDot, ScalarMatchesDequantizedDot) { expect_dot_matches_dequantized(true); }

TEST(QuantsVecDot, SimdMatchesDequantizedDot) {
  cpu::set_cpu_features_override(false);
  if (!cpu::simd_active()) GTEST_SKIP() << "no AVX2/FMA/F16C on this CPU";
  expect_dot_matches_dequantized(false);
}

TEST(QuantsVecDot, ScalarAndSimdAgree) {
  cpu::set_cpu_features_override(false);
  if (!cpu::simd_active()) GTEST_SKIP() << "no AVX2/FMA/F16C on this CPU";
  const int64_t n = 2048;
  for (uint32_t seed = 0; seed < 4; ++seed) {
    const auto w = random_floats(n, 100 + seed);
    const auto x = random_floats(n, 200 + seed);
    for (DType t : kWeightTypes) {
      const auto qw = quantized(t, w);
      std::vector<uint8_t> qa(row_bytes(cpu::vec_dot_type(t), n));
      cpu::quantize_activation(t, x.data(), qa.data(), n);
      cpu::set_cpu_features_override(true);
      const float scalar = cpu::dot(t, n, qw.data(), qa.data());
      cpu::set_cpu_features_override(false);
      const float simd = cpu::dot(t, n, qw.data(), qa.data());
      EXPECT_NEAR(simd, scalar, 1e-4 * (std::fabs(scalar) + 1.0f)) << dtype_name(t);
    }
  }
}
