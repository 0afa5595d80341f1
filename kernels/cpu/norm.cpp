// NORM: (x - mean) / sqrt(var + eps) per row (LayerNorm without affine); sums in double as ggml.
#include <cmath>

#include "cpu/kernels.h"
#include "cpu/rows.h"

namespace engine::cpu {

void norm(const ComputeParams& p, Tensor* dst) {
  const Tensor* a = dst->src[0];
  const float eps = dst->param_f32(0);
  const int64_t n = dst->ne[0];
  const RowRange rows = split_rows(dst->nrows(), p);
  for (int64_t r = rows.begin; r < rows.end; ++r) {
    const RowIndex i = row_index(dst, r);
    char* d = row_ptr(dst, i);
    char* x = row_ptr(a, i);
    double sum = 0.0;
    for (int64_t k = 0; k < n; ++k) sum += static_cast<double>(f32_at(x, k, a->nb[0]));
    const float mean = static_cast<float>(sum / static_cast<double>(n));
    double sum2 = 0.0;
    for (int64_t k = 0; k < n; ++k) {
      const float v = f32_at(x, k, a->nb[0]) - mean;
      f32_at(d, k, dst->nb[0]) = v;
      sum2 += static_cast<double>(v * v);
    }
    const float variance = static_cast<float>(sum2 / static_cast<double>(n));
    const float s = 1.0f / std::sqrt(variance + eps);
    for (int64_t k = 0; k < n; ++k) f32_at(d, k, dst->nb[0]) *= s;
  }
}

}  // namespace engine::cpu
