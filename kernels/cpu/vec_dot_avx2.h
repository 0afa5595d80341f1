#pragma once
// AVX2/FMA/F16C dot products; call only when the CPU has those features (see vec_dot.cpp).
#include <cstdint>

namespace engine::cpu::avx2 {

bool cpu_has_features();
float dot_q8_0_q8_0(int64_t n, const void* x, const void* y);

}  // namespace engine::cpu::avx2
