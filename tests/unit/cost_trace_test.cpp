// The seed cost model reproduces the seed analyzer's trace of Mistral-Large-2 decoding one
// token, line for line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cost/trace.h"
#include "engine/arch.h"

using namespace engine;

namespace {

const std::string kShared = ENGINE_SHARED_DIR;

std::vector<std::string> lines_rstripped(std::istream& in) {
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) {
    while (!l.empty() && (l.back() == ' ' || l.back() == '\r')) l.pop_back();
    out.push_back(l);
  }
  return out;
}

}  // namespace

TEST(CostTrace, SeedModelReproducesTheSeedTrace) {
  const std::string model_path = kShared + "/models/mistral-large-2-q4_0.header.gguf";
  const std::string trace_path = kShared + "/seeds/001_010c2883ed1e1051.txt";
  if (!std::filesystem::exists(model_path) || !std::filesystem::exists(trace_path)) GTEST_SKIP() << "no ../shared";
  auto model = Model::load(model_path, GGUFLoad::kHeaderOnly);
  KVCache kv(model->hparams(), 32768, DType::F16, false);
  StepGraph step = build_step_graph(*model, kv, StepShape{1, 0, 1});
  std::stringstream ours;
  cost::write_trace(ours, *step.graph, cost::analyze(*step.graph, cost::CostModel::kSeed));
  std::ifstream seed(trace_path);
  const auto expected = lines_rstripped(seed);
  const auto actual = lines_rstripped(ours);
  size_t shown = 0;
  for (size_t i = 0; i < std::min(expected.size(), actual.size()) && shown < 10; ++i)
    if (expected[i] != actual[i]) {
      ADD_FAILURE() << "line " << i + 1 << "\nexpected: " << expected[i] << "\nactual:   " << actual[i];
      ++shown;
    }
  EXPECT_EQ(actual.size(), expected.size());
}
