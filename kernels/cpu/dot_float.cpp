// F32 / F16 / BF16 dot products in llama.cpp's CPU backend order (AVX-512, AVX512_BF16),
// one vector lane at a time so that every rounding happens where the vector code rounds.
#include "cpu/dot_float.h"

#include <cmath>
#include <algorithm>

#include "cpu/vec_math.h"
#include "engine/quants.h"

namespace engine::cpu {
namespace {

constexpr int kRowAccumulators = 4;                        // vec_dot keeps four vectors in flight
constexpr int64_t kRowStep = kRowAccumulators * kLanes;    // 64 elements per unrolled step
constexpr int kPairLanes = 2 * kLanes;                      // bf16 elements per dot-product vector

float f32_value(float v) { return v; }

// One 16-lane FMA accumulator over n (a multiple of 16) elements, then the lane tree.
template <typename T, typename ToFloat>
float fma_one_vector(int64_t n, const T* w, const T* a, ToFloat to_float) {
  float acc[kLanes] = {};
  for (int64_t i = 0; i < n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] = std::fma(to_float(w[i + l]), to_float(a[i + l]), acc[l]);
  return reduce_lanes(acc);
}

// vec_dot's vector part: four 16-lane FMA accumulators fed 64 elements per step; at the end
// they are folded pairwise (0+2, 1+3, then 0+1) before the lane tree.
struct FourVectors {
  float acc[kRowAccumulators][kLanes] = {};

  template <typename T, typename ToFloat>
  void step(const T* w, const T* a, ToFloat to_float) {
    for (int j = 0; j < kRowAccumulators; ++j)
      for (int l = 0; l < kLanes; ++l) {
        const int k = j * kLanes + l;
        acc[j][l] = std::fma(to_float(w[k]), to_float(a[k]), acc[j][l]);
      }
  }

  float sum() {
    for (int l = 0; l < kLanes; ++l) {
      acc[0][l] += acc[2][l];
      acc[1][l] += acc[3][l];
    }
    for (int l = 0; l < kLanes; ++l) acc[0][l] += acc[1][l];
    return reduce_lanes(acc[0]);
  }
};

// Runs the whole 64-element steps of n; returns where the leftovers start. With `padded`, the
// leftovers instead run as one more step padded with zeros, as when the span is longer in llama.cpp.
template <typename T, typename ToFloat>
int64_t run_steps(FourVectors& v, int64_t n, const T* w, const T* a, bool padded, ToFloat to_float) {
  int64_t i = 0;
  for (; i + kRowStep <= n; i += kRowStep) v.step(w + i, a + i, to_float);
  if (!padded || i == n) return i;
  T wt[kRowStep] = {}, at[kRowStep] = {};
  std::copy(w + i, w + n, wt);
  std::copy(a + i, a + n, at);
  v.step(wt, at, to_float);
  return n;
}

// The dot-product instruction treats denormal inputs as zero and flushes denormal results.
float flush_denormal(float v) { return std::fpclassify(v) == FP_SUBNORMAL ? std::copysign(0.0f, v) : v; }

float bf16_input(uint16_t h) { return flush_denormal(bf16_to_fp32(h)); }

// One AVX512_BF16 dot-product step on 32 bf16 pairs: lane j adds the product of pair 2j+1,
// then that of pair 2j; each product is exact in float and each sum rounds to nearest even.
void dot_bf16_pairs(float* acc, const uint16_t* w, const uint16_t* a) {
  for (int j = 0; j < kLanes; ++j) {
    const float odd = flush_denormal(acc[j] + bf16_input(w[2 * j + 1]) * bf16_input(a[2 * j + 1]));
    acc[j] = flush_denormal(odd + bf16_input(w[2 * j]) * bf16_input(a[2 * j]));
  }
}

}  // namespace

// llama.cpp tinyBLAS<16, __m512, __m512, float>.
float dot_f32_tiled(int64_t n, const float* w, const float* a) { return fma_one_vector(n, w, a, f32_value); }

// llama.cpp tinyBLAS<16, __m512, __m512, ggml_fp16_t>: halves widened exactly, float FMA.
float dot_f16_tiled(int64_t n, const uint16_t* w, const uint16_t* a) { return fma_one_vector(n, w, a, fp16_to_fp32); }

// llama.cpp tinyBLAS<32, __m512, __m512bh, ggml_bf16_t>: one dot-product accumulator.
float dot_bf16_tiled(int64_t n, const uint16_t* w, const uint16_t* a) {
  float acc[kLanes] = {};
  for (int64_t i = 0; i < n; i += kPairLanes) dot_bf16_pairs(acc, w + i, a + i);
  return reduce_lanes(acc);
}

// llama.cpp ggml_vec_dot_f32 (AVX-512): the vector part, then the leftovers added in float,
// each a fused multiply-add (its native build contracts that multiply-add).
float dot_f32_row(int64_t n, const float* w, const float* a, bool padded) {
  FourVectors v;
  const int64_t np = run_steps(v, n, w, a, padded, f32_value);
  float sum = v.sum();
  for (int64_t i = np; i < n; ++i) sum = std::fma(w[i], a[i], sum);
  return sum;
}

// llama.cpp ggml_vec_dot_f16 (AVX-512 without FP16 arithmetic): as f32, but the vector sum
// and the leftovers are accumulated in double.
float dot_f16_row(int64_t n, const uint16_t* w, const uint16_t* a, bool padded) {
  FourVectors v;
  const int64_t np = run_steps(v, n, w, a, padded, fp16_to_fp32);
  double sum = v.sum();
  for (int64_t i = np; i < n; ++i) sum += static_cast<double>(fp16_to_fp32(w[i]) * fp16_to_fp32(a[i]));
  return static_cast<float>(sum);
}

// llama.cpp ggml_vec_dot_bf16 (AVX512_BF16): two dot-product accumulators over 64-element
// steps, each lane-reduced and added in double, then the leftovers in double.
float dot_bf16_row(int64_t n, const uint16_t* w, const uint16_t* a, bool padded) {
  float acc0[kLanes] = {}, acc1[kLanes] = {};
  int64_t i = 0;
  for (; i + 2 * kPairLanes <= n; i += 2 * kPairLanes) {
    dot_bf16_pairs(acc0, w + i, a + i);
    dot_bf16_pairs(acc1, w + i + kPairLanes, a + i + kPairLanes);
  }
  if (padded && i < n) {
    uint16_t wt[2 * kPairLanes] = {}, at[2 * kPairLanes] = {};
    std::copy(w + i, w + n, wt);
    std::copy(a + i, a + n, at);
    dot_bf16_pairs(acc0, wt, at);
    dot_bf16_pairs(acc1, wt + kPairLanes, at + kPairLanes);
    i = n;
  }
  double sum = reduce_lanes(acc0);
  sum += reduce_lanes(acc1);
  for (; i < n; ++i) sum += static_cast<double>(bf16_to_fp32(w[i]) * bf16_to_fp32(a[i]));
  return static_cast<float>(sum);
}

}  // namespace engine::cpu
