// Run-time choice between the scalar vector-exp loops and their SIMD twins.
#include "cpu/vec_math.h"

#include "cpu/cpu_features.h"
#include "cpu/simd_kernels.h"

namespace engine::cpu {

double exp_shifted_lanes(const float* x, float shift, float* y, int64_t n) {
  switch (simd_level()) {
    case SimdLevel::kAvx512Bf16:
    case SimdLevel::kAvx512: return avx512::exp_shifted(x, shift, y, n);
    case SimdLevel::kAvx2Vnni:
    case SimdLevel::kAvx2: return avx2::exp_shifted(x, shift, y, n);
    case SimdLevel::kScalar: break;
  }
  double sum = 0.0;
  for (int64_t i = 0; i < n; i += kLanes) {
    for (int64_t l = i; l < i + kLanes; ++l) y[l] = vec_expf(x[l] - shift);
    sum += static_cast<double>(reduce_lanes(y + i));
  }
  return sum;
}

void silu_lanes(const float* x, float* y, int64_t n) {
  switch (simd_level()) {
    case SimdLevel::kAvx512Bf16:
    case SimdLevel::kAvx512: return avx512::silu(x, y, n);
    case SimdLevel::kAvx2Vnni:
    case SimdLevel::kAvx2: return avx2::silu(x, y, n);
    case SimdLevel::kScalar: break;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + vec_expf(-x[i]));
}

}  // namespace engine::cpu
