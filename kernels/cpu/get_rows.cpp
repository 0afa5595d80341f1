// GET_ROWS on the CPU: dst[:, i, j] = dequantized row ids[i, j] of a 2-d table, or of batch j
// of a 3-d one (an expert weight per token).
#include <cstdint>
#include <cstring>
#include <string>

#include "cpu/kernels.h"
#include "cpu/row_split.h"
#include "engine/error.h"
#include "engine/quants.h"

namespace engine::cpu {

bool get_rows_supports(DType table) {
  switch (table) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q8_0:
    case DType::Q8_1:
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::Q8_K: return true;
    default: return false;
  }
}

void get_rows(const ComputeParams& p, Tensor* dst) {
  const Tensor* table = dst->src[0];
  const Tensor* ids = dst->src[1];
  // Shapes and dtypes were checked when the graph was built (Graph::get_rows) and by supports();
  // the ids are data, checked here.

  const int64_t n0 = ids->ne[0];
  const WorkRange rows = split_work(n0 * ids->ne[1], p.ith, p.nth);
  for (int64_t r = rows.begin; r < rows.end; ++r) {
    const int64_t i = r % n0, j = r / n0;
    int32_t id;
    std::memcpy(&id, static_cast<const char*>(ids->data) + i * ids->nb[0] + j * ids->nb[1], sizeof id);
    if (id < 0 || id >= table->ne[1])
      throw Error("get_rows '" + dst->name + "': id " + std::to_string(id) + " is outside table '" + table->name +
                  "' of " + std::to_string(table->ne[1]) + " rows");
    const char* src = static_cast<const char*>(table->data) + static_cast<int64_t>(id) * table->nb[1] +
                      (table->ne[2] > 1 ? j * table->nb[2] : 0);
    float* out = reinterpret_cast<float*>(static_cast<char*>(dst->data) + i * dst->nb[1] + j * dst->nb[2]);
    dequantize_row(table->type, src, out, table->ne[0]);
  }
}

}  // namespace engine::cpu
