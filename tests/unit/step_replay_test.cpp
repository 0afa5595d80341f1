// Steps a device can replay: a graph rebased to a later n_past (rebase_step) is the graph built
// for it, node for node, and computes the same logits, allocated or rebound (Backend::rebind); a
// step outside its span is refused; a session's decode, which reuses its graph so, computes what
// a graph built each step does.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "engine/arch.h"
#include "engine/error.h"
#include "engine/op_params.h"
#include "engine/session.h"
#include "test_models.h"

namespace {

using namespace engine;

void expect_same_graph(const StepGraph& got, const StepGraph& want) {
  const auto& a = got.graph->nodes();
  const auto& b = want.graph->nodes();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(b[i]->name);
    EXPECT_EQ(a[i]->name, b[i]->name);
    EXPECT_EQ(a[i]->op, b[i]->op);
    EXPECT_EQ(0, std::memcmp(a[i]->ne, b[i]->ne, sizeof a[i]->ne));
    EXPECT_EQ(0, std::memcmp(a[i]->nb, b[i]->nb, sizeof a[i]->nb));
    EXPECT_EQ(a[i]->view_offs, b[i]->view_offs);
    EXPECT_EQ(0, std::memcmp(a[i]->params, b[i]->params, sizeof a[i]->params));
  }
  EXPECT_EQ(got.n_past, want.n_past);
  EXPECT_EQ(got.n_kv, want.n_kv);
}

// The CPU backend holding the model's weights and a KV cache laid out as kv.
std::unique_ptr<Backend> cpu_backend(const Model& model, const KVCache& kv) {
  auto backend = make_cpu_backend(2);
  backend->load_weights(model);
  backend->allocate_kv(kv);
  return backend;
}

// The logits of an allocated (or rebound) step graph over `tokens`.
std::vector<float> run_step(Backend& backend, StepGraph& s, const std::vector<int32_t>& tokens, int64_t n_vocab) {
  set_step_inputs(backend, s, tokens, s.n_past);
  backend.compute(*s.graph, nullptr);
  std::vector<float> logits(static_cast<size_t>(n_vocab));
  backend.get_output(*s.logits, logits.data(), logits.size() * sizeof(float));
  return logits;
}

std::vector<float> logits_of(Backend& backend, StepGraph& s, const std::vector<int32_t>& tokens, int64_t n_vocab) {
  backend.allocate(*s.graph, Plan::make(*s.graph));
  return run_step(backend, s, tokens, n_vocab);
}

TEST(StepReplay, RebasedGraphIsTheGraphBuiltForTheLaterStep) {
  for (const std::string& path : {test_models::synthetic_model(DType::Q8_0), test_models::synthetic_gpt2_model(true)}) {
    SCOPED_TRACE(path);
    auto model = Model::load(path);
    KVCache kv(model->hparams(), 128, DType::F16);
    for (const int64_t n_tokens : {int64_t{1}, int64_t{5}}) {
      StepGraph rebased = build_step_graph(*model, kv, StepShape{n_tokens, 40, 1});
      rebase_step(rebased, 55);  // the same 64-position span
      expect_same_graph(rebased, build_step_graph(*model, kv, StepShape{n_tokens, 55, 1}));
    }
  }
}

TEST(StepReplay, RebasedGraphComputesTheLaterStepsLogits) {
  auto model = Model::load(test_models::synthetic_model(DType::F32));
  KVCache kv(model->hparams(), 64, DType::F32);
  auto backend = cpu_backend(*model, kv);
  const std::vector<int32_t> prompt = {1, 300, 17, 42, 99, 7};
  StepGraph first = build_step_graph(*model, kv, StepShape{6, 0, 1});
  logits_of(*backend, first, prompt, model->hparams().n_vocab);

  StepGraph fresh = build_step_graph(*model, kv, StepShape{1, 6, 1});
  const std::vector<float> want = logits_of(*backend, fresh, {123}, model->hparams().n_vocab);
  StepGraph replayed = build_step_graph(*model, kv, StepShape{1, 2, 1});  // built for an earlier step
  rebase_step(replayed, 6);
  EXPECT_EQ(logits_of(*backend, replayed, {123}, model->hparams().n_vocab), want);
}

