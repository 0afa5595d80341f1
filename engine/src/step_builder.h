#pragma once
// Shared plumbing of the architecture builders: weight and KV leaves, step inputs.
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/arch.h"

namespace engine {

// "blk.<il>.<name>.<kind>": a layer's tensor as GGUF files name it.
std::string blk(int64_t il, const std::string& name, const char* kind = "weight");
// "-<il>": the suffix of a layer's node names, as llama.cpp's.
std::string layer_suffix(int64_t il);

class StepBuilder {
 public:
  StepBuilder(const Model& model, const KVCache& kv, const StepShape& step);

  // The weight leaf `name`, checked to have shape ne; one leaf per name per graph.
  Tensor* weight(const std::string& name, std::vector<int64_t> ne);
  // Like weight(), or nullptr when the file has no such tensor.
  Tensor* optional_weight(const std::string& name, std::vector<int64_t> ne);
  Tensor* k_cache(int64_t il) { return cache_leaf(il, false); }
  Tensor* v_cache(int64_t il) { return cache_leaf(il, true); }
  // Stores this step's K [n_embd_kv, n_tokens] and V into layer il's cache, then returns
  // attention output [n_embd_head * n_head, n_tokens] for queries q [head, n_head, n_tokens];
  // `sliding`: under the sliding-window mask.
  Tensor* attention(int64_t il, Tensor* q, Tensor* k, Tensor* v, float kq_scale, bool sliding = false);
  // `t` in layer il: in the last layer only its rows whose logits are wanted, which are all that
  // go on after attention.
  Tensor* output_rows(int64_t il, Tensor* t);
  // attn + inp, the block's residual after attention ("ffn_inp-<il>"); in the last layer only
  // the rows whose logits are wanted go on.
  Tensor* attention_residual(int64_t il, Tensor* attn, Tensor* inp);

  Graph& g() { return *out_.graph; }
  StepGraph& out() { return out_; }
  const HParams& hp() const { return model_.hparams(); }
  const StepShape& step() const { return step_; }
  // Marks the logits tensor as the graph's output and lists every node.
  StepGraph finish(Tensor* logits);

 private:
  Tensor* cache_leaf(int64_t il, bool v);

  const Model& model_;
  const KVCache& kv_;
  StepShape step_;
  StepGraph out_;
  std::unordered_map<std::string, Tensor*> leaves_;
};

StepGraph build_llama(const Model& model, const KVCache& kv, const StepShape& step);
StepGraph build_qwen2(const Model& model, const KVCache& kv, const StepShape& step);
StepGraph build_qwen3(const Model& model, const KVCache& kv, const StepShape& step);
StepGraph build_qwen3moe(const Model& model, const KVCache& kv, const StepShape& step);
StepGraph build_phi3(const Model& model, const KVCache& kv, const StepShape& step);
StepGraph build_gemma3(const Model& model, const KVCache& kv, const StepShape& step);
StepGraph build_gpt2(const Model& model, const KVCache& kv, const StepShape& step);

}  // namespace engine
