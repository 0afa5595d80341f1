// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 dot products against Q8_0 / Q8_1 activations, in the orders of
// llama.cpp's CPU backend (see dot_quant.h).
#include <cmath>
#include <cstring>

#include "cpu/dot_quant.h"
#include "cpu/quant_lanes.h"
#include "engine/quants.h"
#include "quant_formats.h"

namespace engine::cpu {
namespace {

using namespace engine::quant;

// The 32 signed levels of a 4-bit block in element order: low nibbles, then high nibbles.
void levels_q4(const uint8_t* qs, int offset, int8_t* l) {
  for (int j = 0; j < 16; ++j) {
    l[j] = static_cast<int8_t>((qs[j] & 0x0F) - offset);
    l[j + 16] = static_cast<int8_t>((qs[j] >> 4) - offset);
  }
}

// The 32 levels of a 5-bit block: nibble plus bit j of qh as the fifth bit, minus offset.
void levels_q5(const uint8_t* qs, const uint8_t* qh_bytes, int offset, int8_t* l) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  for (int j = 0; j < 16; ++j) {
    l[j] = static_cast<int8_t>(((qs[j] & 0x0F) | (((qh >> j) & 1) << 4)) - offset);
    l[j + 16] = static_cast<int8_t>(((qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4)) - offset);
  }
}

// Blocks against Q8_0: lanes += (dw * da) * lane sums; the AVX2 vec_dot and tinyBLAS order.
template <typename Block, typename Levels>
float lanes_q8_0(int64_t n, const void* w_row, const void* act_row, Levels levels) {
  const auto* w = static_cast<const Block*>(w_row);
  const auto* a = static_cast<const BlockQ8_0*>(act_row);
  FloatLanes8 acc;
  int8_t l[kQK];
  for (int64_t i = 0; i < n / kQK; ++i) {
    levels(w[i], l);
    int32_t lanes[8] = {};
    add_lane_products(l, a[i].qs, lanes);
    acc.fma(fp16_to_fp32(w[i].d) * fp16_to_fp32(a[i].d), lanes);
  }
  return acc.hsum();
}

// Blocks with a min against Q8_1: the lanes as above plus a running sum of m * s (the
// compiler fuses that multiply-add), added after the horizontal sum.
template <typename Block, typename Levels>
float lanes_q8_1(int64_t n, const void* w_row, const void* act_row, Levels levels) {
  const auto* w = static_cast<const Block*>(w_row);
  const auto* a = static_cast<const BlockQ8_1*>(act_row);
  FloatLanes8 acc;
  float mins = 0;
  int8_t l[kQK];
  for (int64_t i = 0; i < n / kQK; ++i) {
    mins = std::fma(fp16_to_fp32(w[i].m), fp16_to_fp32(a[i].s), mins);
    levels(w[i], l);
    int32_t lanes[8] = {};
    add_lane_products(l, a[i].qs, lanes);
    acc.fma(fp16_to_fp32(w[i].d) * fp16_to_fp32(a[i].d), lanes);
  }
  return acc.hsum() + mins;
}

}  // namespace

float dot_q4_0_repacked(int64_t n, const void* w_row, const void* act_row) {
  const auto* w = static_cast<const BlockQ4_0*>(w_row);
  const auto* a = static_cast<const BlockQ8_0*>(act_row);
  float acc = 0;
  int8_t l[kQK];
  for (int64_t i = 0; i < n / kQK; ++i) {
    levels_q4(w[i].qs, 8, l);
    int32_t sum = 0;
    for (int j = 0; j < kQK; ++j) sum += l[j] * a[i].qs[j];
    acc = std::fma(static_cast<float>(sum), fp16_to_fp32(w[i].d) * fp16_to_fp32(a[i].d), acc);
  }
  return acc;
}

float dot_q8_0_lanes(int64_t n, const void* w_row, const void* act_row) {
  return lanes_q8_0<BlockQ8_0>(n, w_row, act_row,
                               [](const BlockQ8_0& b, int8_t* l) { std::memcpy(l, b.qs, kQK); });
}

float dot_q5_0_lanes(int64_t n, const void* w_row, const void* act_row) {
  return lanes_q8_0<BlockQ5_0>(n, w_row, act_row,
                               [](const BlockQ5_0& b, int8_t* l) { levels_q5(b.qs, b.qh, 16, l); });
}

float dot_q4_1_lanes(int64_t n, const void* w_row, const void* act_row) {
  return lanes_q8_1<BlockQ4_1>(n, w_row, act_row, [](const BlockQ4_1& b, int8_t* l) { levels_q4(b.qs, 0, l); });
}

float dot_q5_1_lanes(int64_t n, const void* w_row, const void* act_row) {
  return lanes_q8_1<BlockQ5_1>(n, w_row, act_row,
                               [](const BlockQ5_1& b, int8_t* l) { levels_q5(b.qs, b.qh, 0, l); });
}

}  // namespace engine::cpu
