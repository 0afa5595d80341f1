// The profile views join a real session's op records with the cost model; their structure
// and sums are checked here (the sums are identities, not timing claims).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "cost/chrome_trace.h"
#include "cost/profile.h"
#include "engine/error.h"
#include "engine/synth.h"

namespace {

constexpr int kDecodeSteps = 3;

// A model file of this process's own: ctest runs tests in parallel, and a shared file rewritten
// while another process maps it faults.
std::string own_model(engine::DType type) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("engine-profile-test-" + std::to_string(getpid()) + "-" + std::string(engine::dtype_name(type)) + ".gguf");
  engine::SynthSpec spec;
  spec.type = type;
  spec.n_layer = 2;
  spec.n_head = 4;
  spec.n_head_kv = 2;
  spec.n_ff = 512;
  spec.n_ctx_train = 256;
  engine::write_synthetic_model(spec, path.string());
  return path.string();
}

std::unique_ptr<engine::Session> profiled_session(engine::DType type) {
  engine::SessionParams params;
  params.n_threads = 1;
  params.profile = true;
  const std::string path = own_model(type);
  auto s = engine::Session::create(path, params);
  std::filesystem::remove(path);  // the mapping stays valid
  const std::vector<int32_t> prompt = {1, 40, 41, 42, 43};
  s->prefill(prompt);
  for (int i = 0; i < kDecodeSteps; ++i) s->decode(50 + i);
  return s;
}

double sum_ms(const std::vector<cost::OpRow>& rows) {
  return std::accumulate(rows.begin(), rows.end(), 0.0, [](double a, const cost::OpRow& r) { return a + r.ms; });
}

TEST(ProfileTest, SessionKeepsOneRecordPerStepOnlyWhenProfiling) {
  auto s = profiled_session(engine::DType::F32);
  ASSERT_EQ(s->steps().size(), 1u + kDecodeSteps);
  EXPECT_TRUE(s->steps()[0].prefill);
  EXPECT_EQ(s->steps()[0].shape.n_tokens, 5);
  EXPECT_FALSE(s->steps()[1].prefill);
  EXPECT_EQ(s->steps()[1].shape.n_past, 5);
  const engine::StepRecord& last = s->steps().back();
  EXPECT_EQ(last.first_record + last.n_records, s->profiler().records().size());
  s->clear_profile();
  EXPECT_TRUE(s->steps().empty());
  EXPECT_TRUE(s->profiler().records().empty());

  engine::SessionParams plain;
  plain.n_threads = 1;
  const std::string path = own_model(engine::DType::F32);
  auto quiet = engine::Session::create(path, plain);
  std::filesystem::remove(path);
  quiet->decode(1);
  EXPECT_TRUE(quiet->steps().empty());
  EXPECT_TRUE(quiet->profiler().records().empty());
}

TEST(ProfileTest, ViewsCoverEveryNodeExecutionOfBothPhases) {
  auto s = profiled_session(engine::DType::Q4_0);
  const cost::ProfiledRun run = cost::join_profile(*s, "synthetic", "h100-sxm");
  const cost::Profile p = cost::make_profile(run);
  ASSERT_TRUE(p.prefill && p.decode);
  EXPECT_EQ(p.weight_type, "q4_0");
  EXPECT_EQ(p.n_layer, 2);
  EXPECT_GT(p.params, 0);
  for (const cost::PhaseProfile* ph : {&*p.prefill, &*p.decode}) {
    const int64_t executions = ph->steps * static_cast<int64_t>(ph->nodes.size());
    int64_t calls = 0, type_count = 0;
    for (const cost::OpRow& r : ph->ops) calls += r.calls;
    for (const cost::OpTypeRow& r : ph->op_types) type_count += r.count;
    EXPECT_EQ(calls, executions) << ph->name;
    EXPECT_EQ(type_count, executions) << ph->name;
    EXPECT_NEAR(sum_ms(ph->ops), ph->op_ms_sum, 1e-9 * executions) << ph->name;
    EXPECT_TRUE(std::is_sorted(ph->ops.begin(), ph->ops.end(), [](auto& a, auto& b) { return a.ms > b.ms; }));
    ASSERT_FALSE(ph->modules.empty());
    EXPECT_EQ(ph->modules[0].name, "LlamaForCausalLM");
    EXPECT_EQ(ph->modules[0].total.size(), ph->nodes.size());
    EXPECT_NEAR(ph->module_ms(ph->modules[0].total), ph->op_ms_sum, 1e-9 * executions);
    std::set<int> layers;
    for (const cost::LayerRow& r : ph->layers) layers.insert(r.layer);
    EXPECT_EQ(layers, (std::set<int>{-1, 0, 1}));
    EXPECT_GT(ph->flops, 0);
    EXPECT_GT(ph->predicted_ms, 0);
    EXPECT_EQ(ph->slowest.size(), std::min<size_t>(20, executions));
    std::set<std::string> labels;
    for (const cost::OpRow& r : ph->ops) labels.insert(r.label);
    for (const char* want : {"matmul:ffn_up:L0", "matmul:attn_q:L1", "matmul:lm_head", "attention", "rmsnorm", "rope",
                             "softmax", "silu", "add", "kv_store", "gather"})
      EXPECT_TRUE(labels.count(want)) << ph->name << " lacks " << want;
  }
  EXPECT_EQ(p.prefill->steps, 1);
  EXPECT_EQ(p.prefill->tokens, 5);
  EXPECT_EQ(p.decode->steps, kDecodeSteps);
  EXPECT_GT(p.memory.weights, 0u);
  EXPECT_GT(p.memory.kv_cache, 0u);
}

