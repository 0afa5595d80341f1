// Part of the SIMD kernel bodies (simd_kernels_impl.h lists the parts, in order): the vector exp.

// ---------------------------------------------------------------------------------------------
// The vector exp of softmax and SiLU (vec_math.h's vec_expf on 16 lanes).

inline VF vf_expf(VF x) {
  const VF shift = vf_set1(0x1.8p23f);
  const VF z = vf_fma(x, vf_set1(0x1.715476p+0f), shift);
  const VF n = vf_sub(z, shift);
  const VF neg_n = vf_mul(n, vf_set1(-1.0f));
  const VF b = vf_fma(neg_n, vf_set1(0x1.7f7d1cp-20f), vf_fma(neg_n, vf_set1(0x1.62e4p-1f), x));
  const VF u = vf_mul(b, b);
  const VF j = vf_fma(vf_fma(vf_fma(vf_set1(0x1.0e4020p-7f), b, vf_set1(0x1.573e2ep-5f)), u,
                             vf_fma(vf_set1(0x1.555e66p-3f), b, vf_set1(0x1.fffdb6p-2f))),
                      u, vf_fma(vf_set1(0x1.ffffecp-1f), b, vf_set1(1.0f)));
  return vf_exp_scale(j, n);
}

double exp_shifted_impl(const float* x, float shift, float* y, int64_t n) {
  const VF s = vf_set1(shift);
  double sum = 0.0;
  for (int64_t i = 0; i < n; i += kVecLanes) {
    const VF e = vf_expf(vf_sub(vf_load_f32(x + i), s));
    vf_store(y + i, e);
    sum += static_cast<double>(vf_reduce(e));
  }
  return sum;
}

void silu_impl(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i += kVecLanes) {
    const VF v = vf_load_f32(x + i);
    vf_store(y + i, vf_div(v, vf_add(vf_set1(1.0f), vf_expf(vf_mul(v, vf_set1(-1.0f))))));
  }
}

// soft_max_row (kernels.h) with its scale, mask, max and normalization passes on whole vectors,
// each lane as the scalar twin computes it (the max in kVecLanes running maxima, then the
// leftovers, then the lanes in order).
void soft_max_row_impl(const float* x, const float* m, int64_t live, float scale, float* d, int64_t n, float* w) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const int64_t vector_end = n / kVecLanes * kVecLanes;
  const int64_t groups_end = std::min(vector_end, (live + kVecLanes - 1) / kVecLanes * kVecLanes);
  const int64_t evaluated = std::max(groups_end, live);
  int64_t k = 0;
  for (; k + kVecLanes <= live; k += kVecLanes) {
    const VF scaled = vf_mul(vf_load_f32(x + k), vf_set1(scale));
    vf_store(w + k, m ? vf_add(scaled, vf_load_f32(m + k)) : scaled);
  }
  for (; k < live; ++k) {
    w[k] = x[k] * scale;
    if (m) w[k] += m[k];
  }
  std::fill(w + live, w + evaluated, kNegInf);
  std::fill(d + evaluated, d + n, 0.0f);
  VF lanes = vf_set1(kNegInf);
  for (k = 0; k + kVecLanes <= live; k += kVecLanes) lanes = vf_max(vf_load_f32(w + k), lanes);
  float max = kNegInf;
  for (; k < live; ++k) max = std::max(max, w[k]);
  alignas(64) float lane[kVecLanes];
  vf_store(lane, lanes);
  for (const float l : lane) max = std::max(max, l);
  if (max == kNegInf) {
    std::fill(d, d + evaluated, 0.0f);
    return;
  }
  double sum = exp_shifted_impl(w, max, w, groups_end);
  for (k = vector_end; k < live; ++k) {
    w[k] = std::exp(w[k] - max);
    sum += static_cast<double>(w[k]);
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (k = 0; k + kVecLanes <= evaluated; k += kVecLanes) vf_store(d + k, vf_mul(vf_load_f32(w + k), vf_set1(inv)));
  for (; k < evaluated; ++k) d[k] = w[k] * inv;
}
