#pragma once
// MUL_MAT of Q8_0 weights by many activation columns (prefill) on AMX-BF16 tiles.
//
// Each weight d·q is exact in float; it is split into two bf16 terms, hi (truncated) + lo
// (rounded rest), which hold it to about 2^-17. The float activations are split the same way.
// Three tile products per 32-element chunk (lo·hi, hi·hi, hi·lo) accumulate in float, so
// each output is the float dot product of the weight row and the activation column to about
// 1e-6 of the sum of |w·x|. The activations are not quantized to Q8_0 here: the result is not
// the integer eight-lane order of the other Q8_0 kernels (docs/architecture.md, Departures).
#include <cstddef>

#include "cpu/kernels.h"

namespace engine::cpu {

// Fewest activation columns for which the AMX path runs: below it a weight panel's
// conversion costs more than its tile products save.
constexpr int64_t kAmxMinColumns = 20;

// Whether mul_mat takes the AMX path for dst: amx_in_use(), Q8_0 weights of one batch, rows
// a multiple of 32, dense float activations of one batch, at least kAmxMinColumns of them, no
// causal or KV-span limits.
bool mul_mat_amx_applies(const Tensor* dst);

// Scratch bytes mul_mat_amx needs with nth threads.
size_t mul_mat_amx_work_size(const Tensor* dst, int nth);

// The multiply; p.wsize must be at least mul_mat_amx_work_size(dst, p.nth).
void mul_mat_amx(const ComputeParams& p, Tensor* dst);

}  // namespace engine::cpu
