// The gpt2 step graph: llama.cpp's node sequence and names for a one-token decode, tied and
// untied output, a CPU run with finite logits that agree between prefill and decode, clear
// errors for a missing position embedding or a context past the learned positions; the
// synthesized BPE vocabulary; the GPT-2 presets under the cost analyzer.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "cost/cost.h"
#include "engine/arch.h"
#include "engine/backend.h"
#include "engine/error.h"
#include "engine/plan.h"
#include "engine/preset.h"
#include "test_models.h"

using namespace engine;
using engine::test_models::node_named;

namespace {

const std::string kShared = ENGINE_SHARED_DIR;

struct Expected {
  std::string name;
  Op op;
  std::string shape;
};

// One transformer block of a one-token decode of the test model (64 embedding, 4 heads of
// 16, ffn 256, 32 KV positions in view); the last block keeps only the output rows.
std::vector<Expected> block_nodes(int il, bool last) {
  const std::string s = "-" + std::to_string(il);
  std::vector<Expected> n = {
      {"norm" + s, Op::NORM, "[64, 1]"},
      {"norm_w" + s, Op::MUL, "[64, 1]"},
      {"attn_norm" + s, Op::ADD, "[64, 1]"},
      {"wqkv" + s, Op::MUL_MAT, "[192, 1]"},
      {"bqkv" + s, Op::ADD, "[192, 1]"},
      {"Qcur" + s, Op::VIEW, "[16, 4]"},
      {"Kcur" + s, Op::VIEW, "[16, 4]"},
      {"Vcur" + s, Op::VIEW, "[64, 1]"},
      {"k_cache_view" + s, Op::VIEW, "[64, 1]"},
      {"k_cache_view" + s, Op::CPY, "[64, 1]"},
      {"Vcur" + s, Op::TRANSPOSE, "[1, 64]"},
      {"v_cache_view" + s, Op::VIEW, "[1, 64]"},
      {"v_cache_view" + s, Op::CPY, "[1, 64]"},
      {"v" + s, Op::VIEW, "[32, 16, 4]"},
      {"k" + s, Op::VIEW, "[16, 32, 4]"},
      {"q" + s, Op::PERMUTE, "[16, 1, 4]"},
      {"kq" + s, Op::MUL_MAT, "[32, 1, 4]"},
      {"kq_soft_max_ext" + s, Op::SOFT_MAX, "[32, 1, 4]"},
      {"kqv" + s, Op::MUL_MAT, "[16, 1, 4]"},
      {"kqv_merged" + s, Op::PERMUTE, "[16, 4]"},
      {"kqv_merged_cont" + s, Op::CONT, "[64, 1]"},
      {"kqv_wo" + s, Op::MUL_MAT, "[64, 1]"},
      {"kqv_out" + s, Op::ADD, "[64, 1]"},
  };
  if (last) {
    n.push_back({"", Op::GET_ROWS, "[64, 1]"});
    n.push_back({"", Op::GET_ROWS, "[64, 1]"});
  }
  for (Expected e : std::vector<Expected>{{"ffn_inp" + s, Op::ADD, "[64, 1]"},
                                          {"norm" + s, Op::NORM, "[64, 1]"},
                                          {"norm_w" + s, Op::MUL, "[64, 1]"},
                                          {"ffn_norm" + s, Op::ADD, "[64, 1]"},
                                          {"ffn_up" + s, Op::MUL_MAT, "[256, 1]"},
                                          {"ffn_up_b" + s, Op::ADD, "[256, 1]"},
                                          {"ffn_gelu" + s, Op::GELU, "[256, 1]"},
                                          {"ffn_down" + s, Op::MUL_MAT, "[64, 1]"},
                                          {"ffn_out" + s, Op::ADD, "[64, 1]"},
                                          {"l_out" + s, Op::ADD, "[64, 1]"}})
    n.push_back(e);
  return n;
}

// The model's header with every tensor but `drop`, as an in-memory header-only file.
std::unique_ptr<GGUFFile> without_tensor(const SynthSpec& spec, const std::string& drop) {
  auto full = GGUFFile::from_bytes("full", synthetic_model(spec, false).to_bytes(true), GGUFLoad::kHeaderOnly);
  GGUFWriter w;
  for (const auto& [key, value] : full->metadata()) w.set_value(key, value);
  for (const GGUFTensorInfo& t : full->tensors())
    if (t.name != drop) w.add_tensor(t.name, t.type, std::vector<int64_t>(t.ne, t.ne + t.n_dims), {});
  return GGUFFile::from_bytes("without " + drop, w.to_bytes(true), GGUFLoad::kHeaderOnly);
}

// A CPU backend holding the model's weights and the KV cache `kv` lays out.
std::unique_ptr<Backend> cpu_backend_for(const Model& model, const KVCache& kv) {
  auto backend = make_cpu_backend(2);
  backend->load_weights(model);
  backend->allocate_kv(kv);
  return backend;
}

// Runs one step on the backend and returns the logits of its last token.
std::vector<float> run_step(const Model& model, const KVCache& kv, Backend& backend, const std::vector<int32_t>& tokens,
                            int64_t n_past) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  StepGraph s = build_step_graph(model, kv, StepShape{n, n_past, 1});
  backend.allocate(*s.graph, Plan::make(*s.graph));
  set_step_inputs(backend, s, tokens, n_past);
  backend.compute(*s.graph, nullptr);
  std::vector<float> logits(static_cast<size_t>(model.hparams().n_vocab));
  backend.get_output(*s.logits, logits.data(), logits.size() * sizeof(float));
  return logits;
}

}  // namespace

