// Pins the floating-point order of each quantized dot product: the expected values below are
// computed straight from the blocks' integers in the documented order (dot_quant.h), and each
// order is checked to differ from the other order on some rows, so a swap would be caught.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "cpu/vec_dot.h"
#include "engine/quants.h"
#include "quant_formats.h"

using namespace engine;
using namespace engine::quant;

namespace {

constexpr int64_t kN = 768;  // three K super-blocks, 24 legacy blocks
constexpr int kRows = 64;

struct Case {
  std::vector<uint8_t> w, a;
};

Case make_case(DType t, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> w(kN), x(kN);
  for (auto& v : w) v = dist(rng);
  for (auto& v : x) v = 3.0f * dist(rng);
  Case c{std::vector<uint8_t>(row_bytes(t, kN)), std::vector<uint8_t>(row_bytes(cpu::vec_dot_type(t), kN))};
  quantize_row(t, w.data(), c.w.data(), kN);
  cpu::quantize_activation(t, x.data(), c.a.data(), kN);
  return c;
}

// Eight lanes (lane L: elements 4L..4L+3 of every 32) summed high half + low half, then 0+2, 1+3.
float hsum8(const float* v) {
  const float h0 = v[4] + v[0], h1 = v[5] + v[1], h2 = v[6] + v[2], h3 = v[7] + v[3];
  return (h0 + h2) + (h1 + h3);
}

// Per block b: integer lane sums s[b][L] and a float scale; returns both orders' results.
struct Orders {
  float lanes, serial;
};
Orders both_orders(const std::vector<std::vector<int32_t>>& s, const std::vector<float>& scale) {
  float acc[8] = {}, serial = 0;
  for (size_t b = 0; b < s.size(); ++b) {
    int32_t total = 0;
    for (int l = 0; l < 8; ++l) {
      acc[l] = std::fma(scale[b], static_cast<float>(s[b][l]), acc[l]);
      total += s[b][l];
    }
    serial = std::fma(static_cast<float>(total), scale[b], serial);
  }
  return {hsum8(acc), serial};
}

// Lane sums of a legacy block row: w levels times activation int8, per 32-element block.
template <typename WBlock, typename Levels>
Orders legacy_orders(const Case& c, Levels levels) {
  const auto* w = reinterpret_cast<const WBlock*>(c.w.data());
  const auto* a = reinterpret_cast<const BlockQ8_0*>(c.a.data());
  std::vector<std::vector<int32_t>> s;
  std::vector<float> scale;
  for (int64_t b = 0; b < kN / kQK; ++b) {
    int l[kQK];
    levels(w[b], l);
    std::vector<int32_t> lanes(8, 0);
    for (int j = 0; j < kQK; ++j) lanes[j / 4] += l[j] * a[b].qs[j];
    s.push_back(lanes);
    scale.push_back(fp16_to_fp32(w[b].d) * fp16_to_fp32(a[b].d));
  }
  return both_orders(s, scale);
}

// Runs `check` over many random rows; requires the two orders to disagree on at least one.
template <typename Check>
void over_rows(DType t, Check check) {
  int differing = 0;
  for (int r = 0; r < kRows; ++r) {
    const Case c = make_case(t, 1000 + r);
    const Orders o = check(c);
    if (o.lanes != o.serial) ++differing;
  }
  EXPECT_GT(differing, 0) << dtype_name(t) << ": the rows do not tell the two orders apart";
}

}  // namespace

TEST(DotQuantOrder, Q8_0UsesEightFmaLanes) {
  for (bool scalar : {true, false}) {
    cpu::set_cpu_features_override(scalar);
    over_rows(DType::Q8_0, [](const Case& c) {
      const Orders o = legacy_orders<BlockQ8_0>(c, [](const BlockQ8_0& b, int* l) {
        for (int j = 0; j < kQK; ++j) l[j] = b.qs[j];
      });
      EXPECT_EQ(cpu::dot(DType::Q8_0, kN, c.w.data(), c.a.data()), o.lanes);
      return o;
    });
  }
  cpu::set_cpu_features_override(false);
}

