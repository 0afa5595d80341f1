// TEMPORARY, test-only: weak F32 stand-ins for symbols other branches implement (matmul,
// get_rows and copy kernels in kernels/cpu, Plan::bind in engine/src/plan.cpp, the f16
// conversions of engine/quants.h), so the
// cpuops branch links on its own. DELETE THIS FILE when merging those branches: a static
// archive member is never pulled in to replace a weak symbol already defined here.
#include <cstring>

#include "cpu/kernels.h"
#include "engine/plan.h"
#include "engine/quants.h"

namespace engine::cpu {

__attribute__((weak)) bool mul_mat_supports(DType weight) { return weight == DType::F32; }
__attribute__((weak)) bool get_rows_supports(DType table) { return table == DType::F32; }
__attribute__((weak)) bool copy_supports(DType from, DType to) { return from == DType::F32 && to == DType::F32; }
__attribute__((weak)) size_t mul_mat_work_size(const Tensor*, int) { return 0; }

__attribute__((weak)) void mul_mat(const ComputeParams& p, Tensor* dst) {
  const Tensor* a = dst->src[0];
  const Tensor* b = dst->src[1];
  const auto* base_a = static_cast<const char*>(a->data);
  const auto* base_b = static_cast<const char*>(b->data);
  for (int64_t i3 = 0; i3 < dst->ne[3]; ++i3)
    for (int64_t i2 = 0; i2 < dst->ne[2]; ++i2)
      for (int64_t j = 0; j < dst->ne[1]; ++j)
        for (int64_t i = p.ith; i < dst->ne[0]; i += p.nth) {
          const char* ra = base_a + i * a->nb[1] + (i2 / (b->ne[2] / a->ne[2])) * a->nb[2] +
                           (i3 / (b->ne[3] / a->ne[3])) * a->nb[3];
          const char* rb = base_b + j * b->nb[1] + i2 * b->nb[2] + i3 * b->nb[3];
          float sum = 0;
          for (int64_t k = 0; k < a->ne[0]; ++k)
            sum += *reinterpret_cast<const float*>(ra + k * a->nb[0]) * *reinterpret_cast<const float*>(rb + k * b->nb[0]);
          *reinterpret_cast<float*>(static_cast<char*>(dst->data) + i * dst->nb[0] + j * dst->nb[1] + i2 * dst->nb[2] +
                                    i3 * dst->nb[3]) = sum;
        }
}

__attribute__((weak)) void get_rows(const ComputeParams& p, Tensor* dst) {
  const Tensor* table = dst->src[0];
  const Tensor* ids = dst->src[1];
  for (int64_t r = p.ith; r < ids->ne[0] * ids->ne[1]; r += p.nth) {
    const int32_t id = static_cast<const int32_t*>(ids->data)[r];
    std::memcpy(static_cast<char*>(dst->data) + r * dst->nb[1], static_cast<const char*>(table->data) + id * table->nb[1],
                static_cast<size_t>(table->ne[0]) * sizeof(float));
  }
}

__attribute__((weak)) void cont(const ComputeParams& p, Tensor* dst) {
  const Tensor* a = dst->src[0];
  for (int64_t r = p.ith; r < a->nrows(); r += p.nth) {
    const int64_t i1 = r % a->ne[1], i2 = (r / a->ne[1]) % a->ne[2], i3 = r / (a->ne[1] * a->ne[2]);
    for (int64_t k = 0; k < a->ne[0]; ++k) {
      const int64_t flat = r * a->ne[0] + k;  // row-major element order of src0 == dst's
      const int64_t d1 = (flat / dst->ne[0]) % dst->ne[1], d2 = (flat / (dst->ne[0] * dst->ne[1])) % dst->ne[2],
                    d3 = flat / (dst->ne[0] * dst->ne[1] * dst->ne[2]);
      *reinterpret_cast<float*>(static_cast<char*>(dst->data) + (flat % dst->ne[0]) * dst->nb[0] + d1 * dst->nb[1] +
                                d2 * dst->nb[2] + d3 * dst->nb[3]) =
          *reinterpret_cast<const float*>(static_cast<const char*>(a->data) + k * a->nb[0] + i1 * a->nb[1] +
                                          i2 * a->nb[2] + i3 * a->nb[3]);
    }
  }
}

}  // namespace engine::cpu

namespace engine {

__attribute__((weak)) float fp16_to_fp32(uint16_t h) {
  _Float16 f;
  std::memcpy(&f, &h, sizeof h);
  return static_cast<float>(f);
}

__attribute__((weak)) uint16_t fp32_to_fp16(float x) {
  const auto f = static_cast<_Float16>(x);
  uint16_t h;
  std::memcpy(&h, &f, sizeof h);
  return h;
}

__attribute__((weak)) void Plan::bind(const Graph& graph, void* base) const {
  for (const auto& [tensor, offset] : offsets) const_cast<Tensor*>(tensor)->data = static_cast<char*>(base) + offset;
  for (Tensor* node : graph.nodes())
    if (node->view_src) node->data = static_cast<char*>(node->view_src->data) + node->view_offs;
}

}  // namespace engine
