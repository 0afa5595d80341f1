// K-quants (Q2_K..Q6_K) and Q8_K: 256-element super-blocks, as ggml's reference quantizers.
#include <algorithm>
#include <cmath>

#include "engine/error.h"
#include "engine/quants.h"
#include "quant_formats.h"

namespace engine::quant {
namespace {

constexpr float kGroupMaxEps = 1e-15f;

// Symmetric levels in [-nmax, nmax-1] for n values, scale refined by weighted least squares (x^2 weights).
float make_qx_quants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, 0);
    return 0.f;
  }
  auto level = [&](float iscale, int i) { return std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i]))); };
  float iscale = -nmax / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = level(iscale, i);
    L[i] = static_cast<int8_t>(l + nmax);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * l;
    suml2 += w * l * l;
  }
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(nmax + 0.1f * is) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = level(iscale, i);
      const float w = x[i] * x[i];
      sumlx += w * x[i] * l;
      suml2 += w * l * l;
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(nmax + level(iscale, i));
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// Q3_K's symmetric levels with a few rounds of coordinate descent on each level.
float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, 0);
    return 0.f;
  }
  const float iscale = -nmax / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
    L[i] = static_cast<int8_t>(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * l;
    suml2 += w * l * l;
  }
  for (int itry = 0; itry < 5; ++itry) {
    int n_changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * L[i];
      if (slx > 0) {
        float sl2 = suml2 - w * L[i] * L[i];
        const int new_l = std::max(-nmax, std::min(nmax - 1, nearest_int(x[i] * sl2 / slx)));
        if (new_l != L[i]) {
          slx += w * x[i] * new_l;
          sl2 += w * new_l * new_l;
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = static_cast<int8_t>(new_l);
            sumlx = slx;
            suml2 = sl2;
            ++n_changed;
          }
        }
      }
    }
    if (!n_changed) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Asymmetric levels in [0, nmax] with scale and min fitted by weighted least squares over a
// small grid of candidate scales. Returns the scale; *the_min receives -min (>= 0).
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min,
                       uint8_t* Laux, float rmin, float rdelta, int nstep, bool use_mad) {
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    min = std::min(min, x[i]);
    max = std::max(max, x[i]);
    sum_w += weights[i];
    sum_x += weights[i] * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::fill(L, L + n, 0);
    *the_min = -min;
    return 0.f;
  }
  auto error_of = [&](float diff) { return use_mad ? std::fabs(diff) : diff * diff; };
  float iscale = nmax / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = static_cast<uint8_t>(std::max(0, std::min(nmax, nearest_int(iscale * (x[i] - min)))));
    best_error += weights[i] * error_of(scale * L[i] + min - x[i]);
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * is + nmax) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::max(0, std::min(nmax, nearest_int(iscale * (x[i] - min))));
      Laux[i] = static_cast<uint8_t>(l);
      const float w = weights[i];
      sum_l += w * l;
      sum_l2 += w * l * l;
      sum_xl += w * l * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) cur_error += weights[i] * error_of(this_scale * Laux[i] + this_min - x[i]);
      if (cur_error < best_error) {
        std::copy(Laux, Laux + n, L);
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

// The 6-bit scale and min of sub-block j in the 12-byte Q4_K/Q5_K scale field.
void get_scale_min_k4(int j, const uint8_t* q, int& d, int& m) {
  if (j < 4) {
    d = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// Stores 8 six-bit scales and mins in the 12-byte Q4_K/Q5_K scale field.
void pack_scale_min_k4(const uint8_t* ls, const uint8_t* lm, uint8_t* scales) {
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      scales[j] = ls[j];
      scales[j + 4] = lm[j];
    } else {
      scales[j + 4] = static_cast<uint8_t>((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
      scales[j - 4] |= static_cast<uint8_t>((ls[j] >> 4) << 6);
      scales[j] |= static_cast<uint8_t>((lm[j] >> 4) << 6);
    }
  }
}

// The 6-bit signed scale of 16-element group j of a Q3_K block.
int q3_k_scale(const uint8_t* scales, int j) {
  const int low = j < 8 ? scales[j] & 0xF : scales[j - 8] >> 4;
  const int high = (scales[8 + j % 4] >> (2 * (j / 4))) & 3;
  return (low | (high << 4)) - 32;
}

// Packs 256 two-bit levels as Q2_K/Q3_K store them: byte l of each 32 holds 4 groups of 32.
void pack_2bit(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < kQK_K; j += 128)
    for (int l = 0; l < 32; ++l)
      qs[j / 4 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
}

// Q4_K and Q5_K share everything but the level count and the search grid.
template <typename Block>
void quantize_k_asym(const float* x, Block& y, int nmax, float rmin, float rdelta, int nstep, uint8_t* L) {
  float mins[8], scales[8], weights[32];
  uint8_t Laux[32];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; ++j) {
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
    scales[j] = make_qkx2_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, rmin, rdelta, nstep, false);
    max_scale = std::max(max_scale, scales[j]);
    max_min = std::max(max_min, mins[j]);
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  uint8_t ls[8], lm[8];
  for (int j = 0; j < 8; ++j) {
    ls[j] = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_scale * scales[j])));
    lm[j] = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_min * mins[j])));
  }
  std::memset(y.scales, 0, sizeof y.scales);
  pack_scale_min_k4(ls, lm, y.scales);
  y.d = fp32_to_fp16(max_scale / 63.f);
  y.dmin = fp32_to_fp16(max_min / 63.f);
  for (int j = 0; j < 8; ++j) {
    int sc, m;
    get_scale_min_k4(j, y.scales, sc, m);
    const float d = fp16_to_fp32(y.d) * static_cast<float>(sc);
    if (d == 0) continue;
    const float dm = fp16_to_fp32(y.dmin) * static_cast<float>(m);
    for (int ii = 0; ii < 32; ++ii)
      L[32 * j + ii] = static_cast<uint8_t>(std::max(0, std::min(nmax, nearest_int((x[32 * j + ii] + dm) / d))));
  }
}

}  // namespace

