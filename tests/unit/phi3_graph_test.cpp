// Phi-3 graphs: the Llama graph with Q, K and V viewed out of one fused projection, gate and up
// out of another, and long-context RoPE factors past the original context; checked on the
// public presets' shapes. Their numbers against llama.cpp are the synth-phi3 replays.
#include <gtest/gtest.h>

#include <cmath>

#include "cost/cost.h"
#include "engine/arch.h"
#include "engine/error.h"
#include "engine/synth.h"
#include "engine/op_params.h"
#include "engine/preset.h"
#include "test_models.h"

using namespace engine;
using engine::test_models::node_named;

// Phi-3 mini's decode step reads each fused matrix once: one multiply per weight, the KV
// products over 32 positions; Q, K, V, gate and up are views, not copies.
TEST(Phi3Graph, FusedProjectionsAreReadOnceAndViewed) {
  auto model = preset_model(find_preset("phi-3-mini"));
  const HParams& hp = model->hparams();
  ASSERT_EQ(hp.arch, "phi3");
  KVCache kv(hp, 64, DType::F16);
  StepGraph step = build_step_graph(*model, kv, StepShape{1, 0, 1});
  const cost::GraphCost c = cost::analyze(*step.graph, cost::CostModel::kDefault);
  const double d = 3072, ff = 8192, span = 32;
  const double per_block = d * 3 * d + d * d + d * 2 * ff + ff * d + 2 * span * d;
  double mul_mat_fmul = 0;
  for (const auto& [name, counts] : c.by_op)
    if (name == "MUL_MAT") mul_mat_fmul = counts.get(cost::Metric::kFmul);
  EXPECT_DOUBLE_EQ(mul_mat_fmul, 32 * per_block + 32064 * d);
  const Tensor* qkv = node_named(step, "wqkv-5");
  ASSERT_TRUE(qkv);
  EXPECT_EQ(qkv->op, Op::MUL_MAT);
  EXPECT_EQ(qkv->ne[0], 3 * 3072);
  for (const char* name : {"Qcur-5", "Kcur-5", "Vcur-5"}) {
    const Tensor* view = node_named(step, name);
    ASSERT_TRUE(view) << name;
    if (view->op == Op::ROPE) view = view->src[0];
    EXPECT_EQ(view->op, Op::VIEW) << name;
    EXPECT_EQ(view->src[0], qkv) << name;
  }
  const Tensor* gate_up = node_named(step, "ffn_up-5");
  ASSERT_TRUE(gate_up);
  EXPECT_EQ(gate_up->ne[0], 2 * 8192);
  const Tensor* gate = node_named(step, "ffn_gate-5");
  const Tensor* up = node_named(step, "ffn_up_half-5");
  ASSERT_TRUE(gate && up);
  EXPECT_EQ(gate->src[0], gate_up);
  EXPECT_EQ(up->src[0], gate_up);
  EXPECT_EQ(up->view_offs, 8192 * sizeof(float)) << "up is the second half of each row";
  EXPECT_EQ(model->find_weight("blk.5.ffn_gate.weight"), nullptr);
}

// Phi-3 mini 128K rotates by its short factors within its original 4096 positions and by its
// long ones past them; both scale cos and sin by the file's attention factor.
TEST(Phi3Graph, LongRopeFactorsPastTheOriginalContext) {
  auto model = preset_model(find_preset("phi-3-mini-128k"));
  const HParams& hp = model->hparams();
  EXPECT_EQ(hp.n_ctx_orig, 4096);
  const float attn_factor = static_cast<float>(std::sqrt(1 + std::log(32.0) / std::log(4096.0)));
  EXPECT_FLOAT_EQ(hp.rope_attn_factor, attn_factor);
  for (const auto& [n_ctx, factors] : {std::pair{4096, "rope_factors_short.weight"}, {8192, "rope_factors_long.weight"}}) {
    KVCache kv(hp, n_ctx, DType::F16);
    StepGraph step = build_step_graph(*model, kv, StepShape{1, 0, 1});
    int ropes = 0;
    for (const Tensor* n : step.graph->nodes()) {
      if (n->op != Op::ROPE) continue;
      ++ropes;
      ASSERT_TRUE(n->src[2]) << n->name;
      EXPECT_EQ(n->src[2]->name, factors) << "context " << n_ctx;
      EXPECT_EQ(rope_params(*n).attn_factor, attn_factor);
      EXPECT_EQ(rope_params(*n).mode, kRopeNeox);
    }
    EXPECT_EQ(ropes, 2 * 32);
  }
}

// Phi-4's files write attention.sliding_window = 0 for "no window": it loads with none.
TEST(Phi3Graph, ZeroSlidingWindowMeansNone) {
  SynthSpec spec;
  spec.arch = "phi3";
  spec.n_vocab = 300;
  GGUFWriter w = synthetic_model(spec, false);
  w.set_u32("phi3.attention.sliding_window", 0);
  auto model = Model::from_gguf(GGUFFile::from_bytes("phi4-like", w.to_bytes(true), GGUFLoad::kHeaderOnly));
  EXPECT_EQ(model->hparams().n_swa, 0);
  w.set_i32("phi3.attention.sliding_window", -5);
  EXPECT_THROW(Model::from_gguf(GGUFFile::from_bytes("bad-window", w.to_bytes(true), GGUFLoad::kHeaderOnly)), Error);
}
