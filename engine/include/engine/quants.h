#pragma once
// Conversions between float rows and every dtype's GGUF block layout.
#include <cstdint>

#include "engine/dtype.h"

namespace engine {

float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);  // round to nearest even
float bf16_to_fp32(uint16_t h);
uint16_t fp32_to_bf16(float f);  // round to nearest even

// Converts n elements (a whole number of blocks) of `type` at src into floats.
void dequantize_row(DType type, const void* src, float* dst, int64_t n);
// Converts n floats into `type` (a whole number of blocks), as ggml's reference quantizers do.
void quantize_row(DType type, const float* src, void* dst, int64_t n);

}  // namespace engine
