#pragma once
// Typed access to the parameters of the ops that have any (Tensor::params holds them): the
// graph's op constructors set them, the kernels of every backend and the cost model read them,
// and none of them names a raw params[] index. Each accessor throws Error on a node of another op.
#include <cstdint>

#include "engine/tensor.h"

namespace engine {

struct RopeParams {
  int32_t n_rot = 0;         // rotated dimensions per head
  int32_t mode = kRopeNormal;
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;
  float attn_factor = 1.0f;  // cos and sin scaled by it (rope.scaling.attn_factor, long-context Phi-3)
};
RopeParams rope_params(const Tensor& rope);
void set_rope_params(Tensor& rope, const RopeParams& p);

struct MulMatParams {
  bool kv_span = false;      // k is a span of KV-cache positions (kMulMatKvSpan)
  bool causal = false;       // attention under a causal mask (kMulMatCausal)
  int32_t causal_past = 0;   // with causal: activation column c is the query at KV position causal_past + c
};
MulMatParams mul_mat_params(const Tensor& mul_mat);
void set_mul_mat_params(Tensor& mul_mat, const MulMatParams& p);

// SCALE's factor, and SOFT_MAX's scale of its input.
float scale_param(const Tensor& scale_or_soft_max);
void set_scale_param(Tensor& scale_or_soft_max, float scale);

// RMS_NORM's and NORM's epsilon.
float eps_param(const Tensor& norm);
void set_eps_param(Tensor& norm, float eps);

}  // namespace engine
