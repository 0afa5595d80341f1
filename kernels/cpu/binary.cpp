// ADD, MUL and DIV: src1 repeats over every dimension of src0 (a norm weight [n] over [n, tokens]).
#include "cpu/kernels.h"
#include "cpu/rows.h"

namespace engine::cpu {
namespace {

template <typename Fn>
void binary_op(const ComputeParams& p, Tensor* dst, Fn fn) {
  const Tensor* a = dst->src[0];
  const Tensor* b = dst->src[1];
  const int64_t n = dst->ne[0];
  const int64_t nb_len = b->ne[0];
  const bool dense = dst->nb[0] == sizeof(float) && a->nb[0] == sizeof(float) && b->nb[0] == sizeof(float);
  const RowRange rows = split_rows(dst->nrows(), p);
  for (int64_t r = rows.begin; r < rows.end; ++r) {
    const RowIndex i = row_index(dst, r);
    char* d = row_ptr(dst, i);
    const char* x = row_ptr(a, i);
    const char* y = row_ptr(b, i.i1 % b->ne[1], i.i2 % b->ne[2], i.i3 % b->ne[3]);
    if (dense && nb_len == n) {
      auto* df = reinterpret_cast<float*>(d);
      const auto* xf = reinterpret_cast<const float*>(x);
      const auto* yf = reinterpret_cast<const float*>(y);
      for (int64_t k = 0; k < n; ++k) df[k] = fn(xf[k], yf[k]);
      continue;
    }
    for (int64_t k = 0; k < n; ++k) {
      const float xv = *reinterpret_cast<const float*>(x + k * a->nb[0]);
      const float yv = *reinterpret_cast<const float*>(y + (k % nb_len) * b->nb[0]);
      f32_at(d, k, dst->nb[0]) = fn(xv, yv);
    }
  }
}

}  // namespace

void add(const ComputeParams& p, Tensor* dst) {
  binary_op(p, dst, [](float x, float y) { return x + y; });
}

void mul(const ComputeParams& p, Tensor* dst) {
  binary_op(p, dst, [](float x, float y) { return x * y; });
}

void div(const ComputeParams& p, Tensor* dst) {
  binary_op(p, dst, [](float x, float y) { return x / y; });
}

}  // namespace engine::cpu
