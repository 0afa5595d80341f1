#include "engine/op_params.h"

#include <string>

#include "engine/error.h"

namespace engine {
namespace {

void expect(const Tensor& t, Op a, Op b = Op::COUNT) {
  if (t.op != a && t.op != b)
    throw Error("node '" + t.name + "' is " + std::string(op_name(t.op)) + ", not " + std::string(op_name(a)) +
                (b == Op::COUNT ? "" : " or " + std::string(op_name(b))));
}

}  // namespace

// The params[] slots of each op are known only in this file.
RopeParams rope_params(const Tensor& t) {
  expect(t, Op::ROPE);
  return {t.params[0], t.params[1], t.param_f32(2), t.param_f32(3), t.param_f32(4)};
}

void set_rope_params(Tensor& t, const RopeParams& p) {
  expect(t, Op::ROPE);
  t.params[0] = p.n_rot;
  t.params[1] = p.mode;
  t.set_param_f32(2, p.freq_base);
  t.set_param_f32(3, p.freq_scale);
  t.set_param_f32(4, p.attn_factor);
}

MulMatParams mul_mat_params(const Tensor& t) {
  expect(t, Op::MUL_MAT);
  return {t.params[0] == kMulMatKvSpan, t.params[1] == kMulMatCausal, t.params[2]};
}

void set_mul_mat_params(Tensor& t, const MulMatParams& p) {
  expect(t, Op::MUL_MAT);
  t.params[0] = p.kv_span ? kMulMatKvSpan : 0;
  t.params[1] = p.causal ? kMulMatCausal : 0;
  t.params[2] = p.causal_past;
}

float scale_param(const Tensor& t) {
  expect(t, Op::SCALE, Op::SOFT_MAX);
  return t.param_f32(0);
}

void set_scale_param(Tensor& t, float scale) {
  expect(t, Op::SCALE, Op::SOFT_MAX);
  t.set_param_f32(0, scale);
}

float eps_param(const Tensor& t) {
  expect(t, Op::RMS_NORM, Op::NORM);
  return t.param_f32(0);
}

void set_eps_param(Tensor& t, float eps) {
  expect(t, Op::RMS_NORM, Op::NORM);
  t.set_param_f32(0, eps);
}

}  // namespace engine
