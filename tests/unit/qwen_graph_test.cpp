// Qwen2 and Qwen3 graphs: the Llama graph with biased Q, K, V projections (Qwen2) or RMS-normed
// Q and K heads of their own size (Qwen3), rotated by halves; checked on the public presets'
// shapes under the cost analyzer. Their numbers against llama.cpp are the synth-qwen replays.
#include <gtest/gtest.h>

#include "cost/cost.h"
#include "engine/arch.h"
#include "engine/op_params.h"
#include "engine/preset.h"
#include "test_models.h"

using namespace engine;
using engine::test_models::node_named;

namespace {

double fmul_of(const cost::GraphCost& c, const std::string& op) {
  for (const auto& [name, counts] : c.by_op)
    if (name == op) return counts.get(cost::Metric::kFmul);
  return 0;
}

}  // namespace

// Qwen3 8B's decode step: one multiply per weight of every matrix it reads, the KV products
// over 32 positions, and an RMS norm for each Q and K head besides the block's two.
TEST(QwenGraph, Qwen3DecodeCostsAndNormsEachHead) {
  auto model = preset_model(find_preset("qwen3-8b"));
  const HParams& hp = model->hparams();
  ASSERT_EQ(hp.arch, "qwen3");
  KVCache kv(hp, 64, DType::F16);
  StepGraph step = build_step_graph(*model, kv, StepShape{1, 0, 1});
  const cost::GraphCost c = cost::analyze(*step.graph, cost::CostModel::kDefault);
  const double d = 4096, q = 32 * 128, kv_rows = 8 * 128, ff = 12288, span = 32;
  const double per_block = d * q + 2 * d * kv_rows + q * d + 3 * d * ff + 2 * span * q;
  EXPECT_DOUBLE_EQ(fmul_of(c, "MUL_MAT"), 36 * per_block + 151936 * d);
  EXPECT_EQ(c.total.get(cost::Metric::kSqrt), 36 * (2 + 32 + 8) + 1);
  for (int il : {0, 35}) {
    const std::string s = "-" + std::to_string(il);
    for (const char* name : {"Qcur_normed", "Kcur_normed"}) {
      const Tensor* t = node_named(step, name + s);
      ASSERT_TRUE(t) << name << s;
      EXPECT_EQ(t->op, Op::MUL);
      EXPECT_EQ(t->ne[0], 128);
    }
    int ropes = 0;  // Q's and K's, rotating halves
    for (const Tensor* n : step.graph->nodes())
      if (n->op == Op::ROPE && n->layer == il) ropes += rope_params(*n).mode == kRopeNeox && n->src[0]->op == Op::MUL;
    EXPECT_EQ(ropes, 2) << "layer " << il;
  }
}

// Qwen3 0.6B's heads are wider than its embedding over its heads (16 x 128 > 1024): Q and the
// attention output have 2048 rows, the output projection maps them back to 1024.
TEST(QwenGraph, Qwen3HeadsOfTheirOwnSize) {
  auto model = preset_model(find_preset("qwen3-0.6b"));
  const HParams& hp = model->hparams();
  EXPECT_EQ(hp.n_embd_head, 128);
  EXPECT_EQ(hp.n_embd_q(), 2048);
  KVCache kv(hp, 64, DType::F16);
  EXPECT_EQ(kv.n_embd_kv(), 8 * 128);
  StepGraph step = build_step_graph(*model, kv, StepShape{3, 0, 1});
  const Tensor* merged = node_named(step, "kqv_merged_cont-0");
  ASSERT_TRUE(merged);
  EXPECT_EQ(merged->ne[0], 2048);
  const Tensor* out = node_named(step, "kqv_out-0");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->src[0]->ne[0], 2048);
  EXPECT_EQ(out->ne[0], 1024);
  EXPECT_EQ(step.logits->src[0]->name, "token_embd.weight") << "tied embeddings";
}

// Qwen2.5 7B adds a bias to each of Q, K and V, and norms no head.
TEST(QwenGraph, Qwen2BiasesItsProjections) {
  auto model = preset_model(find_preset("qwen2.5-7b"));
  KVCache kv(model->hparams(), 64, DType::F16);
  StepGraph step = build_step_graph(*model, kv, StepShape{1, 0, 1});
  for (const char* name : {"attn_q", "attn_k", "attn_v"}) {
    const std::string bias = std::string("blk.3.") + name + ".bias";
    int adds = 0;
    for (const Tensor* n : step.graph->nodes()) adds += n->op == Op::ADD && n->src[1]->name == bias;
    EXPECT_EQ(adds, 1) << bias;
  }
  EXPECT_FALSE(node_named(step, "Qcur_normed-3"));
  const cost::GraphCost c = cost::analyze(*step.graph, cost::CostModel::kDefault);
  EXPECT_EQ(c.total.get(cost::Metric::kSqrt), 28 * 2 + 1);
}