TEST(Gpt2Graph, DecodeHasLlamaCppNodeSequence) {
  auto model = Model::load(test_models::synthetic_gpt2_model(true), GGUFLoad::kHeaderOnly);
  KVCache kv(model->hparams(), 64, DType::F16);
  StepGraph step = build_step_graph(*model, kv, StepShape{1, 0, 1});

  std::vector<Expected> expected = {{"inp_embd", Op::GET_ROWS, "[64, 1]"},
                                    {"pos_embd", Op::GET_ROWS, "[64, 1]"},
                                    {"inpL", Op::ADD, "[64, 1]"}};
  for (int il = 0; il < 2; ++il)
    for (const Expected& e : block_nodes(il, il == 1)) expected.push_back(e);
  for (Expected e : std::vector<Expected>{{"norm", Op::NORM, "[64, 1]"},
                                          {"norm_w", Op::MUL, "[64, 1]"},
                                          {"result_norm", Op::ADD, "[64, 1]"},
                                          {"result_output", Op::MUL_MAT, "[400, 1]"}})
    expected.push_back(e);

  const auto& nodes = step.graph->nodes();
  ASSERT_EQ(nodes.size(), expected.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    SCOPED_TRACE("node " + std::to_string(i) + " " + nodes[i]->name);
    if (!expected[i].name.empty()) {
      EXPECT_EQ(nodes[i]->name, expected[i].name);
    }
    EXPECT_EQ(nodes[i]->op, expected[i].op);
    EXPECT_EQ(nodes[i]->shape_str(), expected[i].shape);
    EXPECT_NE(nodes[i]->op, Op::ROPE);
  }
  EXPECT_EQ(nodes[10]->layer, 0);  // block nodes carry their layer, the head and tail -1
  EXPECT_EQ(nodes.front()->layer, -1);
  EXPECT_EQ(nodes.back()->layer, -1);

  // Tied: the logits come from the token embedding; every weight and bias is a leaf of the graph.
  EXPECT_EQ(step.logits, nodes.back());
  EXPECT_EQ(step.logits->src[0]->name, "token_embd.weight");
  EXPECT_EQ(node_named(step, "pos_embd")->src[0]->name, "position_embd.weight");
  EXPECT_EQ(node_named(step, "attn_norm-1")->src[1]->name, "blk.1.attn_norm.bias");
  EXPECT_EQ(node_named(step, "bqkv-0")->src[1]->name, "blk.0.attn_qkv.bias");
  EXPECT_EQ(node_named(step, "kqv_out-0")->src[1]->name, "blk.0.attn_output.bias");
  EXPECT_EQ(node_named(step, "ffn_up_b-1")->src[1]->name, "blk.1.ffn_up.bias");
  EXPECT_EQ(node_named(step, "ffn_out-1")->src[1]->name, "blk.1.ffn_down.bias");
  EXPECT_EQ(node_named(step, "result_norm")->src[1]->name, "output_norm.bias");
}

