// Scalar dot products for every weight dtype, and the run-time choice of the AVX2 paths.
#include "cpu/vec_dot.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cpu/dot_float.h"
#include "cpu/vec_dot_avx2.h"
#include "engine/error.h"
#include "engine/quants.h"
#include "quant_formats.h"

namespace engine::cpu {
namespace {

using namespace engine::quant;

bool default_simd() {
  const char* env = std::getenv("ENGINE_CPU_SCALAR");
  const bool forced_scalar = env && std::string(env) == "1";
  return !forced_scalar && avx2::cpu_has_features();
}

std::atomic<bool>& simd_flag() {
  static std::atomic<bool> flag{default_simd()};
  return flag;
}

// Elements per step of llama.cpp's tiled GEMM for a float weight type; 0 for other types.
int64_t tiled_float_step(DType weight) {
  switch (weight) {
    case DType::F32: return kTiledStepF32;
    case DType::F16: return kTiledStepF16;
    case DType::BF16: return kTiledStepBF16;
    default: return 0;
  }
}

// Sum of products of 32 four/five-bit weight levels (already offset) with int8 activations.
int dot32(const int* w, const int8_t* a) {
  int sum = 0;
  for (int j = 0; j < kQK; ++j) sum += w[j] * a[j];
  return sum;
}

void levels_q4(const uint8_t* qs, int offset, int* l) {
  for (int j = 0; j < 16; ++j) {
    l[j] = (qs[j] & 0x0F) - offset;
    l[j + 16] = (qs[j] >> 4) - offset;
  }
}

void levels_q5(const uint8_t* qs, const uint8_t* qh_bytes, int offset, int* l) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  for (int j = 0; j < 16; ++j) {
    l[j] = ((qs[j] & 0x0F) | static_cast<int>(((qh >> j) << 4) & 0x10)) - offset;
    l[j + 16] = ((qs[j] >> 4) | static_cast<int>((qh >> (j + 12)) & 0x10)) - offset;
  }
}

float dot_q4_0(int64_t nb, const BlockQ4_0* x, const BlockQ8_0* y) {
  float sum = 0;
  int l[kQK];
  for (int64_t i = 0; i < nb; ++i) {
    levels_q4(x[i].qs, 8, l);
    sum += static_cast<float>(dot32(l, y[i].qs)) * fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d);
  }
  return sum;
}

float dot_q5_0(int64_t nb, const BlockQ5_0* x, const BlockQ8_0* y) {
  float sum = 0;
  int l[kQK];
  for (int64_t i = 0; i < nb; ++i) {
    levels_q5(x[i].qs, x[i].qh, 16, l);
    sum += static_cast<float>(dot32(l, y[i].qs)) * fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d);
  }
  return sum;
}

float dot_q8_0(int64_t nb, const BlockQ8_0* x, const BlockQ8_0* y) {
  float sum = 0;
  for (int64_t i = 0; i < nb; ++i) {
    int s = 0;
    for (int j = 0; j < kQK; ++j) s += x[i].qs[j] * y[i].qs[j];
    sum += static_cast<float>(s) * fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d);
  }
  return sum;
}

// Q4_1 / Q5_1: w = d*l + m, so dot = d*dy*sum(l*q) + m*sy with sy = dy*sum(q).
template <typename Block>
float dot_with_min(int64_t nb, const Block* x, const BlockQ8_1* y, void (*levels)(const Block&, int*)) {
  float sum = 0;
  int l[kQK];
  for (int64_t i = 0; i < nb; ++i) {
    levels(x[i], l);
    const float d = fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d);
    sum += d * static_cast<float>(dot32(l, y[i].qs)) + fp16_to_fp32(x[i].m) * fp16_to_fp32(y[i].s);
  }
  return sum;
}

// K-quants against Q8_K: per 16-element group, integer dot times the group scale; the
// group mins meet the activation's precomputed group sums.
float dot_k(DType type, int64_t nb, const uint8_t* x, const BlockQ8_K* y) {
  const size_t block_bytes = dtype_info(type).block_bytes;
  KBlockInts b;
  float sum = 0;
  for (int64_t i = 0; i < nb; ++i) {
    unpack_k_block(type, x + i * block_bytes, b);
    int isum = 0, msum = 0;
    for (int g = 0; g < 16; ++g) {
      int s = 0;
      for (int l = 0; l < 16; ++l) s += b.q[16 * g + l] * y[i].qs[16 * g + l];
      isum += b.scale[g] * s;
      msum += b.min[g] * y[i].bsums[g];
    }
    sum += b.d * y[i].d * static_cast<float>(isum) - b.dmin * y[i].d * static_cast<float>(msum);
  }
  return sum;
}

}  // namespace

void set_cpu_features_override(bool scalar_only) {
  simd_flag().store(!scalar_only && avx2::cpu_has_features());
}

