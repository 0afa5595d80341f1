#pragma once
// Quantized dot products, each in the floating-point order of the kernel llama.cpp's CPU backend
// runs for that weight type on an AVX-512/VNNI x86 CPU (what produced the reference logits).
// Integer partial sums are exact in any order, so only the float steps are reproduced: which
// integer partial sums become floats, FMA versus multiply-add, and the horizontal-sum tree.
// All take n elements: w_row in the weight type, act_row in its vec_dot activation format.
#include <cstdint>

namespace engine::cpu {

// Weights repacked to 8-row interleaved blocks (Q4_0, Q4_K, Q2_K), single-column GEMV: one
// float accumulator per output, one FMA per block of its exact integer dot (K-quants: a second
// one for the mins).
float dot_q4_0_repacked(int64_t n, const void* w_row, const void* act_row);
float dot_q4_K_repacked(int64_t n, const void* w_row, const void* act_row);
float dot_q2_K_repacked(int64_t n, const void* w_row, const void* act_row);
// The repacked K-quant GEMM (columns in groups of four): as the GEMV, but one FMA per 64
// elements of a super-block (Q4_K) or per 128 (Q2_K), for the scaled sums and the mins alike.
float dot_q4_K_repacked_gemm(int64_t n, const void* w_row, const void* act_row);
float dot_q2_K_repacked_gemm(int64_t n, const void* w_row, const void* act_row);

// Per-row AVX2 vec_dot (and the tiled GEMM, same order for these): eight float lanes, each the
// FMA-accumulated integer sum of its four-element slices, then the 8-lane horizontal sum.
float dot_q8_0_lanes(int64_t n, const void* w_row, const void* act_row);
float dot_q5_0_lanes(int64_t n, const void* w_row, const void* act_row);
float dot_q4_1_lanes(int64_t n, const void* w_row, const void* act_row);
float dot_q5_1_lanes(int64_t n, const void* w_row, const void* act_row);
float dot_q3_K_lanes(int64_t n, const void* w_row, const void* act_row);
float dot_q5_K_lanes(int64_t n, const void* w_row, const void* act_row);
float dot_q6_K_lanes(int64_t n, const void* w_row, const void* act_row);

}  // namespace engine::cpu
