// ARGSORT on the CPU: each row's indices ordered by value, largest first (expert routing).
#include <algorithm>
#include <numeric>

#include "cpu/kernels.h"
#include "cpu/rows.h"

namespace engine::cpu {

void argsort(const ComputeParams& p, Tensor* dst) {
  const Tensor* a = dst->src[0];
  const RowRange rows = split_rows(dst->nrows(), p);
  for (int64_t r = rows.begin; r < rows.end; ++r) {
    const RowIndex i = row_index(dst, r);
    char* x = row_ptr(a, i);
    auto* out = reinterpret_cast<int32_t*>(row_ptr(dst, i));
    std::iota(out, out + dst->ne[0], 0);
    std::sort(out, out + dst->ne[0], [&](int32_t l, int32_t m) { return f32_at(x, l, a->nb[0]) > f32_at(x, m, a->nb[0]); });
  }
}

}  // namespace engine::cpu
