// The float dot-product orders: each crafted case sums the same products in two orders that
// round differently, so the expected value pins which order runs.
#include "cpu/dot_float.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "cpu/vec_dot.h"
#include "engine/quants.h"

namespace engine::cpu {
namespace {

constexpr float k2p24 = 16777216.0f;  // 2^24: adding 1 to it is a tie that rounds back to 2^24

std::vector<uint16_t> to_f16(const std::vector<float>& v) {
  std::vector<uint16_t> h;
  for (float x : v) h.push_back(fp32_to_fp16(x));
  return h;
}

std::vector<uint16_t> to_bf16(const std::vector<float>& v) {
  std::vector<uint16_t> h;
  for (float x : v) h.push_back(fp32_to_bf16(x));
  return h;
}

TEST(DotFloat, F32TiledAccumulatesOneVectorRowFourVectors) {
  // Elements 0, 16 and 32 share lane 0 of the tiled GEMM's single accumulator, but sit in
  // three different accumulators of vec_dot.
  std::vector<float> w(64, 1.0f), a(64, 0.0f);
  a[0] = k2p24;
  a[16] = 1.0f;
  a[32] = -k2p24;
  EXPECT_EQ(dot_f32_tiled(64, w.data(), a.data()), 0.0f);  // (2^24 + 1) rounds away the 1
  EXPECT_EQ(dot_f32_row(64, w.data(), a.data()), 1.0f);    // (2^24 - 2^24) + 1
}

TEST(DotFloat, F32RowAddsLeftoversInFloat) {
  std::vector<float> w(66, 1.0f), a(66, 0.0f);
  a[0] = k2p24;
  a[64] = 1.0f;
  a[65] = 1.0f;
  EXPECT_EQ(dot_f32_row(66, w.data(), a.data()), k2p24);  // each leftover 1 is lost to rounding
}

TEST(DotFloat, F32RowFusesEachLeftoverMultiplyAdd) {
  const float e = 1.0f + std::ldexp(1.0f, -12);  // e * e = 1 + 2^-11 + 2^-24 needs 25 bits
  std::vector<float> w(65, 0.0f), a(65, 0.0f);
  w[0] = 1.0f, a[0] = -1.0f;
  w[64] = e, a[64] = e;
  EXPECT_EQ(dot_f32_row(65, w.data(), a.data()), std::ldexp(1.0f, -11) + std::ldexp(1.0f, -24));
}

TEST(DotFloat, F16TiledAndRowOrders) {
  std::vector<float> w(64, 0.0f), a(64, 0.0f);
  w[0] = 2048.0f, a[0] = 8192.0f;    // 2^24
  w[16] = 1.0f, a[16] = 1.0f;        // 1
  w[32] = 2048.0f, a[32] = -8192.0f;  // -2^24
  const auto wh = to_f16(w), ah = to_f16(a);
  EXPECT_EQ(dot_f16_tiled(64, wh.data(), ah.data()), 0.0f);
  EXPECT_EQ(dot_f16_row(64, wh.data(), ah.data()), 1.0f);
}

TEST(DotFloat, F16RowAddsLeftoversInDouble) {
  const auto w = to_f16({65504.0f, 1.0f, -65504.0f}), a = to_f16({65504.0f, 1.0f, 65504.0f});
  EXPECT_EQ(dot_f16_row(3, w.data(), a.data()), 1.0f);  // a float sum would lose the 1
}

TEST(DotFloat, PaddedSpanRunsLeftoversThroughTheLanes) {
  // Products: element 0 is 2^24, elements 1 and 16 are 1.
  std::vector<float> w(32, 0.0f), a(32, 0.0f);
  w[0] = 2048.0f, a[0] = 8192.0f;
  w[1] = 1.0f, a[1] = 1.0f;
  w[16] = 1.0f, a[16] = 1.0f;
  const auto wh = to_f16(w), ah = to_f16(a);
  EXPECT_EQ(dot_f16_row(32, wh.data(), ah.data(), false), k2p24 + 2.0f);  // leftovers summed in double
  EXPECT_EQ(dot_f16_row(32, wh.data(), ah.data(), true), k2p24);  // lane fold and lane tree each drop a 1
  EXPECT_EQ(dot(DType::F16, 32, wh.data(), ah.data(), DotOrder::kRowPadded), k2p24);
  EXPECT_EQ(dot(DType::F16, 32, wh.data(), ah.data(), DotOrder::kRow), k2p24 + 2.0f);
  std::vector<float> wf(32), af(32);
  for (int i = 0; i < 32; ++i) wf[i] = w[i] * a[i], af[i] = 1.0f;
  EXPECT_EQ(dot_f32_row(32, wf.data(), af.data(), true), k2p24);
}

TEST(DotFloat, Bf16PairsAddOddElementFirst) {
  // Lane 0 sees pairs (0,1) then (32,33): odd-first gives ((1 + 2^24) + 1) - 2^24 = 0;
  // even-first would give ((2^24 + 1) - 2^24) + 1 = 1.
  std::vector<float> w(64, 0.0f), a(64, 0.0f);
  w[0] = 4096.0f, a[0] = 4096.0f;
  w[1] = 1.0f, a[1] = 1.0f;
  w[32] = -4096.0f, a[32] = 4096.0f;
  w[33] = 1.0f, a[33] = 1.0f;
  const auto wb = to_bf16(w), ab = to_bf16(a);
  EXPECT_EQ(dot_bf16_tiled(64, wb.data(), ab.data()), 0.0f);
}

TEST(DotFloat, Bf16TreatsDenormalInputsAsZero) {
  std::vector<float> w(32, 0.0f), a(32, 0.0f);
  w[0] = 1e-39f;  // a bf16 denormal
  a[0] = std::ldexp(1.0f, 100);
  const auto wb = to_bf16(w), ab = to_bf16(a);
  const float product = bf16_to_fp32(wb[0]) * bf16_to_fp32(ab[0]);
  ASSERT_GT(product, 0.0f);
  EXPECT_EQ(dot_bf16_tiled(32, wb.data(), ab.data()), 0.0f);   // the dot-product instruction flushes it
  EXPECT_EQ(dot_bf16_row(32, wb.data(), ab.data()), product);  // the scalar leftovers do not
}

TEST(DotFloat, EveryOrderIsCloseToTheExactDot) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t n : {64, 96, 160, 256, 320}) {
    std::vector<float> w(n), a(n);
    for (int64_t i = 0; i < n; ++i) w[i] = u(rng), a[i] = u(rng);
    const auto wh = to_f16(w), ah = to_f16(a), wb = to_bf16(w), ab = to_bf16(a);
    double f32 = 0, f16 = 0, bf16 = 0, mag = 0;
    for (int64_t i = 0; i < n; ++i) {
      f32 += static_cast<double>(w[i]) * a[i];
      f16 += static_cast<double>(fp16_to_fp32(wh[i])) * fp16_to_fp32(ah[i]);
      bf16 += static_cast<double>(bf16_to_fp32(wb[i])) * bf16_to_fp32(ab[i]);
      mag += std::fabs(static_cast<double>(w[i]) * a[i]);
    }
    const double tol = 1e-5 * mag;
    SCOPED_TRACE("n = " + std::to_string(n));
    EXPECT_NEAR(dot_f32_tiled(n, w.data(), a.data()), f32, tol);
    EXPECT_NEAR(dot_f32_row(n, w.data(), a.data()), f32, tol);
    EXPECT_NEAR(dot_f16_tiled(n, wh.data(), ah.data()), f16, tol);
    EXPECT_NEAR(dot_f16_row(n, wh.data(), ah.data()), f16, tol);
    EXPECT_NEAR(dot_f16_row(n, wh.data(), ah.data(), true), f16, tol);
    EXPECT_NEAR(dot_bf16_tiled(n, wb.data(), ab.data()), bf16, tol);
    EXPECT_NEAR(dot_bf16_row(n, wb.data(), ab.data()), bf16, tol);
    EXPECT_NEAR(dot_bf16_row(n, wb.data(), ab.data(), true), bf16, tol);
  }
}

