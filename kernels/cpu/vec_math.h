#pragma once
// Vector-lane arithmetic that llama.cpp's AVX-512 CPU path performs, evaluated one lane at
// a time. Softmax and SiLU feed quantized and half-precision activations, where a one-ulp
// difference can flip a rounding; computing them the same way keeps logits identical.
#include <cmath>
#include <cstdint>

namespace engine::cpu {

constexpr int kLanes = 16;  // floats per 512-bit vector

// exp(x): range reduction to n = round(x / ln 2), a degree-5 polynomial in the remainder,
// then scaling by 2^n. At most 1.5 ulp from expf; flushes to 0 below -104 and to inf above 88.4.
inline float vec_expf(float x) {
  const float shift = 0x1.8p23f;
  const float z = std::fma(x, 0x1.715476p+0f, shift);
  const float n = z - shift;
  const float b = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x));
  const float u = b * b;
  const float j = std::fma(std::fma(std::fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, std::fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)),
                           u, std::fma(0x1.ffffecp-1f, b, 1.0f));
  if (std::fabs(n) > 192) return n <= 0 ? 0.0f : INFINITY;
  return std::ldexp(j, static_cast<int>(n));
}

// y[i] = vec_expf(x[i] - shift) and y[i] = silu(x[i]) = x[i] / (1 + vec_expf(-x[i])) for
// n a multiple of kLanes, on the fastest instruction set in use (vec_math.cpp). exp_shifted_lanes
// returns the y's summed as softmax does: each vector by reduce_lanes, then into a double.
double exp_shifted_lanes(const float* x, float shift, float* y, int64_t n);
void silu_lanes(const float* x, float* y, int64_t n);

// Sum of one vector's lanes by halving: lanes i and i+8, then i and i+4, i+2, i+1.
inline float reduce_lanes(const float* v) {
  float h[8], q[4];
  for (int i = 0; i < 8; ++i) h[i] = v[i + 8] + v[i];
  for (int i = 0; i < 4; ++i) q[i] = h[i + 4] + h[i];
  return (q[0] + q[2]) + (q[1] + q[3]);
}

}  // namespace engine::cpu