void quantize_q2_K(const float* x, BlockQ2_K* y, int64_t nb) {
  uint8_t L[kQK_K], Laux[16];
  float weights[16], mins[16], scales[16];
  const float q4scale = 15.f;
  for (int64_t i = 0; i < nb; ++i, x += kQK_K) {
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 16; ++j) {
      for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
      scales[j] = make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, true);
      max_scale = std::max(max_scale, scales[j]);
      max_min = std::max(max_min, mins[j]);
    }
    if (max_scale > 0) {
      const float iscale = q4scale / max_scale;
      for (int j = 0; j < 16; ++j) y[i].scales[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
      y[i].d = fp32_to_fp16(max_scale / q4scale);
    } else {
      std::fill(y[i].scales, y[i].scales + 16, 0);
      y[i].d = fp32_to_fp16(0.f);
    }
    if (max_min > 0) {
      const float iscale = q4scale / max_min;
      for (int j = 0; j < 16; ++j) y[i].scales[j] |= static_cast<uint8_t>(nearest_int(iscale * mins[j]) << 4);
      y[i].dmin = fp32_to_fp16(max_min / q4scale);
    } else {
      y[i].dmin = fp32_to_fp16(0.f);
    }
    for (int j = 0; j < 16; ++j) {
      const float d = fp16_to_fp32(y[i].d) * static_cast<float>(y[i].scales[j] & 0xF);
      if (d == 0) continue;
      const float dm = fp16_to_fp32(y[i].dmin) * static_cast<float>(y[i].scales[j] >> 4);
      for (int ii = 0; ii < 16; ++ii)
        L[16 * j + ii] = static_cast<uint8_t>(std::max(0, std::min(3, nearest_int((x[16 * j + ii] + dm) / d))));
    }
    pack_2bit(L, y[i].qs);
  }
}

