// f16 weights (the KV cache above all) meet activations rounded to f16, as ggml's CPU dot products
// take them, summed in the order of the CPU backend's vector lanes (kernels/cpu/dot_float.cpp):
// the next op rounds these sums to 2^-11 or 2^-8 again, where any other order would flip
// roundings and the logits stray. `source` (a constant where called) names where the two sides
// are: DOT_SRC0_SRC1, weights in src0 and activations in src1 (f32, `step1` apart from `act`);
// DOT_SRC2_SHARED, weights in src2 and activations in the includer's shared array
// SHARED_ACTIVATIONS. Weight rows start at byte `row`.
#include "vec_math.glsl"

#define DOT_SRC0_SRC1 0
#define DOT_SRC2_SHARED 1

float f16_weight(const uint source, uint row, uint i, uint k) {
  if (i >= k) return 0.0;
  return float(source == DOT_SRC0_SRC1 ? src0_f16[(row + 2 * i) / 2] : src2_f16[(row + 2 * i) / 2]);
}

float f16_activation(const uint source, uint act, uint step1, uint i, uint k) {
  if (i >= k) return 0.0;
#if defined(SHARED_ACTIVATIONS)
  if (source == DOT_SRC2_SHARED) return float(float16_t(SHARED_ACTIVATIONS[i]));
#endif
  return float(float16_t(src1_f32[act + i * step1]));
}

// The CPU's fused multiply-add: a product of two halves is exact in f32, so one rounding either way.
float multiply_add(float w, float a, float acc) {
  precise const float v = acc + w * a;
  return v;
}

// The batch order: one 16-lane FMA vector. The row order: four, 64 elements a step, folded
// (0 + 2, 1 + 3, then 0 + 1) before the lane sum; the leftovers added as a double would add
// them, or, over a padded span, as one more step. Elements past k are zeros.
float dot_f16(const uint source, uint row, uint act, uint step1, uint k, uint order) {
  float acc[64];
  for (uint j = 0; j < 64; ++j) acc[j] = 0.0;
  uint i = 0;
  if (order == ORDER_BATCH) {
    float v[16];
    for (; i < k; i += 16)
      for (uint l = 0; l < 16; ++l)
        acc[l] = multiply_add(f16_weight(source, row, i + l, k), f16_activation(source, act, step1, i + l, k), acc[l]);
    for (uint l = 0; l < 16; ++l) v[l] = acc[l];
    return lanes_sum(v);
  }
  const uint whole = order == ORDER_ROW_PADDED ? k : k / 64 * 64;
  for (; i < whole; i += 64)
    for (uint j = 0; j < 64; ++j)
      acc[j] = multiply_add(f16_weight(source, row, i + j, k), f16_activation(source, act, step1, i + j, k), acc[j]);
  float v[16];
  for (uint l = 0; l < 16; ++l) {
    precise const float a = acc[l] + acc[l + 32];
    precise const float b = acc[l + 16] + acc[l + 48];
    precise const float c = a + b;
    v[l] = c;
  }
  vec2 sum = vec2(lanes_sum(v), 0.0);
  for (; i < k; ++i) {
    precise const float product = f16_weight(source, row, i, k) * f16_activation(source, act, step1, i, k);
    sum = pair_add(sum, vec2(product, 0.0));
  }
  return sum.x + sum.y;
}
