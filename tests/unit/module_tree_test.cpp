// Nodes group into the model's modules as the checkpoint names them: GPT-2 XL's blocks
// are ln_1, attn (c_attn, c_proj), ln_2 and mlp (c_fc, c_proj) in each of its 48 layers.
#include "cost/module_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "engine/arch.h"
#include "engine/preset.h"

using namespace engine;

namespace {

std::vector<cost::ModuleRow> decode_modules(const std::string& preset) {
  auto model = preset_model(find_preset(preset));
  KVCache kv(model->hparams(), 64, DType::F16);
  const StepGraph step = build_step_graph(*model, kv, StepShape{1, 0, 1});
  return cost::module_rows(*step.graph, module_root(model->hparams().arch));
}

bool has_path(const std::vector<cost::ModuleRow>& rows, const std::string& path) {
  return std::any_of(rows.begin(), rows.end(), [&](const cost::ModuleRow& r) { return r.path == path; });
}

}  // namespace

TEST(ModuleTree, Gpt2XlNamesItsBlocksInEveryLayer) {
  const auto rows = decode_modules("gpt2-xl");
  EXPECT_EQ(rows.front().name, "GPT2LMHeadModel");
  for (const char* top : {"transformer.wte", "transformer.wpe", "transformer.ln_f", "lm_head"}) EXPECT_TRUE(has_path(rows, top)) << top;
  for (int layer = 0; layer < 48; ++layer)
    for (const char* block : {"ln_1", "attn", "attn.c_attn", "attn.c_proj", "ln_2", "mlp", "mlp.c_fc", "mlp.c_proj"})
      EXPECT_TRUE(has_path(rows, "transformer.h." + std::to_string(layer) + "." + block)) << layer << " " << block;
  EXPECT_FALSE(has_path(rows, "transformer.h.48"));
}

TEST(ModuleTree, LlamaNamesAttentionAndFeedForwardProjections) {
  const auto rows = decode_modules("tinyllama-1.1b");
  EXPECT_EQ(rows.front().name, "LlamaForCausalLM");
  for (const char* block : {"input_layernorm", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                            "self_attn.o_proj", "post_attention_layernorm", "mlp.gate_proj", "mlp.up_proj",
                            "mlp.down_proj"})
    EXPECT_TRUE(has_path(rows, std::string("model.layers.21.") + block)) << block;
}

TEST(ModuleTree, TotalsCoverEveryNodeOnceAndArtDrawsTheTree) {
  const auto rows = decode_modules("gpt2");
  size_t self_nodes = 0;
  for (const auto& r : rows) self_nodes += r.self.size();
  EXPECT_EQ(self_nodes, rows.front().total.size());  // each node sits in exactly one module
  std::ostringstream out;
  cost::write_module_table(out, rows, {{"Nodes", [](const cost::ModuleRow& r) { return std::to_string(r.total.size()); }}});
  const std::string table = out.str();
  EXPECT_NE(table.find("├── transformer"), std::string::npos);
  EXPECT_NE(table.find("│││├── ln_1"), std::string::npos);
  EXPECT_NE(table.find("││││├── c_attn"), std::string::npos);
  EXPECT_NE(table.find("└── lm_head"), std::string::npos);
  EXPECT_NE(table.find("││ ├── ln_1"), std::string::npos);  // the last layer's children: its ancestor line ends
}