TEST(DotFloat, OrderFollowsWhenTheTiledGemmAcceptsTheMultiply) {
  EXPECT_EQ(dot_order(DType::F32, 64, 172, 5), DotOrder::kBatch);
  EXPECT_EQ(dot_order(DType::F32, 64, 172, 1), DotOrder::kRow);     // one column
  EXPECT_EQ(dot_order(DType::F32, 172, 64, 5), DotOrder::kRow);     // k not whole 16-steps
  EXPECT_EQ(dot_order(DType::F16, 64, 30, 5), DotOrder::kRow);      // rows not in fours
  EXPECT_EQ(dot_order(DType::BF16, 48, 64, 5), DotOrder::kRow);     // k not whole 32-steps
  EXPECT_EQ(dot_order(DType::BF16, 64, 64, 5), DotOrder::kBatch);
  EXPECT_EQ(dot_order(DType::F16, 40, 32, 1, true), DotOrder::kRowPadded);
  EXPECT_EQ(dot_order(DType::F16, 40, 32, 3, true), DotOrder::kBatch);  // spans are whole steps in llama.cpp
  EXPECT_EQ(dot_order(DType::Q8_0, 64, 30, 2), DotOrder::kBatch);
}

TEST(DotFloat, DotDispatchesByOrder) {
  std::vector<float> w(64, 1.0f), a(64, 0.0f);
  a[0] = k2p24;
  a[16] = 1.0f;
  a[32] = -k2p24;
  EXPECT_EQ(dot(DType::F32, 64, w.data(), a.data(), DotOrder::kBatch), 0.0f);
  EXPECT_EQ(dot(DType::F32, 64, w.data(), a.data(), DotOrder::kRow), 1.0f);
  // A batch order on k that is not whole steps falls back to the row order, as llama.cpp does.
  EXPECT_EQ(dot(DType::F32, 40, w.data(), a.data(), DotOrder::kBatch), dot_f32_row(40, w.data(), a.data()));
}

}  // namespace
}  // namespace engine::cpu
