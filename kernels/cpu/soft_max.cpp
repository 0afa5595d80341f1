// SOFT_MAX along dim 0: softmax(x * scale + mask); mask row i1 serves every head (dims 2, 3).
// x * scale, then + mask, max subtraction, the vector exp on whole 16-lane groups (each group
// summed by lanes, then into a double) and expf on the tail, as llama.cpp evaluates it; a row
// that is all -inf becomes zeros.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/kernels.h"
#include "cpu/rows.h"
#include "cpu/vec_math.h"

namespace engine::cpu {
namespace {

// max(v[0..n)) as kLanes running maxima, so the compiler can keep them in one vector.
float lanes_max(const float* v, int64_t n) {
  float lane[kLanes];
  for (float& l : lane) l = -std::numeric_limits<float>::infinity();
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] = std::max(lane[l], v[k + l]);
  float max = -std::numeric_limits<float>::infinity();
  for (; k < n; ++k) max = std::max(max, v[k]);
  for (float l : lane) max = std::max(max, l);
  return max;
}

}  // namespace

void soft_max(const ComputeParams& p, Tensor* dst) {
  const Tensor* a = dst->src[0];
  const Tensor* mask = dst->src[1];
  const float scale = dst->param_f32(0);
  const int64_t n = dst->ne[0];
  thread_local std::vector<float> w;  // reused across calls: no allocation per node
  if (w.size() < static_cast<size_t>(n)) w.resize(static_cast<size_t>(n));
  const RowRange rows = split_rows(dst->nrows(), p);
  for (int64_t r = rows.begin; r < rows.end; ++r) {
    const RowIndex i = row_index(dst, r);
    char* d = row_ptr(dst, i);
    char* x = row_ptr(a, i);
    char* m = mask ? row_ptr(mask, i.i1, 0, 0) : nullptr;
    for (int64_t k = 0; k < n; ++k) w[k] = f32_at(x, k, a->nb[0]) * scale;
    if (m)
      for (int64_t k = 0; k < n; ++k) w[k] += f32_at(m, k, mask->nb[0]);
    const float max = lanes_max(w.data(), n);
    if (max == -std::numeric_limits<float>::infinity()) {
      for (int64_t k = 0; k < n; ++k) f32_at(d, k, dst->nb[0]) = 0.0f;
      continue;
    }
    double sum = 0.0;
    const int64_t vector_end = n / kLanes * kLanes;
    exp_shifted_lanes(w.data(), max, w.data(), vector_end);
    int64_t k = 0;
    for (; k < vector_end; k += kLanes) sum += static_cast<double>(reduce_lanes(&w[k]));
    for (; k < n; ++k) {
      w[k] = std::exp(w[k] - max);
      sum += static_cast<double>(w[k]);
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t k = 0; k < n; ++k) f32_at(d, k, dst->nb[0]) = w[k] * inv;
  }
}

}  // namespace engine::cpu
