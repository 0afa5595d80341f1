#pragma once
// Which instruction set the CPU kernels use, chosen at run time from what the CPU reports.
// Every SIMD kernel is bit-identical to its scalar twin, so the level changes speed only.
namespace engine::cpu {

enum class SimdLevel {
  kScalar,      // portable lane-by-lane code (the reference)
  kAvx2,        // AVX2 + FMA + F16C; 16-lane orders run on pairs of 8-lane registers
  kAvx512,      // AVX-512 F/BW/DQ/VL + VNNI; AVX512_BF16 emulated
  kAvx512Bf16,  // as kAvx512, with the native bf16 dot-product instruction
};

// The level in use: the best the CPU has, capped by set_simd_level_cap and ENGINE_CPU_SCALAR=1.
SimdLevel simd_level();
// The best level this CPU supports.
SimdLevel cpu_simd_level();
// Caps the level in use (tests and benchmarks compare levels on the same machine).
void set_simd_level_cap(SimdLevel cap);

}  // namespace engine::cpu
