// RMS_NORM: x / sqrt(mean(x^2) + eps) per row; the sum of squares is kept in double as ggml does,
// but in eight partial sums, not ggml's one chain (which took ~3 us a 2048-element row): the
// double's rounding differs from ggml's far below the float the mean is rounded to.
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
    constexpr int kPartials = 8;
    double partial[kPartials] = {};
    int64_t e = 0;
    for (; e + kPartials <= n; e += kPartials)
      for (int j = 0; j < kPartials; ++j) {
        const float v = f32_at(x, e + j, a->nb[0]);
        partial[j] += static_cast<double>(v * v);
      }
    for (; e < n; ++e) {
      const float v = f32_at(x, e, a->nb[0]);
      partial[0] += static_cast<double>(v * v);
    }
    const double sum = ((partial[0] + partial[1]) + (partial[2] + partial[3])) + ((partial[4] + partial[5]) + (partial[6] + partial[7]));
    const float mean = static_cast<float>(sum / static_cast<double>(n));
    const float s = 1.0f / std::sqrt(mean + eps);
    for (int64_t k = 0; k < n; ++k) f32_at(d, k, dst->nb[0]) = f32_at(x, k, a->nb[0]) * s;
  }
}

}  // namespace engine::cpu
