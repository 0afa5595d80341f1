// NORM: (x - mean) / sqrt(var + eps) per row (LayerNorm without affine), summed in
// llama.cpp's CPU order: the mean from a double sum rounded to float, the variance from
// 16-lane float squares reduced per vector and accumulated in double.
#include <cmath>

#include "cpu/kernels.h"
#include "cpu/rows.h"
#include "engine/op_params.h"
#include "cpu/vec_math.h"

namespace engine::cpu {
namespace {

float mean_dense(const float* x, int64_t n) {
  double sum = 0.0;
  for (int64_t k = 0; k < n; ++k) sum += static_cast<double>(x[k]);
  return static_cast<float>(sum) / static_cast<float>(n);
}

// Writes x - mean to d and returns the mean of the squares: whole 16-lane vectors are
// squared and lane-reduced in float, each vector's sum and each leftover square added in double.
float centered_variance_dense(const float* x, float* d, int64_t n, float mean) {
  double sum = 0.0;
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes) {
    float sq[kLanes];
    for (int l = 0; l < kLanes; ++l) {
      d[k + l] = x[k + l] - mean;
      sq[l] = d[k + l] * d[k + l];
    }
    sum += static_cast<double>(reduce_lanes(sq));
  }
  for (; k < n; ++k) {
    d[k] = x[k] - mean;
    sum += static_cast<double>(d[k] * d[k]);
  }
  return static_cast<float>(sum / static_cast<double>(n));
}

// Strided rows take llama.cpp's scalar path: every sum in float.
float mean_strided(char* x, size_t nb0, int64_t n) {
  float sum = 0.0f;
  for (int64_t k = 0; k < n; ++k) sum += f32_at(x, k, nb0);
  return sum / static_cast<float>(n);
}

float centered_variance_strided(char* x, size_t xnb0, char* d, size_t dnb0, int64_t n, float mean) {
  float sum = 0.0f;
  for (int64_t k = 0; k < n; ++k) {
    const float v = f32_at(x, k, xnb0) - mean;
    f32_at(d, k, dnb0) = v;
    sum += v * v;
  }
  return sum / static_cast<float>(n);
}

}  // namespace

void norm(const ComputeParams& p, Tensor* dst) {
  const Tensor* a = dst->src[0];
  const float eps = eps_param(*dst);
  const int64_t n = dst->ne[0];
  const bool dense = a->nb[0] == sizeof(float) && dst->nb[0] == sizeof(float);
  const RowRange rows = split_rows(dst->nrows(), p);
  for (int64_t r = rows.begin; r < rows.end; ++r) {
    const RowIndex i = row_index(dst, r);
    char* d = row_ptr(dst, i);
    char* x = row_ptr(a, i);
    float variance;
    if (dense) {
      const auto* xf = reinterpret_cast<const float*>(x);
      variance = centered_variance_dense(xf, reinterpret_cast<float*>(d), n, mean_dense(xf, n));
    } else {
      variance = centered_variance_strided(x, a->nb[0], d, dst->nb[0], n, mean_strided(x, a->nb[0], n));
    }
    const float s = 1.0f / std::sqrt(variance + eps);
    for (int64_t k = 0; k < n; ++k) f32_at(d, k, dst->nb[0]) *= s;
  }
}

}  // namespace engine::cpu