TEST(Gpt2Graph, QkvViewsSplitTheFusedRows) {
  auto model = Model::load(test_models::synthetic_gpt2_model(true), GGUFLoad::kHeaderOnly);
  KVCache kv(model->hparams(), 64, DType::F16);
  StepGraph step = build_step_graph(*model, kv, StepShape{5, 3, 1});
  const Tensor* qkv = node_named(step, "bqkv-0");
  const Tensor* q = node_named(step, "Qcur-0");
  const Tensor* k = node_named(step, "Kcur-0");
  const Tensor* v = node_named(step, "Vcur-0");
  ASSERT_TRUE(qkv && q && k && v);
  EXPECT_EQ(qkv->shape_str(), "[192, 5]");
  for (const Tensor* t : {q, k, v}) {
    EXPECT_EQ(t->view_src, qkv);
    EXPECT_EQ(t->nb[t == v ? 1 : 2], qkv->nb[1]);  // one token per fused row
  }
  EXPECT_EQ(q->view_offs, 0u);
  EXPECT_EQ(k->view_offs, 64 * sizeof(float));
  EXPECT_EQ(v->view_offs, 128 * sizeof(float));
  EXPECT_EQ(q->shape_str(), "[16, 4, 5]");
  EXPECT_EQ(v->shape_str(), "[64, 5]");
}

TEST(Gpt2Graph, UntiedModelProjectsWithOutputWeight) {
  auto model = Model::load(test_models::synthetic_gpt2_model(false), GGUFLoad::kHeaderOnly);
  KVCache kv(model->hparams(), 64, DType::F16);
  StepGraph step = build_step_graph(*model, kv, StepShape{1, 0, 1});
  EXPECT_EQ(step.logits->src[0]->name, "output.weight");
}

TEST(Gpt2Graph, CpuRunGivesFiniteLogitsThatPrefillAndDecodeAgreeOn) {
  auto model = Model::load(test_models::synthetic_gpt2_model(true));
  const std::vector<int32_t> tokens = {260, 17, 399, 3, 300, 42};
  KVCache kv(model->hparams(), 64, DType::F32);
  const std::vector<float> all_at_once = run_step(*model, kv, *cpu_backend_for(*model, kv), tokens, 0);
  ASSERT_EQ(all_at_once.size(), 400u);
  float spread = 0;
  for (float v : all_at_once) {
    ASSERT_TRUE(std::isfinite(v));
    spread = std::max(spread, std::fabs(v - all_at_once[0]));
  }
  EXPECT_GT(spread, 0.0f);  // not a constant vector

  const auto stepping = cpu_backend_for(*model, kv);
  run_step(*model, kv, *stepping, {tokens.begin(), tokens.end() - 2}, 0);
  run_step(*model, kv, *stepping, {tokens[4]}, 4);
  const std::vector<float> stepwise = run_step(*model, kv, *stepping, {tokens[5]}, 5);
  for (size_t i = 0; i < stepwise.size(); ++i)
    EXPECT_NEAR(stepwise[i], all_at_once[i], 1e-3f * std::max(1.0f, std::fabs(all_at_once[i]))) << "logit " << i;
}

TEST(Gpt2Graph, MissingPositionEmbeddingIsAClearError) {
  try {
    Model::from_gguf(without_tensor(test_models::gpt2_spec(true), "position_embd.weight"));
    FAIL() << "a gpt2 model without position_embd.weight loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing tensor 'position_embd.weight'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Model::from_gguf(without_tensor(test_models::gpt2_spec(true), "blk.1.ffn_up.bias")), Error);
}

TEST(Gpt2Graph, ContextPastLearnedPositionsIsAnError) {
  auto model = Model::load(test_models::synthetic_gpt2_model(true), GGUFLoad::kHeaderOnly);
  KVCache kv(model->hparams(), 256, DType::F16);  // the model learned 128 positions
  EXPECT_NO_THROW(build_step_graph(*model, kv, StepShape{8, 120, 1}));
  try {
    build_step_graph(*model, kv, StepShape{8, 121, 1});
    FAIL() << "position 128 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("128 learned position embeddings"), std::string::npos) << e.what();
  }
}

TEST(Gpt2Graph, UnsupportedArchitectureListsTheSupportedOnes) {
  SynthSpec spec = test_models::gpt2_spec(true);
  auto file = GGUFFile::from_bytes("x", synthetic_model(spec, false).to_bytes(true), GGUFLoad::kHeaderOnly);
  GGUFWriter w;
  for (const auto& [key, value] : file->metadata()) {
    GGUFValue v = value;
    if (key == "general.architecture") v.s = "mamba";
    w.set_value(key, v);
  }
  try {
    Model::from_gguf(GGUFFile::from_bytes("mamba", w.to_bytes(true), GGUFLoad::kHeaderOnly));
    FAIL() << "an unknown architecture loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(supported: llama, qwen2, qwen3, qwen3moe, gemma3, phi3, gpt2)"), std::string::npos) << e.what();
  }
}

