// SOFT_MAX along dim 0: softmax(x * scale + mask); mask row i1 serves every head (dims 2, 3).
// x * scale, then + mask, max subtraction, the vector exp on whole 16-lane groups (each group
// summed by lanes, then into a double) and expf on the tail, as llama.cpp evaluates it; a row
// that is all -inf becomes zeros.
#include <algorithm>
#include <cmath>
#include <limits>

#include "cpu/cpu_features.h"
#include "cpu/kernels.h"
#include "cpu/rows.h"
#include "cpu/simd_kernels.h"
#include "cpu/vec_math.h"
#include "engine/op_params.h"
#include "engine/error.h"

namespace engine::cpu {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// max(v[0..n)) as kLanes running maxima, so the compiler can keep them in one vector.
float lanes_max(const float* v, int64_t n) {
  float lane[kLanes];
  for (float& l : lane) l = kNegInf;
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] = std::max(lane[l], v[k + l]);
  float max = kNegInf;
  for (; k < n; ++k) max = std::max(max, v[k]);
  for (float l : lane) max = std::max(max, l);
  return max;
}

// A thread's work memory: the row's scaled inputs (soft_max_row's w), then with a mask each mask
// row's live prefix.
size_t thread_slice_bytes(const Tensor* dst) {
  return work_bytes(static_cast<size_t>(dst->ne[0]) * sizeof(float)) +
         (dst->src[1] ? work_bytes(static_cast<size_t>(dst->ne[1]) * sizeof(int64_t)) : 0);
}

}  // namespace

size_t soft_max_work_size(const Tensor* dst, int nth) { return static_cast<size_t>(nth) * thread_slice_bytes(dst); }

int64_t mask_live_prefix(const float* m, int64_t n) {
  int64_t live = n;
  while (live > 0 && m[live - 1] == kNegInf) --live;
  return live;
}

void soft_max_row(const float* x, const float* m, int64_t live, float scale, float* d, int64_t n, float* w) {
  switch (simd_level()) {
    case SimdLevel::kAvx512Bf16:
    case SimdLevel::kAvx512: return avx512::soft_max_row(x, m, live, scale, d, n, w);
    case SimdLevel::kAvx2Vnni:
    case SimdLevel::kAvx2: return avx2::soft_max_row(x, m, live, scale, d, n, w);
    case SimdLevel::kScalar: break;
  }
  const int64_t vector_end = n / kLanes * kLanes;
  const int64_t groups_end = std::min(vector_end, (live + kLanes - 1) / kLanes * kLanes);
  const int64_t evaluated = std::max(groups_end, live);
  for (int64_t k = 0; k < live; ++k) w[k] = x[k] * scale;
  if (m)
    for (int64_t k = 0; k < live; ++k) w[k] += m[k];
  std::fill(w + live, w + evaluated, kNegInf);
  std::fill(d + evaluated, d + n, 0.0f);
  const float max = lanes_max(w, live);
  if (max == kNegInf) {
    std::fill(d, d + evaluated, 0.0f);
    return;
  }
  double sum = exp_shifted_lanes(w, max, w, groups_end);
  for (int64_t k = vector_end; k < live; ++k) {
    w[k] = std::exp(w[k] - max);
    sum += static_cast<double>(w[k]);
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t k = 0; k < evaluated; ++k) d[k] = w[k] * inv;
}

void soft_max(const ComputeParams& p, Tensor* dst) {
  const Tensor* a = dst->src[0];
  const Tensor* mask = dst->src[1];
  if (a->nb[0] != sizeof(float) || dst->nb[0] != sizeof(float) || (mask && mask->nb[0] != sizeof(float)))
    throw Error("soft_max '" + dst->name + "': rows must be dense");
  const float scale = scale_param(*dst);
  const int64_t n = dst->ne[0];
  require_work(p, soft_max_work_size(dst, p.nth), dst);
  char* mine = thread_work(p, 0, thread_slice_bytes(dst));
  auto* w = reinterpret_cast<float*>(mine);
  // A causal mask row ends in -inf: those outputs are exact zeros and add zeros to the sum, so
  // only the lane groups before that tail are evaluated, and the input there is not read. Only
  // the mask rows of this step's tokens are scanned (the padding rows are all -inf).
  auto* live_prefix = reinterpret_cast<int64_t*>(mine + work_bytes(static_cast<size_t>(n) * sizeof(float)));
  if (mask)
    for (int64_t i1 = 0; i1 < dst->ne[1]; ++i1)
      live_prefix[i1] = mask_live_prefix(reinterpret_cast<const float*>(row_ptr(mask, i1, 0, 0)), n);
  const RowRange rows = split_rows(dst->nrows(), p);
  for (int64_t r = rows.begin; r < rows.end; ++r) {
    const RowIndex i = row_index(dst, r);
    const auto* m = mask ? reinterpret_cast<const float*>(row_ptr(mask, i.i1, 0, 0)) : nullptr;
    soft_max_row(reinterpret_cast<const float*>(row_ptr(a, i)), m, m ? live_prefix[i.i1] : n, scale,
                 reinterpret_cast<float*>(row_ptr(dst, i)), n, w);
  }
}

}  // namespace engine::cpu
