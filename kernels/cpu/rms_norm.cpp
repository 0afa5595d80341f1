// RMS_NORM: x / sqrt(mean(x^2) + eps) per row; the sum of squares is kept in double as ggml does.
#include <cmath>

#include "cpu/kernels.h"
#include "cpu/rows.h"
#include "engine/op_params.h"

namespace engine::cpu {

void rms_norm(const ComputeParams& p, Tensor* dst) {
  const Tensor* a = dst->src[0];
  const float eps = eps_param(*dst);
  const int64_t n = dst->ne[0];
  const RowRange rows = split_rows(dst->nrows(), p);
  for (int64_t r = rows.begin; r < rows.end; ++r) {
    const RowIndex i = row_index(dst, r);
    char* d = row_ptr(dst, i);
    char* x = row_ptr(a, i);
    double sum = 0.0;
    for (int64_t k = 0; k < n; ++k) {
      const float v = f32_at(x, k, a->nb[0]);
      sum += static_cast<double>(v * v);
    }
    const float mean = static_cast<float>(sum / static_cast<double>(n));
    const float s = 1.0f / std::sqrt(mean + eps);
    for (int64_t k = 0; k < n; ++k) f32_at(d, k, dst->nb[0]) = f32_at(x, k, a->nb[0]) * s;
  }
}

}  // namespace engine::cpu
