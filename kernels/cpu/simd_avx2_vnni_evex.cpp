// The 256-bit SIMD kernels (simd_avx2_impl.h) with AVX-512 VNNI's byte and int16 dot products
// on 256-bit registers (EVEX-encoded: AMD Zen 4, Intel's AVX-512 cores without AVX-VNNI), where a
// 512-bit operation may run as two halves. Their decode products only; every other op runs AVX2's.
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
#pragma GCC target("avx2,fma,f16c,bmi,bmi2,avx512vl,avx512vnni")

// Only the dot products leave this file: the bodies of the other ops go unused.
#pragma GCC diagnostic ignored "-Wunused-function"
#define ENGINE_SIMD_VNNI 1
#define ENGINE_DPBUSD256 _mm256_dpbusd_epi32
#define ENGINE_DPWSSD256 _mm256_dpwssd_epi32
namespace engine::cpu::avx2_vnni_evex {
#include "cpu/simd_avx2_impl.h"
}  // namespace engine::cpu::avx2_vnni_evex
#undef ENGINE_SIMD_VNNI
#undef ENGINE_DPBUSD256
#undef ENGINE_DPWSSD256

#pragma GCC pop_options
