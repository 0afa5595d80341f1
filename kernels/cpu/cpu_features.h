#pragma once
// Which instruction set the CPU kernels use, chosen at run time from what the CPU reports.
// Every SIMD kernel is bit-identical to its scalar twin, so the level changes speed only.
// AMX tiles are the exception, switched separately: they change Q8_0 prefill results.
#include <optional>
#include <string_view>
#include <vector>

namespace engine::cpu {

enum class SimdLevel {
  kScalar,      // portable lane-by-lane code (the reference)
  kAvx2,        // AVX2 + FMA + F16C; 16-lane orders run on pairs of 8-lane registers
  kAvx2Vnni,    // as kAvx2, dot products with 256-bit VNNI (AVX-VNNI or AVX-512 VNNI); other ops kAvx2's
  kAvx512,      // AVX-512 F/BW/DQ/VL + VNNI; AVX512_BF16 emulated
  kAvx512Bf16,  // as kAvx512, with the native bf16 dot-product instruction
};

// The level in use: the best the CPU has, capped by set_simd_level_cap, ENGINE_CPU_SCALAR=1 and
// ENGINE_CPU_SIMD=scalar|avx2|avx2-vnni|avx512 (to run, say, the AVX2 kernels on an AVX-512 machine).
SimdLevel simd_level();
// The best level this CPU supports.
SimdLevel cpu_simd_level();
// Caps the level in use (tests and benchmarks compare levels on the same machine).
void set_simd_level_cap(SimdLevel cap);
// "scalar", "avx2", "avx2-vnni", "avx512", "avx512-bf16"; and back (nullopt for another name).
const char* simd_level_name(SimdLevel level);
std::optional<SimdLevel> simd_level_from_name(std::string_view name);

// The encodings of kAvx2Vnni's dot-product instructions: AVX-VNNI's (VEX: Intel from Alder Lake
// and Sapphire Rapids, AMD from Zen 5) and AVX-512 VNNI's on 256-bit registers (EVEX: AMD Zen 4,
// Intel's earlier AVX-512 cores). The ones this CPU runs, EVEX first (its 32 registers spill less:
// the K-quants' products 5-25 % faster on one core); and the one in use, the first unless set
// (tests check each).
enum class VnniEncoding { kVex, kEvex };
const std::vector<VnniEncoding>& cpu_vnni_encodings();
VnniEncoding vnni_encoding();
void set_vnni_encoding(VnniEncoding encoding);

// Whether Q8_0 prefill multiplies run on AMX-BF16 tiles (mul_mat_amx.h): the CPU has them, the
// OS grants the process their state, the level in use is kAvx512Bf16, and neither
// set_amx_enabled(false) nor ENGINE_CPU_AMX=0 turned them off.
bool amx_in_use();
void set_amx_enabled(bool enabled);

}  // namespace engine::cpu
