// SCALE: dst = src0 * s.
#include "cpu/kernels.h"
#include "cpu/rows.h"
#include "engine/op_params.h"

namespace engine::cpu {

void scale(const ComputeParams& p, Tensor* dst) {
  const Tensor* a = dst->src[0];
  const float s = scale_param(*dst);
  const RowRange rows = split_rows(dst->nrows(), p);
  for (int64_t r = rows.begin; r < rows.end; ++r) {
    const RowIndex i = row_index(dst, r);
    char* d = row_ptr(dst, i);
    char* x = row_ptr(a, i);
    for (int64_t k = 0; k < dst->ne[0]; ++k) f32_at(d, k, dst->nb[0]) = f32_at(x, k, a->nb[0]) * s;
  }
}

}  // namespace engine::cpu