void quantize_q3_K(const float* x, BlockQ3_K* y, int64_t nb) {
  int8_t L[kQK_K];
  float scales[16];
  for (int64_t i = 0; i < nb; ++i, x += kQK_K) {
    float max_scale = 0, amax = 0;
    for (int j = 0; j < 16; ++j) {
      scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
      if (std::fabs(scales[j]) > amax) {
        amax = std::fabs(scales[j]);
        max_scale = scales[j];
      }
    }
    std::memset(y[i].scales, 0, 12);
    if (max_scale != 0) {
      const float iscale = -32.f / max_scale;
      for (int j = 0; j < 16; ++j) {
        const int l = std::max(-32, std::min(31, nearest_int(iscale * scales[j]))) + 32;
        if (j < 8)
          y[i].scales[j] = static_cast<uint8_t>(l & 0xF);
        else
          y[i].scales[j - 8] |= static_cast<uint8_t>((l & 0xF) << 4);
        y[i].scales[j % 4 + 8] |= static_cast<uint8_t>((l >> 4) << (2 * (j / 4)));
      }
      y[i].d = fp32_to_fp16(1 / iscale);
    } else {
      y[i].d = fp32_to_fp16(0.f);
    }
    for (int j = 0; j < 16; ++j) {
      const float d = fp16_to_fp32(y[i].d) * static_cast<float>(q3_k_scale(y[i].scales, j));
      if (d == 0) continue;
      for (int ii = 0; ii < 16; ++ii)
        L[16 * j + ii] = static_cast<int8_t>(std::max(-4, std::min(3, nearest_int(x[16 * j + ii] / d))) + 4);
    }
    // High bit of level j goes to hmask[j % 32], bit j / 32.
    std::memset(y[i].hmask, 0, 32);
    uint8_t low[kQK_K];
    for (int j = 0; j < kQK_K; ++j) {
      int l = L[j];
      if (l > 3) {
        y[i].hmask[j % 32] |= static_cast<uint8_t>(1 << (j / 32));
        l -= 4;
      }
      low[j] = static_cast<uint8_t>(l);
    }
    pack_2bit(low, y[i].qs);
  }
}

void quantize_q4_K(const float* x, BlockQ4_K* y, int64_t nb) {
  uint8_t L[kQK_K];
  for (int64_t i = 0; i < nb; ++i, x += kQK_K) {
    quantize_k_asym(x, y[i], 15, -1.f, 0.1f, 20, L);
    uint8_t* q = y[i].qs;
    for (int j = 0; j < kQK_K; j += 64, q += 32)
      for (int l = 0; l < 32; ++l) q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
  }
}

void quantize_q5_K(const float* x, BlockQ5_K* y, int64_t nb) {
  uint8_t L[kQK_K];
  for (int64_t i = 0; i < nb; ++i, x += kQK_K) {
    quantize_k_asym(x, y[i], 31, -0.5f, 0.1f, 15, L);
    std::memset(y[i].qh, 0, 32);
    uint8_t* ql = y[i].qs;
    uint8_t m1 = 1, m2 = 2;
    for (int n = 0; n < kQK_K; n += 64, ql += 32) {
      for (int j = 0; j < 32; ++j) {
        int l1 = L[n + j], l2 = L[n + j + 32];
        if (l1 > 15) {
          l1 -= 16;
          y[i].qh[j] |= m1;
        }
        if (l2 > 15) {
          l2 -= 16;
          y[i].qh[j] |= m2;
        }
        ql[j] = static_cast<uint8_t>(l1 | (l2 << 4));
      }
      m1 = static_cast<uint8_t>(m1 << 2);
      m2 = static_cast<uint8_t>(m2 << 2);
    }
  }
}

