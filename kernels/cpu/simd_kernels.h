#pragma once
// Entry points of the SIMD kernels, one namespace per instruction set (simd_avx2.cpp,
// simd_avx2_vnni.cpp, simd_avx2_vnni_evex.cpp, simd_avx512.cpp). Each reproduces its scalar twin bit for bit; the dispatch in vec_dot.cpp,
// soft_max.cpp and unary.cpp picks them by simd_level().
#include <cstddef>
#include <cstdint>

#include "cpu/vec_dot.h"
#include "engine/dtype.h"

namespace engine::cpu {

namespace avx2 {
bool dot_tile(DType weight, DotOrder order, const DotTile& t);
size_t dot_tile_work_size(DType weight, DotOrder order, const DotTile& t);
bool quantize_activation(DType act, const float* x, void* dst, int64_t n);
double exp_shifted(const float* x, float shift, float* y, int64_t n);
void silu(const float* x, float* y, int64_t n);
void soft_max_row(const float* x, const float* m, int64_t live, float scale, float* d, int64_t n, float* w);
}  // namespace avx2

// AVX2's dot products with the 256-bit VNNI instructions, in AVX-VNNI's encoding and in
// AVX-512 VNNI's (SimdLevel::kAvx2Vnni: cpu_features.h says which runs).
namespace avx2_vnni {
bool dot_tile(DType weight, DotOrder order, const DotTile& t);
size_t dot_tile_work_size(DType weight, DotOrder order, const DotTile& t);
}  // namespace avx2_vnni
namespace avx2_vnni_evex {
bool dot_tile(DType weight, DotOrder order, const DotTile& t);
size_t dot_tile_work_size(DType weight, DotOrder order, const DotTile& t);
}  // namespace avx2_vnni_evex

namespace avx512 {
// native_bf16: use the AVX512_BF16 dot-product instruction instead of its emulation.
bool dot_tile(DType weight, DotOrder order, const DotTile& t, bool native_bf16);
size_t dot_tile_work_size(DType weight, DotOrder order, const DotTile& t);
bool quantize_activation(DType act, const float* x, void* dst, int64_t n);
double exp_shifted(const float* x, float shift, float* y, int64_t n);
void silu(const float* x, float* y, int64_t n);
void soft_max_row(const float* x, const float* m, int64_t live, float scale, float* d, int64_t n, float* w);
}  // namespace avx512

}  // namespace engine::cpu