bool simd_active() { return simd_flag().load(std::memory_order_relaxed); }

bool dot_supported(DType weight) {
  switch (weight) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q8_0:
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: return true;
    default: return false;
  }
}

DType vec_dot_type(DType weight) {
  switch (weight) {
    case DType::F32:
    case DType::F16:
    case DType::BF16: return weight;
    case DType::Q4_0:
    case DType::Q5_0:
    case DType::Q8_0: return DType::Q8_0;
    case DType::Q4_1:
    case DType::Q5_1: return DType::Q8_1;
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: return DType::Q8_K;
    default: throw Error("no CPU dot product for weight dtype " + std::string(dtype_name(weight)));
  }
}

void quantize_activation(DType weight, const float* x, void* dst, int64_t n) {
  const DType act = vec_dot_type(weight);
  if (act == DType::Q8_0) return quantize_q8_0(x, static_cast<BlockQ8_0*>(dst), n / 32, Q8Flavor::kSimd);
  if (act == DType::Q8_1) return quantize_q8_1(x, static_cast<BlockQ8_1*>(dst), n / 32, Q8Flavor::kSimd);
  quantize_row(act, x, dst, n);
}

DotOrder dot_order(DType weight, int64_t k, int64_t rows, int64_t cols, bool kv_span) {
  const DotOrder row = kv_span ? DotOrder::kRowPadded : DotOrder::kRow;
  if (cols < 2) return row;
  const int64_t step = tiled_float_step(weight);
  // llama.cpp's float GEMM declines k that is not whole steps (its KV spans always are), or
  // weight rows not in fours.
  if (step != 0 && ((!kv_span && k % step != 0) || rows % 4 != 0)) return row;
  return DotOrder::kBatch;
}

float dot(DType weight, int64_t n, const void* w, const void* a, DotOrder order) {
  const bool simd = simd_active();
  const int64_t nb = n / dtype_info(weight).block_size;
  const bool tiled = order == DotOrder::kBatch && n % std::max<int64_t>(1, tiled_float_step(weight)) == 0;
  const bool padded = order == DotOrder::kRowPadded;
  switch (weight) {
    case DType::F32: {
      const auto* x = static_cast<const float*>(w);
      const auto* y = static_cast<const float*>(a);
      return tiled ? dot_f32_tiled(n, x, y) : dot_f32_row(n, x, y, padded);
    }
    case DType::F16: {
      const auto* x = static_cast<const uint16_t*>(w);
      const auto* y = static_cast<const uint16_t*>(a);
      return tiled ? dot_f16_tiled(n, x, y) : dot_f16_row(n, x, y, padded);
    }
    case DType::BF16: {
      const auto* x = static_cast<const uint16_t*>(w);
      const auto* y = static_cast<const uint16_t*>(a);
      return tiled ? dot_bf16_tiled(n, x, y) : dot_bf16_row(n, x, y, padded);
    }
    case DType::Q4_0:
      if (simd) return avx2::dot_q4_0_q8_0(n, w, a);
      return dot_q4_0(nb, static_cast<const BlockQ4_0*>(w), static_cast<const BlockQ8_0*>(a));
    case DType::Q5_0: return dot_q5_0(nb, static_cast<const BlockQ5_0*>(w), static_cast<const BlockQ8_0*>(a));
    case DType::Q8_0:
      if (simd) return avx2::dot_q8_0_q8_0(n, w, a);
      return dot_q8_0(nb, static_cast<const BlockQ8_0*>(w), static_cast<const BlockQ8_0*>(a));
    case DType::Q4_1:
      return dot_with_min<BlockQ4_1>(nb, static_cast<const BlockQ4_1*>(w), static_cast<const BlockQ8_1*>(a),
                                     [](const BlockQ4_1& b, int* l) { levels_q4(b.qs, 0, l); });
    case DType::Q5_1:
      return dot_with_min<BlockQ5_1>(nb, static_cast<const BlockQ5_1*>(w), static_cast<const BlockQ8_1*>(a),
                                     [](const BlockQ5_1& b, int* l) { levels_q5(b.qs, b.qh, 0, l); });
    case DType::Q4_K:
      if (simd) return avx2::dot_q4_K_q8_K(n, w, a);
      return dot_k(weight, nb, static_cast<const uint8_t*>(w), static_cast<const BlockQ8_K*>(a));
    case DType::Q6_K:
      if (simd) return avx2::dot_q6_K_q8_K(n, w, a);
      return dot_k(weight, nb, static_cast<const uint8_t*>(w), static_cast<const BlockQ8_K*>(a));
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::Q5_K: return dot_k(weight, nb, static_cast<const uint8_t*>(w), static_cast<const BlockQ8_K*>(a));
    default: throw Error("no CPU dot product for weight dtype " + std::string(dtype_name(weight)));
  }
}

}  // namespace engine::cpu
