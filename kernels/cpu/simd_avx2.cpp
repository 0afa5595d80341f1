// The 256-bit SIMD kernels (simd_avx2_impl.h) for AVX2 + FMA + F16C, byte dot products on
// maddubs and madd. Compiled for those features by target pragma only, and called only when the
// CPU has them (cpu_features.cpp).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "cpu/repack.h"
#include "cpu/simd_kernels.h"
#include "cpu/vec_math.h"
#include "cpu/work_memory.h"
#include "engine/error.h"
#include "engine/quants.h"
#include "quant_formats.h"

// Everything below (and nothing above: the headers' inline functions stay portable).
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,bmi,bmi2")

#define ENGINE_SIMD_VNNI 0
namespace engine::cpu::avx2 {
#include "cpu/simd_avx2_impl.h"
}  // namespace engine::cpu::avx2
#undef ENGINE_SIMD_VNNI

#pragma GCC pop_options