TEST(DotQuantOrder, Q5_0UsesEightFmaLanes) {
  over_rows(DType::Q5_0, [](const Case& c) {
    const Orders o = legacy_orders<BlockQ5_0>(c, [](const BlockQ5_0& b, int* l) {
      uint32_t qh;
      std::memcpy(&qh, b.qh, 4);
      for (int j = 0; j < 16; ++j) {
        l[j] = (b.qs[j] & 15) + static_cast<int>(((qh >> j) & 1) << 4) - 16;
        l[j + 16] = (b.qs[j] >> 4) + static_cast<int>(((qh >> (j + 16)) & 1) << 4) - 16;
      }
    });
    EXPECT_EQ(cpu::dot(DType::Q5_0, kN, c.w.data(), c.a.data()), o.lanes);
    return o;
  });
}

TEST(DotQuantOrder, Q4_0RepackedIsOneFmaPerBlock) {
  over_rows(DType::Q4_0, [](const Case& c) {
    const Orders o = legacy_orders<BlockQ4_0>(c, [](const BlockQ4_0& b, int* l) {
      for (int j = 0; j < 16; ++j) {
        l[j] = (b.qs[j] & 15) - 8;
        l[j + 16] = (b.qs[j] >> 4) - 8;
      }
    });
    EXPECT_EQ(cpu::dot(DType::Q4_0, kN, c.w.data(), c.a.data()), o.serial);
    return o;
  });
}

TEST(DotQuantOrder, Q4_1AddsFusedMinSumAfterTheLanes) {
  over_rows(DType::Q4_1, [](const Case& c) {
    const auto* w = reinterpret_cast<const BlockQ4_1*>(c.w.data());
    const auto* a = reinterpret_cast<const BlockQ8_1*>(c.a.data());
    std::vector<std::vector<int32_t>> s;
    std::vector<float> scale;
    float mins = 0;
    for (int64_t b = 0; b < kN / kQK; ++b) {
      std::vector<int32_t> lanes(8, 0);
      for (int j = 0; j < 16; ++j) {
        lanes[j / 4] += (w[b].qs[j] & 15) * a[b].qs[j];
        lanes[(j + 16) / 4] += (w[b].qs[j] >> 4) * a[b].qs[j + 16];
      }
      s.push_back(lanes);
      scale.push_back(fp16_to_fp32(w[b].d) * fp16_to_fp32(a[b].d));
      mins = std::fma(fp16_to_fp32(w[b].m), fp16_to_fp32(a[b].s), mins);
    }
    const Orders o = both_orders(s, scale);
    EXPECT_EQ(cpu::dot(DType::Q4_1, kN, c.w.data(), c.a.data()), o.lanes + mins);
    return o;
  });
}

TEST(DotQuantOrder, Q6_KLanesTakeTheOffsetBackPerGroupPair) {
  over_rows(DType::Q6_K, [](const Case& c) {
    const auto* a = reinterpret_cast<const BlockQ8_K*>(c.a.data());
    std::vector<std::vector<int32_t>> s;
    std::vector<float> scale;
    KBlockInts k;
    for (int64_t b = 0; b < kN / kQK_K; ++b) {
      unpack_k_block(DType::Q6_K, c.w.data() + b * sizeof(BlockQ6_K), k);
      std::vector<int32_t> lanes(8, 0);
      for (int e = 0; e < kQK_K; ++e) lanes[(e % 32) / 4] += k.scale[e / 16] * (k.q[e] + 32) * a[b].qs[e];
      for (int l = 0; l < 8; ++l)
        lanes[l] -= 32 * (k.scale[2 * l] * a[b].bsums[2 * l] + k.scale[2 * l + 1] * a[b].bsums[2 * l + 1]);
      s.push_back(lanes);
      scale.push_back(a[b].d * k.d);
    }
    const Orders o = both_orders(s, scale);
    EXPECT_EQ(cpu::dot(DType::Q6_K, kN, c.w.data(), c.a.data()), o.lanes);
    return o;
  });
}

