







// The SIMD kernels' bodies, written once over a small vector vocabulary and compiled per
// instruction set: simd_avx2_impl.h and simd_avx512.cpp each include this file inside an
// anonymous namespace of their own, after defining
//   VF (16 float lanes) with vf_zero, vf_set1, vf_load_f32, vf_load_f16, vf_load_first (the first
//   n elements, zeros after), vf_add, vf_sub, vf_mul, vf_div, vf_max (std::max(b, a)), vf_fma
//   (a*b+c), vf_fold8 (lanes i + (i + 8)), vf_store, vf_store_f16, vf_exp_scale (j * 2^n,
//   0 / inf where |n| > 192);
//   dpbf16<Native>(acc, w, a) with the AVX512_BF16 semantics (see dot_float.cpp), the emulated
//   one (Native false) inside a Bf16Denormals scope;
//   ENGINE_SIMD_VNNI (1: the 256-bit integer dot-product instruction exists, ENGINE_DPBUSD256 its
//   intrinsic), ENGINE_TILE_ROWS and
//   ENGINE_TILE_COLS (the float GEMM's register block of outputs), ENGINE_VF_REDUCE4 where
//   vf_reduce4 (four vf_reduce at once, as an __m128) exists;
//   VI / VR (kRowLanes 32-bit integer / float lanes: 16 on AVX-512, 8 on AVX2) with
//   load_row_quads, vi_load, vi_widen_i8, vr_rows_f16, vi_* and vr_* (see simd_avx512.cpp), for kernels that give each weight row a
//   lane (Q4_0, Q4_K) or each row its eight lanes (legacy blocks: kRowLanes / 8 rows a register).
// The quantized orders come from llama.cpp's AVX2 code (eight-lane accumulators, or one float
// per output); wider registers only hold more rows at once.
// Every function here evaluates floating point exactly as its scalar twin does (same roundings
// in the same order per output); only which outputs are computed together differs.
// These files have no include guards and include nothing themselves: their includer provides both.

// The parts, in the order each needs the ones before it:
#include "cpu/simd_tiles_impl.h"
#include "cpu/simd_float_dots_impl.h"
#include "cpu/simd_int_helpers_impl.h"
#include "cpu/simd_legacy_dots_impl.h"
#include "cpu/simd_k_quant_dots_impl.h"
#include "cpu/simd_quantize_impl.h"
#include "cpu/simd_exp_impl.h"
