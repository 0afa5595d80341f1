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
