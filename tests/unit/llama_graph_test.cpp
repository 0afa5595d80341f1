// The llama step graph for one-token decode has the seed trace's node sequence:
// the same names, op labels and shapes, in the same order.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "engine/arch.h"
#include "engine/plan.h"

using namespace engine;

namespace {

const std::string kShared = ENGINE_SHARED_DIR;

struct TraceNode {
  std::string name, label, shape;
};

// Node headers are "<art>NAME: LABEL" lines whose next line is "<art>SIZE, [SHAPE]".
std::vector<TraceNode> read_trace_nodes(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  const std::regex header(R"(^[|<>\- ]*?([A-Za-z_][\w.\-]*): (.+?)\s*$)");
  const std::regex size_line(R"(^[|<>\- ]*\d+\.\d+, (\[[\d, ]+\])\s*$)");
  std::vector<TraceNode> nodes;
  std::smatch m, s;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (!std::regex_match(lines[i], m, header) || !std::regex_match(lines[i + 1], s, size_line)) continue;
    nodes.push_back({m[1], m[2], s[1]});
  }
  return nodes;
}

}  // namespace

TEST(LlamaGraph, DecodeMatchesSeedTraceNodeForNode) {
  const std::string model_path = kShared + "/models/mistral-large-2-q4_0.header.gguf";
  const std::string trace_path = kShared + "/seeds/001_010c2883ed1e1051.txt";
  if (!std::filesystem::exists(model_path) || !std::filesystem::exists(trace_path)) GTEST_SKIP() << "no ../shared";
  auto model = Model::load(model_path, GGUFLoad::kHeaderOnly);
  KVCache kv(model->hparams(), 32768, DType::F16);
  StepGraph step = build_step_graph(*model, kv, StepShape{1, 0, 1});
  const auto expected = read_trace_nodes(trace_path);
  const auto& nodes = step.graph->nodes();
  ASSERT_EQ(nodes.size(), expected.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    SCOPED_TRACE("node " + std::to_string(i));
    EXPECT_EQ(nodes[i]->name, expected[i].name);
    EXPECT_EQ(op_info(nodes[i]->op).trace_label, expected[i].label);
    EXPECT_EQ(nodes[i]->shape_str(), expected[i].shape);
  }
  EXPECT_EQ(step.n_kv, 32);
}

TEST(LlamaGraph, PlanKeepsLogitsAndReusesMemory) {
  const std::string model_path = kShared + "/models/stories260K.gguf";
  if (!std::filesystem::exists(model_path)) GTEST_SKIP() << "no ../shared";
  auto model = Model::load(model_path);
  KVCache kv(model->hparams(), 64, DType::F16);
  StepGraph step = build_step_graph(*model, kv, StepShape{8, 0, 1});
  Plan plan = Plan::make(*step.graph);
  size_t total = 0;
  for (const auto& [t, off] : plan.offsets) {
    total += t->nbytes();
    EXPECT_EQ(off % Plan::kAlignment, 0u);
    EXPECT_LE(off + t->nbytes(), plan.buffer_size) << t->name;
  }
  EXPECT_TRUE(plan.offsets.count(step.logits));
  EXPECT_LT(plan.buffer_size, total);  // liveness lets tensors share memory
}
