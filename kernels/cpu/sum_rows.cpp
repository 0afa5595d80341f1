// SUM_ROWS on the CPU: each row summed in double and rounded once, as ggml's vec_sum does.
#include "cpu/kernels.h"
#include "cpu/rows.h"

namespace engine::cpu {

void sum_rows(const ComputeParams& p, Tensor* dst) {
  const Tensor* a = dst->src[0];
  const RowRange rows = split_rows(dst->nrows(), p);
  for (int64_t r = rows.begin; r < rows.end; ++r) {
    const RowIndex i = row_index(dst, r);
    char* x = row_ptr(a, i);
    double sum = 0;
    for (int64_t k = 0; k < a->ne[0]; ++k) sum += f32_at(x, k, a->nb[0]);
    f32_at(row_ptr(dst, i), 0, dst->nb[0]) = static_cast<float>(sum);
  }
}

}  // namespace engine::cpu