void quantize_q6_K(const float* x, BlockQ6_K* y, int64_t nb) {
  int8_t L[kQK_K];
  float scales[16];
  for (int64_t i = 0; i < nb; ++i, x += kQK_K) {
    float max_scale = 0, max_abs_scale = 0;
    for (int ib = 0; ib < 16; ++ib) {
      scales[ib] = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib);
      if (std::fabs(scales[ib]) > max_abs_scale) {
        max_abs_scale = std::fabs(scales[ib]);
        max_scale = scales[ib];
      }
    }
    if (max_abs_scale < kGroupMaxEps) {
      std::memset(&y[i], 0, sizeof(BlockQ6_K));
      continue;
    }
    const float iscale = -128.f / max_scale;
    y[i].d = fp32_to_fp16(1 / iscale);
    for (int ib = 0; ib < 16; ++ib)
      y[i].scales[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
    for (int j = 0; j < 16; ++j) {
      const float d = fp16_to_fp32(y[i].d) * static_cast<float>(y[i].scales[j]);
      if (d == 0) continue;
      for (int ii = 0; ii < 16; ++ii)
        L[16 * j + ii] = static_cast<int8_t>(std::max(-32, std::min(31, nearest_int(x[16 * j + ii] / d))) + 32);
    }
    uint8_t* ql = y[i].ql;
    uint8_t* qh = y[i].qh;
    for (int j = 0; j < kQK_K; j += 128, ql += 64, qh += 32) {
      for (int l = 0; l < 32; ++l) {
        const int a = L[j + l], b = L[j + l + 32], c = L[j + l + 64], e = L[j + l + 96];
        ql[l] = static_cast<uint8_t>((a & 0xF) | ((c & 0xF) << 4));
        ql[l + 32] = static_cast<uint8_t>((b & 0xF) | ((e & 0xF) << 4));
        qh[l] = static_cast<uint8_t>((a >> 4) | ((b >> 4) << 2) | ((c >> 4) << 4) | ((e >> 4) << 6));
      }
    }
  }
}

void quantize_q8_K(const float* x, BlockQ8_K* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK_K) {
    float max = 0, amax = 0;
    for (int j = 0; j < kQK_K; ++j)
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    if (amax == 0) {
      std::memset(&y[i], 0, sizeof(BlockQ8_K));
      continue;
    }
    const float iscale = -127.f / max;
    for (int j = 0; j < kQK_K; ++j) y[i].qs[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * x[j])));
    for (int j = 0; j < 16; ++j) {
      int sum = 0;
      for (int ii = 0; ii < 16; ++ii) sum += y[i].qs[j * 16 + ii];
      y[i].bsums[j] = static_cast<int16_t>(sum);
    }
    y[i].d = 1 / iscale;
  }
}

void unpack_k_scales(DType type, const void* block, KBlockInts& out) {
  switch (type) {
    case DType::Q2_K: {
      const auto& b = *static_cast<const BlockQ2_K*>(block);
      out.d = fp16_to_fp32(b.d);
      out.dmin = fp16_to_fp32(b.dmin);
      for (int g = 0; g < 16; ++g) {
        out.scale[g] = b.scales[g] & 0xF;
        out.min[g] = b.scales[g] >> 4;
      }
      return;
    }
    case DType::Q3_K: {
      const auto& b = *static_cast<const BlockQ3_K*>(block);
      out.d = fp16_to_fp32(b.d);
      out.dmin = 0;
      for (int g = 0; g < 16; ++g) {
        out.scale[g] = q3_k_scale(b.scales, g);
        out.min[g] = 0;
      }
      return;
    }
    case DType::Q4_K:
    case DType::Q5_K: {
      const bool five = type == DType::Q5_K;
      const auto* b4 = static_cast<const BlockQ4_K*>(block);
      const auto* b5 = static_cast<const BlockQ5_K*>(block);
      out.d = fp16_to_fp32(five ? b5->d : b4->d);
      out.dmin = fp16_to_fp32(five ? b5->dmin : b4->dmin);
      const uint8_t* scales = five ? b5->scales : b4->scales;
      for (int j = 0; j < 8; ++j) {
        int sc, m;
        get_scale_min_k4(j, scales, sc, m);
        out.scale[2 * j] = out.scale[2 * j + 1] = sc;
        out.min[2 * j] = out.min[2 * j + 1] = m;
      }
      return;
    }
    case DType::Q6_K: {
      const auto& b = *static_cast<const BlockQ6_K*>(block);
      out.d = fp16_to_fp32(b.d);
      out.dmin = 0;
      for (int g = 0; g < 16; ++g) {
        out.scale[g] = b.scales[g];
        out.min[g] = 0;
      }
      return;
    }
    case DType::Q8_K: {
      out.d = static_cast<const BlockQ8_K*>(block)->d;
      out.dmin = 0;
      std::fill(out.scale, out.scale + 16, 1);
      std::fill(out.min, out.min + 16, 0);
      return;
    }
    default:
      throw Error("unpack_k_scales: " + std::string(dtype_name(type)) + " is not a K-quant");
  }
}

