// Dot products for every weight dtype: the scalar orders, and the run-time choice of their SIMD twins.
#include "cpu/vec_dot.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "cpu/cpu_features.h"
#include "cpu/decode_tuning.h"
#include "cpu/dot_float.h"
#include "cpu/dot_quant.h"
#include "cpu/host_buffer.h"
#include "cpu/repack.h"
#include "cpu/simd_kernels.h"
#include "cpu/work_memory.h"
#include "engine/error.h"
#include "engine/quants.h"
#include "quant_formats.h"

namespace engine::cpu {
namespace {

using namespace engine::quant;

// Elements per step of llama.cpp's tiled GEMM for a float weight type; 0 for other types.
int64_t tiled_float_step(DType weight) {
  switch (weight) {
    case DType::F32: return kTiledStepF32;
    case DType::F16: return kTiledStepF16;
    case DType::BF16: return kTiledStepBF16;
    default: return 0;
  }
}

}  // namespace

bool dot_supported(DType weight) {
  switch (weight) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q8_0:
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: return true;
    default: return false;
  }
}

DType vec_dot_type(DType weight) {
  switch (weight) {
    case DType::F32:
    case DType::F16:
    case DType::BF16: return weight;
    case DType::Q4_0:
    case DType::Q5_0:
    case DType::Q8_0: return DType::Q8_0;
    case DType::Q4_1:
    case DType::Q5_1: return DType::Q8_1;
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: return DType::Q8_K;
    default: throw Error("no CPU dot product for weight dtype " + std::string(dtype_name(weight)));
  }
}

void quantize_activation(DType weight, const float* x, void* dst, int64_t n) {
  const DType act = vec_dot_type(weight);
  switch (simd_level()) {
    case SimdLevel::kAvx512Bf16:
    case SimdLevel::kAvx512:
      if (avx512::quantize_activation(act, x, dst, n)) return;
      break;
    case SimdLevel::kAvx2Vnni:
    case SimdLevel::kAvx2:
      if (avx2::quantize_activation(act, x, dst, n)) return;
      break;
    case SimdLevel::kScalar: break;
  }
  if (act == DType::Q8_0) return quantize_q8_0(x, static_cast<BlockQ8_0*>(dst), n / 32, Q8Flavor::kSimd);
  if (act == DType::Q8_1) return quantize_q8_1(x, static_cast<BlockQ8_1*>(dst), n / 32, Q8Flavor::kSimd);
  quantize_row(act, x, dst, n);
}

DotOrder dot_order(DType weight, int64_t k, int64_t rows, int64_t cols, bool kv_span) {
  const DotOrder row = kv_span ? DotOrder::kRowPadded : DotOrder::kRow;
  if (cols < 2) return row;
  const int64_t step = tiled_float_step(weight);
  // llama.cpp's float GEMM declines k that is not whole steps (its KV spans always are), or
  // weight rows not in fours.
  if (step != 0 && ((!kv_span && k % step != 0) || rows % 4 != 0)) return row;
  return DotOrder::kBatch;
}

DotOrder column_order(DType weight, DotOrder order, int64_t col, int64_t cols) {
  const bool repacked = weight == DType::Q4_0 || weight == DType::Q4_K || weight == DType::Q2_K;
  if (order != DotOrder::kBatch || !repacked) return order;
  return col < cols - cols % 4 ? DotOrder::kBatch : DotOrder::kRow;
}

namespace {

// The scalar reference of every order; `order` is already normalized by dot_tile.
float scalar_dot(DType weight, int64_t n, const void* w, const void* a, DotOrder order) {
  const bool tiled = order == DotOrder::kBatch;
  const bool padded = order == DotOrder::kRowPadded;
  switch (weight) {
    case DType::F32: {
      const auto* x = static_cast<const float*>(w);
      const auto* y = static_cast<const float*>(a);
      return tiled ? dot_f32_tiled(n, x, y) : dot_f32_row(n, x, y, padded);
    }
    case DType::F16: {
      const auto* x = static_cast<const uint16_t*>(w);
      const auto* y = static_cast<const uint16_t*>(a);
      return tiled ? dot_f16_tiled(n, x, y) : dot_f16_row(n, x, y, padded);
    }
    case DType::BF16: {
      const auto* x = static_cast<const uint16_t*>(w);
      const auto* y = static_cast<const uint16_t*>(a);
      return tiled ? dot_bf16_tiled(n, x, y) : dot_bf16_row(n, x, y, padded);
    }
    case DType::Q8_0: return dot_q8_0_lanes(n, w, a);
    case DType::Q4_0: return dot_q4_0_repacked(n, w, a);
    case DType::Q5_0: return dot_q5_0_lanes(n, w, a);
    case DType::Q4_1: return dot_q4_1_lanes(n, w, a);
    case DType::Q5_1: return dot_q5_1_lanes(n, w, a);
    case DType::Q2_K: return tiled ? dot_q2_K_repacked_gemm(n, w, a) : dot_q2_K_repacked(n, w, a);
    case DType::Q3_K: return dot_q3_K_lanes(n, w, a);
    case DType::Q4_K: return tiled ? dot_q4_K_repacked_gemm(n, w, a) : dot_q4_K_repacked(n, w, a);
    case DType::Q5_K: return dot_q5_K_lanes(n, w, a);
    case DType::Q6_K: return dot_q6_K_lanes(n, w, a);
    default: throw Error("no CPU dot product for weight dtype " + std::string(dtype_name(weight)));
  }
}

// The float GEMM order needs whole steps; other rows take the per-row order.
DotOrder tile_order(DType weight, DotOrder order, int64_t n) {
  return order == DotOrder::kBatch && n % std::max<int64_t>(1, tiled_float_step(weight)) != 0 ? DotOrder::kRow : order;
}

// dot_tile_unpacking's work memory: one packed group in the file layout.
size_t unpacked_group_bytes(const DotTile& t) { return work_bytes(kPackRows * t.w_stride); }

// The scalar code reads the file layout: each packed group is unpacked first.
void dot_tile_unpacking(DType weight, DotOrder order, const DotTile& t) {
  if (t.work_size < unpacked_group_bytes(t)) throw Error("dot_tile: work memory too small");
  for (int64_t r0 = 0; r0 < t.rows; r0 += kPackRows) {
    unpack_group(weight, t.n, t.w, r0, t.chunk_blocks, t.work);
    DotTile group = t;
    group.w = t.work;
    group.rows = std::min(kPackRows, t.rows - r0);
    group.out = t.out + r0 * static_cast<int64_t>(t.out_row);
    group.packed = false;
    group.work = nullptr;  // the scalar dots of the file layout take none
    group.work_size = 0;
    dot_tile_at(SimdLevel::kScalar, weight, order, group);
  }
}

}  // namespace

