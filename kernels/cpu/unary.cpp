// Element-wise activations: SILU and GELU (tanh approximation, evaluated as ggml does).
#include <cmath>
#include <vector>

#include "cpu/kernels.h"
#include "cpu/rows.h"
#include "cpu/vec_math.h"
#include "engine/quants.h"

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

// 1 + a*x*x as one fused multiply-add, as llama.cpp's natively built table has it: one f16
// table entry (x = -1.999) rounds differently without the fusion.
float gelu_tanh(float x) { return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * std::fma(kGeluCoefA * x, x, 1.0f))); }

// ggml (GGML_GELU_FP16) looks f32 GELU up in a table indexed by the input rounded to f16,
// holding f16 results; using the same table keeps activations identical to llama.cpp's.
const std::vector<uint16_t>& gelu_f16_table() {
  static const std::vector<uint16_t> table = [] {
    std::vector<uint16_t> t(1u << 16);
    for (uint32_t h = 0; h < t.size(); ++h) t[h] = fp32_to_fp16(gelu_tanh(fp16_to_fp32(static_cast<uint16_t>(h))));
    return t;
  }();
  return table;
}

}  // namespace

// Whole 16-lane groups of a row use the vector exp, the tail expf, as llama.cpp does.
void silu(const ComputeParams& p, Tensor* dst) {
  const Tensor* a = dst->src[0];
  const int64_t n = dst->ne[0], vector_end = n / kLanes * kLanes;
  const RowRange rows = split_rows(dst->nrows(), p);
  for (int64_t r = rows.begin; r < rows.end; ++r) {
    const RowIndex i = row_index(dst, r);
    char* d = row_ptr(dst, i);
    char* x = row_ptr(a, i);
    int64_t k = 0;
    if (a->nb[0] == sizeof(float) && dst->nb[0] == sizeof(float)) {
      silu_lanes(reinterpret_cast<const float*>(x), reinterpret_cast<float*>(d), vector_end);
      k = vector_end;
    }
    for (; k < n; ++k) {
      const float v = f32_at(x, k, a->nb[0]);
      f32_at(d, k, dst->nb[0]) = v / (1.0f + (k < vector_end ? vec_expf(-v) : std::exp(-v)));
    }
  }
}

void gelu(const ComputeParams& p, Tensor* dst) {
  const uint16_t* table = gelu_f16_table().data();
  unary_op(p, dst, [table](float x) {
    if (x <= -10.0f) return 0.0f;
    if (x >= 10.0f) return x;
    return fp16_to_fp32(table[fp32_to_fp16(x)]);
  });
}

}  // namespace engine::cpu