// rebind after rebase_step: the graph last allocated keeps what the backend derived from it and
// only its views move; a graph that is not the last allocated is allocated. Either way the logits
// are those of a graph built for the step.
TEST(StepReplay, RebindMovesTheRebasedGraphsViews) {
  auto model = Model::load(test_models::synthetic_model(DType::Q4_0));
  KVCache kv(model->hparams(), 64, DType::F16);
  auto backend = cpu_backend(*model, kv);
  const int64_t n_vocab = model->hparams().n_vocab;
  StepGraph prompt = build_step_graph(*model, kv, StepShape{6, 0, 1});
  logits_of(*backend, prompt, {1, 300, 17, 42, 99, 7}, n_vocab);

  StepGraph decode = build_step_graph(*model, kv, StepShape{1, 6, 1});
  const Plan plan = Plan::make(*decode.graph);
  backend->allocate(*decode.graph, plan);
  run_step(*backend, decode, {123}, n_vocab);
  const auto token_at = [](int64_t n_past) { return std::vector<int32_t>{static_cast<int32_t>(200 + n_past)}; };
  const auto rebound_logits = [&](int64_t n_past) {
    rebase_step(decode, n_past);
    backend->rebind(*decode.graph, plan);
    return run_step(*backend, decode, token_at(n_past), n_vocab);
  };
  std::vector<std::vector<float>> got;
  for (int64_t n_past = 7; n_past < 10; ++n_past) got.push_back(rebound_logits(n_past));
  for (int64_t n_past = 7; n_past < 11; ++n_past) {
    SCOPED_TRACE(n_past);
    // At 10, after the graphs built here were allocated: rebinding `decode` allocates it again.
    if (n_past == 10) got.push_back(rebound_logits(n_past));
    StepGraph fresh = build_step_graph(*model, kv, StepShape{1, n_past, 1});
    EXPECT_EQ(got[static_cast<size_t>(n_past - 7)], logits_of(*backend, fresh, token_at(n_past), n_vocab));
  }
}

// A session keeps its decode graph from step to step (rebased) and builds a new one where the
// attention span grows: its logits across the 32 -> 64 span boundary are those of a graph built
// for every step.
TEST(StepReplay, SessionDecodeAcrossASpanBoundaryMatchesAGraphBuiltEachStep) {
  const std::string path = test_models::synthetic_model(DType::Q4_0);
  SessionParams params;
  params.n_ctx = 64;
  params.n_threads = 2;
  auto session = Session::create(path, params);
  auto model = Model::load(path);
  KVCache kv(model->hparams(), 64, DType::F16);
  auto backend = cpu_backend(*model, kv);

  std::vector<int32_t> prompt(28);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>(7 + 13 * i);
  session->prefill(prompt);
  StepGraph first = build_step_graph(*model, kv, StepShape{static_cast<int64_t>(prompt.size()), 0, 1});
  logits_of(*backend, first, prompt, model->hparams().n_vocab);
  for (int64_t n_past = 28; n_past < 36; ++n_past) {
    SCOPED_TRACE(n_past);
    const int32_t token = static_cast<int32_t>(100 + n_past);
    const std::span<const float> got = session->decode(token);
    StepGraph fresh = build_step_graph(*model, kv, StepShape{1, n_past, 1});
    EXPECT_EQ(std::vector<float>(got.begin(), got.end()), logits_of(*backend, fresh, {token}, model->hparams().n_vocab));
  }
}

TEST(StepReplay, AStepOutsideTheSpanIsRefused) {
  auto model = Model::load(test_models::synthetic_model(DType::F32));
  KVCache kv(model->hparams(), 128, DType::F16);
  StepGraph s = build_step_graph(*model, kv, StepShape{1, 40, 1});
  EXPECT_THROW(rebase_step(s, 64), Error);   // reads 96 positions, not 64
  EXPECT_THROW(rebase_step(s, 128), Error);  // past the context
  EXPECT_THROW(rebase_step(s, -1), Error);
  EXPECT_NO_THROW(rebase_step(s, 32));       // still within the 64-position span
}

}  // namespace
