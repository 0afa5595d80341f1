// GET_ROWS on the CPU: dst[:, i, j] = dequantized row ids[i, j] of a 2-d table.
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
  auto fail = [&](const std::string& why) { throw Error("get_rows '" + dst->name + "': " + why); };
  if (!table || !ids) fail("missing source");
  if (!get_rows_supports(table->type)) fail("unsupported table dtype " + std::string(dtype_name(table->type)));
  if (ids->type != DType::I32 || dst->type != DType::F32) fail("ids must be i32 and dst f32");
  if (table->ne[2] != 1 || table->ne[3] != 1 || ids->ne[2] != 1 || ids->ne[3] != 1) fail("table and ids must be 2-d");
  if (dst->ne[0] != table->ne[0] || dst->ne[1] != ids->ne[0] || dst->ne[2] != ids->ne[1])
    fail("dst " + dst->shape_str() + " does not match table " + table->shape_str() + " and ids " + ids->shape_str());
  if (table->nb[0] != dtype_info(table->type).block_bytes || dst->nb[0] != sizeof(float))
    fail("table and dst rows must be dense");

  const int64_t n0 = ids->ne[0];
  const WorkRange rows = split_work(n0 * ids->ne[1], p.ith, p.nth);
  for (int64_t r = rows.begin; r < rows.end; ++r) {
    const int64_t i = r % n0, j = r / n0;
    int32_t id;
    std::memcpy(&id, static_cast<const char*>(ids->data) + i * ids->nb[0] + j * ids->nb[1], sizeof id);
    if (id < 0 || id >= table->ne[1])
      fail("id " + std::to_string(id) + " is outside table '" + table->name + "' of " + std::to_string(table->ne[1]) +
           " rows");
    const char* src = static_cast<const char*>(table->data) + static_cast<int64_t>(id) * table->nb[1];
    float* out = reinterpret_cast<float*>(static_cast<char*>(dst->data) + i * dst->nb[1] + j * dst->nb[2]);
    dequantize_row(table->type, src, out, table->ne[0]);
  }
}

}  // namespace engine::cpu
