#pragma once
// The eight float lanes of an AVX2 accumulator as llama.cpp's quantized vec_dot uses them:
// lane L of a 32-byte integer product collects bytes 4L..4L+3, is converted to float, and is
// FMA-accumulated per block; the row's value is the lanes' horizontal sum.
#include <cmath>
#include <cstdint>

namespace engine::cpu {

struct FloatLanes8 {
  float v[8] = {};

  // v[L] = fma(scale, float(ints[L]), v[L]) for every lane.
  void fma(float scale, const int32_t* ints) {
    for (int l = 0; l < 8; ++l) v[l] = std::fma(scale, static_cast<float>(ints[l]), v[l]);
  }

  // High half plus low half, then lanes 0+2 and 1+3, then those two.
  float hsum() const {
    float h[4];
    for (int i = 0; i < 4; ++i) h[i] = v[i + 4] + v[i];
    return (h[0] + h[2]) + (h[1] + h[3]);
  }
};

// Adds a*b[j] for 32 consecutive elements into the eight lanes (lane L: elements 4L..4L+3).
template <typename A, typename B>
void add_lane_products(const A* a, const B* b, int32_t* lanes) {
  for (int j = 0; j < 32; ++j) lanes[j / 4] += static_cast<int32_t>(a[j]) * static_cast<int32_t>(b[j]);
}

}  // namespace engine::cpu
