// Run-time choice of the CPU kernels' instruction set.
#include "cpu/cpu_features.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

#include "cpu/vec_dot.h"

namespace engine::cpu {
namespace {

SimdLevel detect() {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || !__builtin_cpu_supports("f16c"))
    return SimdLevel::kScalar;
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512vnni");
  if (!avx512) return SimdLevel::kAvx2;
  return __builtin_cpu_supports("avx512bf16") ? SimdLevel::kAvx512Bf16 : SimdLevel::kAvx512;
}

SimdLevel initial_cap() {
  const char* env = std::getenv("ENGINE_CPU_SCALAR");
  return env && std::string(env) == "1" ? SimdLevel::kScalar : SimdLevel::kAvx512Bf16;
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

void set_cpu_features_override(bool scalar_only) {
  set_simd_level_cap(scalar_only ? SimdLevel::kScalar : SimdLevel::kAvx512Bf16);
}

bool simd_active() { return simd_level() != SimdLevel::kScalar; }

}  // namespace engine::cpu
