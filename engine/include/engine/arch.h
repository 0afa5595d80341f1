#pragma once
// Architecture builders: turn a Model into the graph of one forward step. The cost
// analyzer and every backend use the graph built here.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/graph.h"
#include "engine/kv_cache.h"
#include "engine/model.h"

namespace engine {

// One forward step: n_tokens new tokens after n_past cached ones.
struct StepShape {
  int64_t n_tokens = 1;
  int64_t n_past = 0;
  int64_t n_outputs = 1;  // tokens whose logits are computed: the last n_outputs of the batch
};

struct StepGraph {
  std::unique_ptr<Graph> graph;
  Tensor* tokens = nullptr;   // i32 [n_tokens]
  Tensor* pos = nullptr;      // i32 [n_tokens]
  Tensor* kq_mask = nullptr;  // f32 [n_kv, pad(n_tokens, 32)]
  // The causal mask that also hides positions n_swa or more behind each query, for the
  // sliding-window layers; nullptr where no layer slides.
  Tensor* kq_mask_swa = nullptr;
  int64_t n_swa = 0;
  Tensor* out_ids = nullptr;  // i32 [n_outputs]
  Tensor* logits = nullptr;   // f32 [n_vocab, n_outputs]
  int64_t n_kv = 0;           // cache positions attention reads
  int64_t n_past = 0;         // cached tokens before the step
  int64_t n_ctx = 0;          // positions of the KV cache it was built for
};

// The step a session reserves its compute buffer for: a full batch of n_ubatch prompt
// tokens (at most n_ctx) ending at the last context position, the largest graph it runs.
StepShape largest_step(int64_t n_ctx, int64_t n_ubatch);
// The context a session uses when none is asked for: the training context, at most 4096.
int64_t default_context(const HParams& hp);

// KV positions attention reads for a step: at least 32, padded to 32, at most n_ctx.
int64_t attention_span(int64_t n_past, int64_t n_tokens, int64_t n_ctx);
constexpr int64_t kMaskRowPad = 32;

// Builds the step graph for the model's architecture. Weight and KV leaves name their storage
// (Tensor::storage_index); the backend running the graph binds it.
StepGraph build_step_graph(const Model& model, const KVCache& kv, const StepShape& step);
// Turns `s` into the graph of the same step shape after n_past cached tokens: the KV store views'
// offsets and the causal multiplies' first query position move; nothing else differs from a
// graph built for it, as long as the attention span (n_kv) stays the same. So a backend can
// record a graph's commands once per (n_tokens, n_kv) and replay them for later steps with
// these values updated. Throws Error when n_past leaves the span or the context.
void rebase_step(StepGraph& s, int64_t n_past);
// Sets a step's inputs on the backend the graph was allocated on: the tokens, their positions
// n_past.., the causal masks, and the positions of the last n_outputs tokens as the rows whose
// logits are computed.
void set_step_inputs(Backend& backend, const StepGraph& s, std::span<const int32_t> tokens, int64_t n_past);
// Throws Error when a weight the architecture needs is missing or has the wrong shape.
void check_weights(const Model& model);
// The name of the whole model in module trees ("LlamaForCausalLM", "GPT2LMHeadModel").
std::string module_root(const std::string& arch);
// Whether build_step_graph knows `arch`.
bool arch_supported(const std::string& arch);
// Every architecture build_step_graph knows, in the order error messages list them.
const std::vector<std::string>& supported_archs();
// supported_archs() as a list for messages: "llama, qwen2, ...".
std::string supported_archs_text();

}  // namespace engine