TEST(Gpt2Synth, ByteTokensAreGpt2sAndMergesBuildTokens) {
  auto file = GGUFFile::open(test_models::synthetic_gpt2_model(true), GGUFLoad::kHeaderOnly);
  EXPECT_EQ(file->require_string("tokenizer.ggml.model"), "gpt2");
  const GGUFValue* tokens = file->find_array("tokenizer.ggml.tokens");
  const GGUFValue* merges = file->find_array("tokenizer.ggml.merges");
  ASSERT_TRUE(tokens && merges);
  ASSERT_EQ(tokens->strings.size(), 400u);
  EXPECT_EQ(tokens->strings[0], "!");
  EXPECT_EQ(tokens->strings[188], "\xC4\x80");  // byte 0 is U+0100, after the 188 printable bytes
  EXPECT_EQ(tokens->strings[220], "\xC4\xA0");  // byte 32 (space) is U+0120 'Ġ'
  EXPECT_EQ(tokens->strings[399], "<|endoftext|>");
  EXPECT_EQ(file->require_int("tokenizer.ggml.eos_token_id"), 399);
  ASSERT_GT(merges->strings.size(), 100u);
  for (size_t i = 0; i < merges->strings.size(); ++i) {
    const std::string& m = merges->strings[i];
    const size_t space = m.find(' ');
    ASSERT_NE(space, std::string::npos) << m;
    EXPECT_EQ(tokens->strings[256 + i], m.substr(0, space) + m.substr(space + 1)) << "merge " << i;
  }

  const std::string gpt2 = kShared + "/models/synth-gpt2-f32.gguf";
  if (!std::filesystem::exists(gpt2)) GTEST_SKIP() << "no ../shared";
  auto real = GGUFFile::open(gpt2, GGUFLoad::kHeaderOnly);
  const GGUFValue* real_tokens = real->find_array("tokenizer.ggml.tokens");
  ASSERT_TRUE(real_tokens);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(tokens->strings[i], real_tokens->strings[i]) << "byte token " << i;
}

// GPT-2 XL as the cost analyzer sees it: one multiply-add per weight of every matrix a
// decode step reads, and each block's LayerNorms, attention and MLP identifiable by name.
TEST(Gpt2Preset, XlDecodeCostsAndNamesItsBlocks) {
  auto model = preset_model(find_preset("gpt2-xl"));
  const HParams& hp = model->hparams();
  ASSERT_EQ(hp.arch, "gpt2");
  KVCache kv(hp, 1024, DType::F16);
  StepGraph step = build_step_graph(*model, kv, StepShape{1, 0, 1});
  const cost::GraphCost c = cost::analyze(*step.graph, cost::CostModel::kDefault);
  const double d = 1600, ff = 6400, span = 32;
  const double per_block = d * 3 * d + d * d + 2 * d * ff + 2 * span * d;  // qkv, output, MLP, kq and kqv
  double matmul_fmul = 0;
  for (const auto& [op, counts] : c.by_op)
    if (op == "MUL_MAT") matmul_fmul = counts.get(cost::Metric::kFmul);
  EXPECT_DOUBLE_EQ(matmul_fmul, 48 * per_block + 50257 * d);
  EXPECT_EQ(c.total.get(cost::Metric::kSqrt), 48 * 2 + 1);  // two LayerNorms per block and the final one
  ASSERT_EQ(c.by_layer.size(), 49u);

  for (int il = 0; il < 48; ++il) {
    const std::string s = "-" + std::to_string(il);
    for (const std::string& name : {"attn_norm" + s, "wqkv" + s, "kqv_out" + s, "ffn_norm" + s, "ffn_up" + s,
                                    "ffn_gelu" + s, "ffn_out" + s, "l_out" + s}) {
      const Tensor* t = node_named(step, name);
      ASSERT_TRUE(t) << name;
      EXPECT_EQ(t->layer, il) << name;
    }
  }
}

TEST(Gpt2Preset, EveryPresetBuildsADecodeStep) {
  for (const Preset& p : presets()) {
    SCOPED_TRACE(p.name);
    auto model = preset_model(p);
    KVCache kv(model->hparams(), 64, DType::F16);
    EXPECT_FALSE(build_step_graph(*model, kv, StepShape{1, 0, 1}).graph->nodes().empty());
  }
}