size_t dot_tile_work_size_at(SimdLevel level, DType weight, DotOrder order, const DotTile& t) {
  order = tile_order(weight, order, t.n);
  switch (level) {
    case SimdLevel::kAvx512Bf16:
    case SimdLevel::kAvx512: return avx512::dot_tile_work_size(weight, order, t);
    case SimdLevel::kAvx2Vnni:
      return vnni_encoding() == VnniEncoding::kVex ? avx2_vnni::dot_tile_work_size(weight, order, t)
                                                   : avx2_vnni_evex::dot_tile_work_size(weight, order, t);
    case SimdLevel::kAvx2: return avx2::dot_tile_work_size(weight, order, t);
    case SimdLevel::kScalar: break;
  }
  return t.packed ? unpacked_group_bytes(t) : 0;
}

size_t dot_tile_work_size(DType weight, DotOrder order, const DotTile& t) {
  size_t bytes = dot_tile_work_size_at(simd_level(), weight, order, t);
  // One column may run on any form up to the level in use (decode_tuning.h): enough for each,
  // so that no size depends on what the timing chose.
  if (t.cols == 1)
    for (SimdLevel form : {SimdLevel::kAvx2, SimdLevel::kAvx2Vnni})
      if (form < simd_level()) bytes = std::max(bytes, dot_tile_work_size_at(form, weight, order, t));
  return bytes;
}

void dot_tile_at(SimdLevel level, DType weight, DotOrder order, const DotTile& t) {
  order = tile_order(weight, order, t.n);
  if (t.packed && level == SimdLevel::kScalar) return dot_tile_unpacking(weight, order, t);
  switch (level) {
    case SimdLevel::kAvx512Bf16:
    case SimdLevel::kAvx512:
      if (avx512::dot_tile(weight, order, t, level == SimdLevel::kAvx512Bf16)) return;
      break;
    case SimdLevel::kAvx2Vnni:
      if (vnni_encoding() == VnniEncoding::kVex ? avx2_vnni::dot_tile(weight, order, t) : avx2_vnni_evex::dot_tile(weight, order, t))
        return;
      break;
    case SimdLevel::kAvx2:
      if (avx2::dot_tile(weight, order, t)) return;
      break;
    case SimdLevel::kScalar: break;
  }
  for (int64_t r = 0; r < t.rows; ++r)
    for (int64_t c = 0; c < t.cols; ++c) {
      const float v = scalar_dot(weight, t.n, t.w + r * t.w_stride, t.a + c * t.a_stride, order);
      std::memcpy(t.out + r * t.out_row + c * t.out_col, &v, sizeof v);
    }
}

void dot_tile(DType weight, DotOrder order, const DotTile& t) {
  if (t.cols > 1) return dot_tile_at(simd_level(), weight, order, t);
  dot_column(weight, order, t, std::min(t.requests, decode_requests(weight, t.n)));
}

void dot_column(DType weight, DotOrder order, const DotTile& t, StreamRequests requests) {
  DotTile column = t;
  column.requests = requests;
  dot_tile_at(decode_level(weight), weight, order, column);
}

float dot(DType weight, int64_t n, const void* w, const void* a, DotOrder order) {
  float v = 0;
  DotTile t{n, static_cast<const char*>(w), 0, 1, static_cast<const char*>(a), 0, 1, reinterpret_cast<char*>(&v), 0, 0};
  HostBuffer work;
  work.reserve(dot_tile_work_size(weight, order, t));
  t.work = static_cast<char*>(work.data());
  t.work_size = work.size();
  dot_tile(weight, order, t);
  return v;
}

}  // namespace engine::cpu