void unpack_k_block(DType type, const void* block, KBlockInts& out) {
  unpack_k_scales(type, block, out);
  switch (type) {
    case DType::Q2_K: {
      const auto& b = *static_cast<const BlockQ2_K*>(block);
      // Element 128*n + 32*j + l sits in qs[32*n + l] at bits 2*j.
      for (int n = 0; n < 2; ++n)
        for (int j = 0; j < 4; ++j)
          for (int l = 0; l < 32; ++l) out.q[128 * n + 32 * j + l] = static_cast<int8_t>((b.qs[32 * n + l] >> (2 * j)) & 3);
      return;
    }
    case DType::Q3_K: {
      const auto& b = *static_cast<const BlockQ3_K*>(block);
      for (int n = 0; n < 2; ++n)
        for (int j = 0; j < 4; ++j) {
          const int hbit = 1 << (4 * n + j);
          for (int l = 0; l < 32; ++l) {
            const int low = (b.qs[32 * n + l] >> (2 * j)) & 3;
            out.q[128 * n + 32 * j + l] = static_cast<int8_t>(low - ((b.hmask[l] & hbit) ? 0 : 4));
          }
        }
      return;
    }
    case DType::Q4_K:
    case DType::Q5_K: {
      const bool five = type == DType::Q5_K;
      const auto* b5 = static_cast<const BlockQ5_K*>(block);
      const uint8_t* qs = five ? b5->qs : static_cast<const BlockQ4_K*>(block)->qs;
      // Element 64*j + l is the low nibble of qs[32*j + l], element 64*j + 32 + l the high one.
      for (int j = 0; j < 4; ++j)
        for (int l = 0; l < 32; ++l) {
          int lo = qs[32 * j + l] & 0xF, hi = qs[32 * j + l] >> 4;
          if (five) {
            lo += (b5->qh[l] >> (2 * j)) & 1 ? 16 : 0;
            hi += (b5->qh[l] >> (2 * j + 1)) & 1 ? 16 : 0;
          }
          out.q[64 * j + l] = static_cast<int8_t>(lo);
          out.q[64 * j + 32 + l] = static_cast<int8_t>(hi);
        }
      return;
    }
    case DType::Q6_K: {
      const auto& b = *static_cast<const BlockQ6_K*>(block);
      for (int n = 0; n < 2; ++n)
        for (int l = 0; l < 32; ++l) {
          const uint8_t* ql = b.ql + 64 * n;
          const int qh = b.qh[32 * n + l];
          int8_t* q = out.q + 128 * n;
          q[l] = static_cast<int8_t>(((ql[l] & 0xF) | ((qh & 3) << 4)) - 32);
          q[l + 32] = static_cast<int8_t>(((ql[l + 32] & 0xF) | (((qh >> 2) & 3) << 4)) - 32);
          q[l + 64] = static_cast<int8_t>(((ql[l] >> 4) | (((qh >> 4) & 3) << 4)) - 32);
          q[l + 96] = static_cast<int8_t>(((ql[l + 32] >> 4) | (((qh >> 6) & 3) << 4)) - 32);
        }
      return;
    }
    case DType::Q8_K: {
      const auto& b = *static_cast<const BlockQ8_K*>(block);
      std::copy(b.qs, b.qs + kQK_K, out.q);
      return;
    }
    default:
      throw Error("unpack_k_block: " + std::string(dtype_name(type)) + " is not a K-quant");
  }
}

void dequantize_k(DType type, const void* x, float* y, int64_t nb) {
  const size_t block_bytes = dtype_info(type).block_bytes;
  KBlockInts b;
  for (int64_t i = 0; i < nb; ++i, y += kQK_K) {
    unpack_k_block(type, static_cast<const uint8_t*>(x) + i * block_bytes, b);
    for (int g = 0; g < 16; ++g) {
      const float dl = b.d * static_cast<float>(b.scale[g]);
      const float ml = b.dmin * static_cast<float>(b.min[g]);
      for (int l = 0; l < 16; ++l) y[16 * g + l] = dl * static_cast<float>(b.q[16 * g + l]) - ml;
    }
  }
}

}  // namespace engine::quant