TEST(ProfileTest, JsonFollowsTheSharedSchema) {
  auto s = profiled_session(engine::DType::F32);
  const nlohmann::json j = cost::profile_json(cost::make_profile(cost::join_profile(*s, "synthetic", "h100-sxm")));
  for (const char* key : {"model", "backend", "threads", "hardware", "phases", "memory"}) EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["hardware"]["name"], "h100-sxm");
  for (const char* phase : {"prefill", "decode"}) {
    const nlohmann::json& ph = j["phases"][phase];
    for (const char* key : {"steps", "tokens", "wall_ms", "op_ms_sum", "flops", "bytes", "tflops", "ops", "modules",
                            "layers", "op_types", "slowest", "nodes"})
      EXPECT_TRUE(ph.contains(key)) << phase << "." << key;
    EXPECT_TRUE(ph["modules"][0]["self_ms"].is_null());
    EXPECT_EQ(ph["modules"][0]["calls"], ph["steps"]);
    for (const char* key : {"layer", "ms", "flops", "bytes", "gflops_s", "gb_s", "roofline_pct", "predicted_ms", "ratio"})
      EXPECT_TRUE(ph["layers"][0].contains(key)) << key;
  }
}

TEST(ProfileTest, ChromeTraceHasEveryNodeOncePerStep) {
  auto s = profiled_session(engine::DType::F32);
  const cost::ProfiledRun run = cost::join_profile(*s, "synthetic", "h100-sxm");
  const nlohmann::json trace = nlohmann::json::parse(cost::chrome_trace(run).dump());
  const size_t n_nodes = run.steps[1].analysis->step.graph->nodes().size();
  size_t steps = 0, decode_nodes = 0;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["cat"] == "step") {
      ++steps;
      continue;
    }
    for (const char* key : {"op", "name", "layer", "shapes", "dtype", "flops", "bytes", "module"})
      EXPECT_TRUE(e["args"].contains(key)) << key;
    decode_nodes += e["tid"] == 2;
  }
  EXPECT_EQ(steps, 1u + kDecodeSteps);
  EXPECT_EQ(decode_nodes, kDecodeSteps * n_nodes);
}

// Predictions set beside profiled times add the fixed cost of an op as the profiler times it,
// where the profile has one, and the plain run's otherwise.
TEST(ProfileTest, PredictionsBesideTheProfileAddTheProfiledFixedCost) {
  auto s = profiled_session(engine::DType::F32);
  cost::HardwareProfile hw = cost::hardware_profile("h100-sxm", 1);
  hw.op_overhead_us = 2;
  const auto overheads_of = [&](const std::string& name) {
    const std::string path = testing::TempDir() + name;
    {
      std::ofstream out(path);
      cost::write_profile(hw, out, "a test");
    }
    const cost::ProfiledRun run = cost::join_profile(*s, "synthetic", path);
    std::filesystem::remove(path);
    std::set<double> seen;
    for (const cost::ProfiledStep& step : run.steps)
      for (const cost::NodePrediction& n : step.analysis->prediction.nodes)
        if (n.overhead_s > 0) seen.insert(n.overhead_s);
    return seen;
  };
  EXPECT_EQ(overheads_of("plain-overhead.json"), std::set<double>{2e-6});
  hw.profiled_op_overhead_us = 7;
  EXPECT_EQ(overheads_of("profiled-overhead.json"), std::set<double>{7e-6});
}

TEST(ProfileTest, JoinRejectsRecordsClearedWithoutTheSteps) {
  auto s = profiled_session(engine::DType::F32);
  s->profiler().clear();
  EXPECT_THROW(cost::join_profile(*s, "synthetic", "h100-sxm"), engine::Error);
}

}  // namespace
