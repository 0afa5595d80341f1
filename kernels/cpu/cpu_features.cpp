// Run-time choice of the CPU kernels' instruction set.
#include "cpu/cpu_features.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "cpu/vec_dot.h"
#include "engine/error.h"

namespace engine::cpu {
namespace {

// AVX-VNNI: CPUID.(EAX=7, ECX=1):EAX bit 4 (GCC 12's __builtin_cpu_supports("avxvnni") reads 0 where it is).
bool detect_avx_vnni() {
#if defined(__x86_64__) && defined(__linux__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax & (1u << 4));
#else
  return false;
#endif
}

// What every SIMD level builds on: AVX2, FMA and F16C.
bool has_avx2_base() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
}

std::vector<VnniEncoding> detect_vnni_encodings() {
  std::vector<VnniEncoding> encodings;
  if (!has_avx2_base()) return encodings;
  if (__builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni")) encodings.push_back(VnniEncoding::kEvex);
  if (detect_avx_vnni()) encodings.push_back(VnniEncoding::kVex);
  return encodings;
}

SimdLevel detect() {
  if (!has_avx2_base()) return SimdLevel::kScalar;
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512vnni");
  if (!avx512) return cpu_vnni_encodings().empty() ? SimdLevel::kAvx2 : SimdLevel::kAvx2Vnni;
  return __builtin_cpu_supports("avx512bf16") ? SimdLevel::kAvx512Bf16 : SimdLevel::kAvx512;
}

std::atomic<VnniEncoding>& encoding_in_use() {
  static std::atomic<VnniEncoding> in_use{cpu_vnni_encodings().empty() ? VnniEncoding::kVex : cpu_vnni_encodings().front()};
  return in_use;
}

SimdLevel initial_cap() {
  const char* scalar = std::getenv("ENGINE_CPU_SCALAR");
  if (scalar && std::string(scalar) == "1") return SimdLevel::kScalar;
  const char* simd = std::getenv("ENGINE_CPU_SIMD");
  if (!simd || !*simd) return SimdLevel::kAvx512Bf16;
  if (const auto level = simd_level_from_name(simd)) return *level == SimdLevel::kAvx512 ? SimdLevel::kAvx512Bf16 : *level;
  throw Error(std::string("ENGINE_CPU_SIMD=") + simd + ": expected scalar, avx2, avx2-vnni or avx512");
}

// AMX-TILE and AMX-BF16 (CPUID.7.0:EDX bits 24, 22), then the tile data state granted by
// Linux (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA), which it withholds by default.
bool detect_amx() {
#if defined(__x86_64__) && defined(__linux__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) || !(edx & (1u << 24)) || !(edx & (1u << 22))) return false;
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

std::atomic<bool>& amx_enabled() {
  static std::atomic<bool> enabled{[] {
    const char* env = std::getenv("ENGINE_CPU_AMX");
    return !(env && std::string(env) == "0");
  }()};
  return enabled;
}

std::atomic<SimdLevel>& level() {
  static std::atomic<SimdLevel> active{std::min(initial_cap(), cpu_simd_level())};
  return active;
}

}  // namespace

SimdLevel cpu_simd_level() {
  static const SimdLevel best = detect();
  return best;
}

SimdLevel simd_level() { return level().load(std::memory_order_relaxed); }

void set_simd_level_cap(SimdLevel cap) { level().store(std::min(cap, cpu_simd_level())); }

const char* simd_level_name(SimdLevel level) {
  switch (level) {
    case SimdLevel::kScalar: return "scalar";
    case SimdLevel::kAvx2: return "avx2";
    case SimdLevel::kAvx2Vnni: return "avx2-vnni";
    case SimdLevel::kAvx512: return "avx512";
    case SimdLevel::kAvx512Bf16: return "avx512-bf16";
  }
  return "?";
}

std::optional<SimdLevel> simd_level_from_name(std::string_view name) {
  for (SimdLevel level : {SimdLevel::kScalar, SimdLevel::kAvx2, SimdLevel::kAvx2Vnni, SimdLevel::kAvx512, SimdLevel::kAvx512Bf16})
    if (name == simd_level_name(level)) return level;
  return std::nullopt;
}

const std::vector<VnniEncoding>& cpu_vnni_encodings() {
  static const std::vector<VnniEncoding> encodings = detect_vnni_encodings();
  return encodings;
}

VnniEncoding vnni_encoding() { return encoding_in_use().load(std::memory_order_relaxed); }

void set_vnni_encoding(VnniEncoding encoding) {
  const std::vector<VnniEncoding>& here = cpu_vnni_encodings();
  if (std::find(here.begin(), here.end(), encoding) == here.end())
    throw Error(std::string("this CPU lacks the ") + (encoding == VnniEncoding::kVex ? "AVX-VNNI" : "AVX-512 VNNI") + " encoding");
  encoding_in_use().store(encoding);
}

void set_cpu_features_override(bool scalar_only) {
  set_simd_level_cap(scalar_only ? SimdLevel::kScalar : SimdLevel::kAvx512Bf16);
}

bool amx_in_use() {
  static const bool available = detect_amx();
  return available && simd_level() == SimdLevel::kAvx512Bf16 && amx_enabled().load(std::memory_order_relaxed);
}

void set_amx_enabled(bool enabled) { amx_enabled().store(enabled); }

bool simd_active() { return simd_level() != SimdLevel::kScalar; }

}  // namespace engine::cpu
