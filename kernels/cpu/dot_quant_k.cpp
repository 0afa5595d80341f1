// Q2_K..Q6_K dot products against Q8_K activations, in the orders of llama.cpp's CPU backend
// (see dot_quant.h).
#include <cmath>

#include "cpu/dot_quant.h"
#include "cpu/quant_lanes.h"
#include "engine/quants.h"
#include "quant_formats.h"

namespace engine::cpu {
namespace {

using namespace engine::quant;

// Eight lanes of sum(scale * q * a) over one super-block (q offset by q_offset); the 32-element
// runs are each spread over the lanes four elements at a time.
void scaled_lane_sums(const KBlockInts& b, int q_offset, const BlockQ8_K& a, int32_t* lanes) {
  for (int e = 0; e < kQK_K; ++e)
    lanes[(e % 32) / 4] += b.scale[e / 16] * (b.q[e] + q_offset) * static_cast<int32_t>(a.qs[e]);
}

// Exact sum over the 16-element groups of min * (activation group sum).
int32_t min_sum(const KBlockInts& b, const BlockQ8_K& a) {
  int32_t s = 0;
  for (int g = 0; g < 16; ++g) s += b.min[g] * a.bsums[g];
  return s;
}

// Repacked K-quants: per run of `groups` 16-element groups (a whole super-block in the GEMV, a
// part of it in the GEMM) one FMA of the run's exact scaled sum with dw*da and one of its exact
// min sum with dmin_w*da into a second accumulator; the result is their difference.
float k_repacked(DType type, int64_t n, const void* w_row, const void* act_row, int groups) {
  const auto* w = static_cast<const uint8_t*>(w_row);
  const auto* a = static_cast<const BlockQ8_K*>(act_row);
  const size_t block_bytes = dtype_info(type).block_bytes;
  KBlockInts b;
  float acc = 0, acc_min = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    unpack_k_block(type, w + i * block_bytes, b);
    for (int g0 = 0; g0 < 16; g0 += groups) {
      int32_t sum = 0, mins = 0;
      for (int g = g0; g < g0 + groups; ++g) {
        for (int e = 16 * g; e < 16 * g + 16; ++e) sum += b.scale[g] * b.q[e] * a[i].qs[e];
        mins += b.min[g] * a[i].bsums[g];
      }
      acc = std::fma(static_cast<float>(sum), b.d * a[i].d, acc);
      acc_min = std::fma(static_cast<float>(mins), b.dmin * a[i].d, acc_min);
    }
  }
  return acc - acc_min;
}

}  // namespace

float dot_q4_K_repacked(int64_t n, const void* w_row, const void* act_row) {
  return k_repacked(DType::Q4_K, n, w_row, act_row, 16);
}

float dot_q4_K_repacked_gemm(int64_t n, const void* w_row, const void* act_row) {
  return k_repacked(DType::Q4_K, n, w_row, act_row, 4);
}

float dot_q2_K_repacked(int64_t n, const void* w_row, const void* act_row) {
  return k_repacked(DType::Q2_K, n, w_row, act_row, 16);
}

float dot_q2_K_repacked_gemm(int64_t n, const void* w_row, const void* act_row) {
  return k_repacked(DType::Q2_K, n, w_row, act_row, 8);
}

float dot_q3_K_lanes(int64_t n, const void* w_row, const void* act_row) {
  const auto* w = static_cast<const BlockQ3_K*>(w_row);
  const auto* a = static_cast<const BlockQ8_K*>(act_row);
  KBlockInts b;
  FloatLanes8 acc;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    unpack_k_block(DType::Q3_K, &w[i], b);
    int32_t lanes[8] = {};
    scaled_lane_sums(b, 0, a[i], lanes);
    acc.fma(a[i].d * b.d, lanes);
  }
  return acc.hsum();
}

// Q5_K: the mins enter as a scalar running sum (fused multiply-add) added after the lanes.
float dot_q5_K_lanes(int64_t n, const void* w_row, const void* act_row) {
  const auto* w = static_cast<const BlockQ5_K*>(w_row);
  const auto* a = static_cast<const BlockQ8_K*>(act_row);
  KBlockInts b;
  FloatLanes8 acc;
  float mins = 0;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    unpack_k_block(DType::Q5_K, &w[i], b);
    int32_t lanes[8] = {};
    scaled_lane_sums(b, 0, a[i], lanes);
    acc.fma(a[i].d * b.d, lanes);
    mins = std::fma(-a[i].d * b.dmin, static_cast<float>(min_sum(b, a[i])), mins);
  }
  return acc.hsum() + mins;
}

// Q6_K: lanes hold sum(scale * q) with q unsigned (0..63); the offset 32 is taken back per lane
// L as 32 * (scale * group sum) of groups 2L and 2L+1.
float dot_q6_K_lanes(int64_t n, const void* w_row, const void* act_row) {
  const auto* w = static_cast<const BlockQ6_K*>(w_row);
  const auto* a = static_cast<const BlockQ8_K*>(act_row);
  KBlockInts b;
  FloatLanes8 acc;
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    unpack_k_block(DType::Q6_K, &w[i], b);
    int32_t lanes[8] = {};
    scaled_lane_sums(b, 32, a[i], lanes);
    for (int l = 0; l < 8; ++l)
      lanes[l] -= 32 * (b.scale[2 * l] * a[i].bsums[2 * l] + b.scale[2 * l + 1] * a[i].bsums[2 * l + 1]);
    acc.fma(a[i].d * b.d, lanes);
  }
  return acc.hsum();
}

}  // namespace engine::cpu
