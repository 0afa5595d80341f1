// Row conversions for every dtype: dispatch on the type to its family's converter.
#include "engine/quants.h"

#include <cstring>
#include <string>

#include "engine/error.h"
#include "quant_formats.h"

namespace engine {
namespace {

// Number of blocks in n elements of `type`; throws when n is not a whole number of blocks.
int64_t block_count(DType type, int64_t n) {
  const auto& info = dtype_info(type);
  if (n < 0 || n % info.block_size != 0)
    throw Error(std::to_string(n) + " elements is not a whole number of " + std::string(info.name) + " blocks");
  return n / info.block_size;
}

}  // namespace

void dequantize_row(DType type, const void* src, float* dst, int64_t n) {
  using namespace quant;
  const int64_t nb = block_count(type, n);
  switch (type) {
    case DType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(static_cast<const uint16_t*>(src)[i]);
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(static_cast<const uint16_t*>(src)[i]);
      return;
    case DType::Q4_0: dequantize_q4_0(static_cast<const BlockQ4_0*>(src), dst, nb); return;
    case DType::Q4_1: dequantize_q4_1(static_cast<const BlockQ4_1*>(src), dst, nb); return;
    case DType::Q5_0: dequantize_q5_0(static_cast<const BlockQ5_0*>(src), dst, nb); return;
    case DType::Q5_1: dequantize_q5_1(static_cast<const BlockQ5_1*>(src), dst, nb); return;
    case DType::Q8_0: dequantize_q8_0(static_cast<const BlockQ8_0*>(src), dst, nb); return;
    case DType::Q8_1: dequantize_q8_1(static_cast<const BlockQ8_1*>(src), dst, nb); return;
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::Q8_K: dequantize_k(type, src, dst, nb); return;
    default: throw Error("dequantize_row: unsupported dtype " + std::string(dtype_name(type)));
  }
}

void quantize_row(DType type, const float* src, void* dst, int64_t n) {
  using namespace quant;
  const int64_t nb = block_count(type, n);
  switch (type) {
    case DType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = fp32_to_fp16(src[i]);
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = fp32_to_bf16(src[i]);
      return;
    case DType::Q4_0: quantize_q4_0(src, static_cast<BlockQ4_0*>(dst), nb); return;
    case DType::Q4_1: quantize_q4_1(src, static_cast<BlockQ4_1*>(dst), nb); return;
    case DType::Q5_0: quantize_q5_0(src, static_cast<BlockQ5_0*>(dst), nb); return;
    case DType::Q5_1: quantize_q5_1(src, static_cast<BlockQ5_1*>(dst), nb); return;
    case DType::Q8_0: quantize_q8_0(src, static_cast<BlockQ8_0*>(dst), nb); return;
    case DType::Q8_1: quantize_q8_1(src, static_cast<BlockQ8_1*>(dst), nb); return;
    case DType::Q2_K: quantize_q2_K(src, static_cast<BlockQ2_K*>(dst), nb); return;
    case DType::Q3_K: quantize_q3_K(src, static_cast<BlockQ3_K*>(dst), nb); return;
    case DType::Q4_K: quantize_q4_K(src, static_cast<BlockQ4_K*>(dst), nb); return;
    case DType::Q5_K: quantize_q5_K(src, static_cast<BlockQ5_K*>(dst), nb); return;
    case DType::Q6_K: quantize_q6_K(src, static_cast<BlockQ6_K*>(dst), nb); return;
    case DType::Q8_K: quantize_q8_K(src, static_cast<BlockQ8_K*>(dst), nb); return;
    default: throw Error("quantize_row: unsupported dtype " + std::string(dtype_name(type)));
  }
}

}  // namespace engine
