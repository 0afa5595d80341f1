// Gemma 3 graph on the public presets' shapes: five sliding-window layers in six, each with its
// own mask and RoPE base, norms around attention and the feed-forward, a GELU-gated
// feed-forward. Its numbers against llama.cpp are the synth-gemma3 replays.
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

TEST(Gemma3Graph, SlidingLayersTakeTheirMaskAndRopeBase) {
  auto model = preset_model(find_preset("gemma-3-1b"));
  const HParams& hp = model->hparams();
  ASSERT_EQ(hp.arch, "gemma3");
  EXPECT_EQ(hp.n_swa, 512);
  KVCache kv(hp, 64, DType::F16);
  StepGraph step = build_step_graph(*model, kv, StepShape{4, 0, 1});
  ASSERT_TRUE(step.kq_mask_swa);
  EXPECT_EQ(step.n_swa, 512);
  for (int il = 0; il < 26; ++il) {
    const bool sliding = il % 6 != 5;
    const Tensor* softmax = node_named(step, "kq_soft_max_ext-" + std::to_string(il));
    ASSERT_TRUE(softmax);
    EXPECT_EQ(softmax->src[1], sliding ? step.kq_mask_swa : step.kq_mask) << "layer " << il;
    int ropes = 0;
    for (const Tensor* n : step.graph->nodes())
      if (n->op == Op::ROPE && n->layer == il) {
        ++ropes;
        EXPECT_EQ(rope_params(*n).mode, kRopeNeox);
        EXPECT_FLOAT_EQ(rope_params(*n).freq_base, sliding ? 10000.0f : 1e6f) << "layer " << il;
      }
    EXPECT_EQ(ropes, 2);
    for (const char* name : {"attn_post_norm", "sa_out", "ffn_gelu"})
      EXPECT_TRUE(node_named(step, name + ("-" + std::to_string(il)))) << name << " " << il;
  }
  const Tensor* scaled = node_named(step, "inp_scaled");
  ASSERT_TRUE(scaled);
  EXPECT_EQ(scaled->op, Op::SCALE);
  EXPECT_EQ(step.logits->src[0]->name, "token_embd.weight") << "tied embeddings";
}

// A model with no sliding layer has one mask, even where its file names a window (llama
// attends the whole context, as llama.cpp does for that architecture).
TEST(Gemma3Graph, NoSlidingLayerNoSecondMask) {
  auto model = preset_model(find_preset("qwen3-8b"));
  KVCache kv(model->hparams(), 64, DType::F16);
  EXPECT_FALSE(build_step_graph(*model, kv, StepShape{1, 0, 1}).kq_mask_swa);
  SynthSpec spec;
  spec.n_swa = 4;
  auto windowed = Model::from_gguf(GGUFFile::from_bytes("windowed", synthetic_model(spec, false).to_bytes(true), GGUFLoad::kHeaderOnly));
  EXPECT_EQ(windowed->hparams().n_swa, 4);
  KVCache kv2(windowed->hparams(), 64, DType::F16);
  EXPECT_FALSE(build_step_graph(*windowed, kv2, StepShape{1, 0, 1}).kq_mask_swa);
}

// Gemma 3 27B's global layers scale RoPE linearly by 8 (rope.scaling.factor); its sliding ones do not.
TEST(Gemma3Graph, GlobalLayersTakeTheFilesRopeScaling) {
  auto model = preset_model(find_preset("gemma-3-27b"));
  EXPECT_FLOAT_EQ(model->hparams().rope_freq_scale, 0.125f);
  KVCache kv(model->hparams(), 64, DType::F16);
  StepGraph step = build_step_graph(*model, kv, StepShape{1, 0, 1});
  for (const Tensor* n : step.graph->nodes()) {
    if (n->op != Op::ROPE) continue;
    EXPECT_FLOAT_EQ(rope_params(*n).freq_scale, n->layer % 6 == 5 ? 0.125f : 1.0f) << n->layer;
  }
}

// RoPE scaling the graph does not compute (YaRN, LongRoPE) is refused, naming it.
TEST(Gemma3Graph, UnsupportedRopeScalingIsRefused) {
  GGUFWriter w = synthetic_model(find_preset("gemma-3-27b").spec, false);
  w.set_string("gemma3.rope.scaling.type", "yarn");
  try {
    Model::from_gguf(GGUFFile::from_bytes("yarn", w.to_bytes(true), GGUFLoad::kHeaderOnly));
    ADD_FAILURE() << "a YaRN file loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rope.scaling.type 'yarn' is not supported"), std::string::npos) << e.what();
  }
}
