#pragma once
// Dot products of F32, F16 and BF16 rows in the exact floating-point order of llama.cpp's
// CPU backend on an AVX-512 (AVX512_BF16) machine, evaluated lane by lane. Two orders per
// type: "tiled" is its tiled GEMM (used for two or more activation columns when the shapes
// allow), "row" is its per-row vec_dot (one column, or when the tiled GEMM declines).
#include <cstdint>

namespace engine::cpu {

// Elements per step of the tiled GEMM: its kernels need k to be a multiple of this.
constexpr int64_t kTiledStepF32 = 16;   // one 16-lane float vector
constexpr int64_t kTiledStepF16 = 16;   // 16 halves widened to one float vector
constexpr int64_t kTiledStepBF16 = 32;  // 32 bf16 pairs feeding one 16-lane dot-product vector

// Tiled GEMM order, n a multiple of the type's step: one 16-lane FMA accumulator, lane tree.
float dot_f32_tiled(int64_t n, const float* w, const float* a);
float dot_f16_tiled(int64_t n, const uint16_t* w, const uint16_t* a);
// BF16 pairs accumulate as the AVX512_BF16 dot-product instruction does (see dot_float.cpp).
float dot_bf16_tiled(int64_t n, const uint16_t* w, const uint16_t* a);

// Per-row vec_dot order, any n. `padded`: the rows are the start of a span that llama.cpp
// pads with zeros to a multiple of 256, so the leftovers run through the vector lanes.
float dot_f32_row(int64_t n, const float* w, const float* a, bool padded = false);
float dot_f16_row(int64_t n, const uint16_t* w, const uint16_t* a, bool padded = false);
float dot_bf16_row(int64_t n, const uint16_t* w, const uint16_t* a, bool padded = false);

}  // namespace engine::cpu
