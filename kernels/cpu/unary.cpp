// Element-wise activations: SILU and GELU (tanh approximation, as ggml).
#include <cmath>

#include "cpu/kernels.h"
#include "cpu/rows.h"

namespace engine::cpu {
namespace {

template <typename Fn>
void unary_op(const ComputeParams& p, Tensor* dst, Fn fn) {
  const Tensor* a = dst->src[0];
  const RowRange rows = split_rows(dst->nrows(), p);
  for (int64_t r = rows.begin; r < rows.end; ++r) {
    const RowIndex i = row_index(dst, r);
    char* d = row_ptr(dst, i);
    char* x = row_ptr(a, i);
    for (int64_t k = 0; k < dst->ne[0]; ++k) f32_at(d, k, dst->nb[0]) = fn(f32_at(x, k, a->nb[0]));
  }
}

constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
constexpr float kGeluCoefA = 0.044715f;

}  // namespace

void silu(const ComputeParams& p, Tensor* dst) {
  unary_op(p, dst, [](float x) { return x / (1.0f + std::exp(-x)); });
}

void gelu(const ComputeParams& p, Tensor* dst) {
  unary_op(p, dst, [](float x) { return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kGeluCoefA * x * x))); });
}

}  // namespace engine::cpu
