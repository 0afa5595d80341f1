#pragma once
// Normally distributed floats (mean 0, standard deviation `scale`) from a seed: the random data
// of the unit tests and micro-benchmarks.
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

inline std::vector<float> random_floats(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}
