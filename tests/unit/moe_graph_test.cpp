// Mixture-of-experts graphs (Mixtral in llama files, Qwen3 MoE) on the public presets' shapes:
// the routing nodes, products over only the chosen experts, and active against total
// parameters. Their numbers against llama.cpp are the synth-qwen3moe and synth-mixtral replays.
#include <gtest/gtest.h>

#include <cmath>

#include "cost/cost.h"
#include "engine/arch.h"
#include "engine/preset.h"
#include "test_models.h"

using namespace engine;
using engine::test_models::node_named;

namespace {

cost::Counts op_counts(const cost::GraphCost& c, const std::string& op) {
  for (const auto& [name, counts] : c.by_op)
    if (name == op) return counts;
  return {};
}

}  // namespace

// A Mixtral 8x7B decode step multiplies by 2 of each layer's 8 experts: its expert products
// cost 2 experts' multiplies and read 2 experts' bytes; a 512-token step reads nearly all 8.
TEST(MoeGraph, MixtralReadsOnlyTheChosenExperts) {
  auto model = preset_model(find_preset("mixtral-8x7b"));
  const HParams& hp = model->hparams();
  ASSERT_EQ(hp.n_expert, 8);
  ASSERT_EQ(hp.n_expert_used, 2);
  const double d = 4096, ff = 14336, expert_bytes = 3 * d * ff * 2;  // gate, up and down of one expert, bf16
  KVCache kv(hp, 1024, DType::F16);
  StepGraph decode = build_step_graph(*model, kv, StepShape{1, 0, 1});
  const cost::Counts one = op_counts(cost::analyze(*decode.graph, cost::CostModel::kDefault), "MUL_MAT_ID");
  EXPECT_DOUBLE_EQ(one.get(cost::Metric::kFmul), 32 * 2 * 3 * d * ff);
  EXPECT_NEAR(one.get(cost::Metric::kRead), 32 * 2 * expert_bytes, 32 * 2 * expert_bytes * 1e-3);
  StepGraph prompt = build_step_graph(*model, kv, StepShape{512, 0, 1});
  const cost::Counts many = op_counts(cost::analyze(*prompt.graph, cost::CostModel::kDefault), "MUL_MAT_ID");
  EXPECT_GT(many.get(cost::Metric::kRead), 32 * 7.99 * expert_bytes);
  EXPECT_LE(many.get(cost::Metric::kRead), 32 * 8.05 * expert_bytes);  // and the activations

  const Tensor* topk = node_named(decode, "ffn_moe_topk-31");
  ASSERT_TRUE(topk);
  EXPECT_EQ(topk->src[0]->op, Op::ARGSORT);
  EXPECT_EQ(topk->ne[0], 2);
  const Tensor* out = node_named(decode, "ffn_moe_out-31");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->op, Op::ADD) << "two experts' outputs summed";
  EXPECT_EQ(node_named(decode, "ffn_gate-31"), nullptr) << "no dense feed-forward";

  const ParameterCount p = model->parameters();
  EXPECT_NEAR(p.total / 1e9, 46.7, 0.1);
  EXPECT_NEAR(p.active / 1e9, 12.9, 0.1);
}

// Qwen3 30B-A3B routes each token to 8 of 128 experts of 768 rows: about 3.3 B of its 30.5 B
// parameters are read per token.
TEST(MoeGraph, Qwen3MoeCountsActiveParameters) {
  auto model = preset_model(find_preset("qwen3-30b-a3b"));
  const HParams& hp = model->hparams();
  EXPECT_EQ(hp.arch, "qwen3moe");
  EXPECT_EQ(hp.n_ff_exp, 768);
  const ParameterCount p = model->parameters();
  EXPECT_NEAR(p.total / 1e9, 30.5, 0.1);
  EXPECT_NEAR(p.active / 1e9, 3.35, 0.05);
  KVCache kv(hp, 64, DType::F16);
  StepGraph step = build_step_graph(*model, kv, StepShape{1, 0, 1});
  const Tensor* down = node_named(step, "ffn_moe_down-0");
  ASSERT_TRUE(down);
  EXPECT_EQ(down->op, Op::MUL_MAT_ID);
  EXPECT_EQ(down->ne[0], 2048);
  EXPECT_EQ(down->ne[1], 8);
  EXPECT_TRUE(node_named(step, "Qcur_normed-0")) << "Qwen3's head norms";
}