namespace {

// Repacked K-quant row from the blocks' integers: per run of `run` elements one FMA of the run's
// scaled sum with d*da, one of its min sum with dmin*da into a second accumulator.
float k_repacked_reference(DType t, const Case& c, int run) {
  const auto* a = reinterpret_cast<const BlockQ8_K*>(c.a.data());
  const size_t block_bytes = dtype_info(t).block_bytes;
  float acc = 0, acc_min = 0;
  KBlockInts k;
  for (int64_t b = 0; b < kN / kQK_K; ++b) {
    unpack_k_block(t, c.w.data() + b * block_bytes, k);
    std::vector<int32_t> sums(kQK_K / run, 0), mins(kQK_K / run, 0);
    for (int e = 0; e < kQK_K; ++e) sums[e / run] += k.scale[e / 16] * k.q[e] * a[b].qs[e];
    for (int g = 0; g < 16; ++g) mins[16 * g / run] += k.min[g] * a[b].bsums[g];
    for (size_t r = 0; r < sums.size(); ++r) {
      acc = std::fma(static_cast<float>(sums[r]), k.d * a[b].d, acc);
      acc_min = std::fma(static_cast<float>(mins[r]), k.dmin * a[b].d, acc_min);
    }
  }
  return acc - acc_min;
}

// The single-column GEMV takes a whole super-block per FMA, the GEMM `gemm_run` elements; the
// rows must tell the two apart.
void expect_repacked_orders(DType t, int gemm_run) {
  int differing = 0;
  for (int r = 0; r < kRows; ++r) {
    const Case c = make_case(t, 2000 + r);
    const float gemv = k_repacked_reference(t, c, kQK_K);
    const float gemm = k_repacked_reference(t, c, gemm_run);
    EXPECT_EQ(cpu::dot(t, kN, c.w.data(), c.a.data(), cpu::DotOrder::kRow), gemv) << dtype_name(t);
    EXPECT_EQ(cpu::dot(t, kN, c.w.data(), c.a.data(), cpu::DotOrder::kBatch), gemm) << dtype_name(t);
    if (gemv != gemm) ++differing;
  }
  EXPECT_GT(differing, 0) << dtype_name(t) << ": the rows do not tell GEMV and GEMM apart";
}

}  // namespace

TEST(DotQuantOrder, Q4_KRepackedFmaPerSuperBlockInGemvPer64InGemm) { expect_repacked_orders(DType::Q4_K, 64); }

TEST(DotQuantOrder, Q2_KRepackedFmaPerSuperBlockInGemvPer128InGemm) { expect_repacked_orders(DType::Q2_K, 128); }

TEST(DotQuantOrder, RepackedGemmTakesWholeGroupsOfFourColumns) {
  using cpu::DotOrder;
  for (DType t : {DType::Q4_0, DType::Q4_K, DType::Q2_K}) {
    EXPECT_EQ(cpu::column_order(t, DotOrder::kBatch, 3, 5), DotOrder::kBatch);
    EXPECT_EQ(cpu::column_order(t, DotOrder::kBatch, 4, 5), DotOrder::kRow);  // leftover column: GEMV
    EXPECT_EQ(cpu::column_order(t, DotOrder::kBatch, 7, 8), DotOrder::kBatch);
    EXPECT_EQ(cpu::column_order(t, DotOrder::kBatch, 2, 3), DotOrder::kRow);
    EXPECT_EQ(cpu::column_order(t, DotOrder::kRow, 0, 1), DotOrder::kRow);
  }
  EXPECT_EQ(cpu::column_order(DType::Q6_K, DotOrder::kBatch, 4, 5), DotOrder::kBatch);
  EXPECT_EQ(cpu::column_order(DType::F16, DotOrder::kBatch, 2, 3), DotOrder::kBatch);
}

TEST(DotQuantOrder, OrderDoesNotDependOnRowOrBatchExceptRepackedKQuants) {
  for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::Q3_K, DType::Q5_K,
                  DType::Q6_K}) {
    const Case c = make_case(t, 7);
    EXPECT_EQ(cpu::dot(t, kN, c.w.data(), c.a.data(), cpu::DotOrder::kRow),
              cpu::dot(t, kN, c.w.data(), c.a.data(), cpu::DotOrder::kBatch))
        << dtype_name(t);
  }
}
