// Every device backend computes a model's logits as the CPU backend does, for a prompt and a
// decode step, on shapes whose rows leave a tail after the CPU's 64-element vector steps. On
// f16 and bf16 weights activations are rounded to 2^-11 and 2^-8 before each multiply, where
// one last-bit difference upstream shows. A software device (a GPU API on the CPU) sums in the
// CPU's order with the CPU's arithmetic: within rounding on f32 weights, to the last bits on
// f16 and bf16. A GPU sums in orders of its own and computes exp and square roots to its own
// last bits, which flip some of those roundings: within the references' tolerance for float
// weights (2e-3) on f32 and f16, and on bf16 within 8 times that, one flipped bf16 rounding
// weighing as much as 8 flipped f16 ones. A backend not built in is skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backend_param.h"
#include "engine/arch.h"
#include "engine/error.h"
#include "test_models.h"

namespace {

using namespace engine;

// The logits of `prompt`, then of one more token, on `backend`.
std::vector<std::vector<float>> two_steps(const std::string& backend_name, const std::string& path) {
  auto model = Model::load(path);
  auto backend = make_backend(backend_name, BackendParams{0, 2});
  KVCache kv(model->hparams(), 64, DType::F16);
  backend->load_weights(*model);
  backend->allocate_kv(kv);
  std::vector<std::vector<float>> logits;
  const std::vector<std::vector<int32_t>> steps = {{1, 300, 17, 42, 99, 7, 250}, {123}};
  int64_t n_past = 0;
  for (const auto& tokens : steps) {
    StepGraph s = build_step_graph(*model, kv, StepShape{static_cast<int64_t>(tokens.size()), n_past, 1});
    backend->allocate(*s.graph, Plan::make(*s.graph));
    set_step_inputs(*backend, s, tokens, n_past);
    backend->compute(*s.graph, nullptr);
    std::vector<float>& out = logits.emplace_back(static_cast<size_t>(model->hparams().n_vocab));
    backend->get_output(*s.logits, out.data(), out.size() * sizeof(float));
    n_past += static_cast<int64_t>(tokens.size());
  }
  return logits;
}

class BackendAgreement : public test_backends::EachBackend {};

TEST_P(BackendAgreement, LogitsOfFloatWeightsEqualTheCpuBackends) {
  const bool cpu_arithmetic = device_info(GetParam(), 0).type == "software";
  const std::pair<DType, double> bounds[] = {{DType::F32, cpu_arithmetic ? 1e-3 : 2e-3},
                                             {DType::F16, cpu_arithmetic ? 1e-5 : 2e-3},
                                             {DType::BF16, cpu_arithmetic ? 1e-5 : 1.6e-2}};
  for (const auto& [type, bound] : bounds)
    for (const auto& [n_embd, n_ff] : {std::pair<int64_t, int64_t>{256, 512}, {288, 800}}) {
      const std::string path = test_models::synthetic_model(type, n_embd, n_ff);
      SCOPED_TRACE(path);
      const auto want = two_steps("cpu", path);
      const auto got = two_steps(GetParam(), path);
      for (size_t step = 0; step < want.size(); ++step) {
        double worst = 0.0;
        for (size_t i = 0; i < want[step].size(); ++i)
          worst = std::max(worst, std::fabs(double{got[step][i]} - want[step][i]) / std::max(1.0, std::fabs(double{want[step][i]})));
        EXPECT_LE(worst, bound) << dtype_name(type) << " step " << step;
      }
    }
}

std::vector<std::string> device_backends() {
  std::vector<std::string> names;
  for (const std::string& name : known_backends())
    if (name != "cpu") names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(EveryDeviceBackend, BackendAgreement, ::testing::ValuesIn(device_backends()),
                         test_backends::param_name);

}  // namespace
