#pragma once
// Row addressing and the per-thread row split shared by the CPU kernels.
#include <algorithm>
#include <cstdint>

#include "cpu/kernels.h"

namespace engine::cpu {

struct RowRange {
  int64_t begin;
  int64_t end;
};

// Thread ith's contiguous share of n rows (ceil-split, as ggml does).
inline RowRange split_rows(int64_t n, const ComputeParams& p) {
  const int64_t per = (n + p.nth - 1) / p.nth;
  const int64_t begin = std::min(n, per * p.ith);
  return {begin, std::min(n, begin + per)};
}

// Row indices (i1, i2, i3) of flat row r of a tensor with shape ne.
struct RowIndex {
  int64_t i1, i2, i3;
};

inline RowIndex row_index(const Tensor* t, int64_t r) {
  const int64_t i1 = r % t->ne[1];
  const int64_t i2 = (r / t->ne[1]) % t->ne[2];
  return {i1, i2, r / (t->ne[1] * t->ne[2])};
}

inline char* row_ptr(const Tensor* t, int64_t i1, int64_t i2, int64_t i3) {
  return static_cast<char*>(t->data) + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

inline char* row_ptr(const Tensor* t, RowIndex r) { return row_ptr(t, r.i1, r.i2, r.i3); }

// Element i0 of an f32 row with element stride nb0.
inline float& f32_at(char* row, int64_t i0, size_t nb0) { return *reinterpret_cast<float*>(row + i0 * nb0); }

}  // namespace engine::cpu
