#pragma once
// Synthetic models: random weights for any shape and weight dtype of every supported
// architecture, with a small vocabulary (SentencePiece for llama, gemma3 and phi3, byte-level BPE
// with Qwen2's pre-tokenizer for qwen2 and qwen3, with GPT-2's for gpt2), written as a GGUF file.
// Used by tests, demos, benchmarks and the cost analyzer's presets.
#include <cstdint>
#include <string>

#include "engine/dtype.h"
#include "engine/gguf.h"

namespace engine {

struct SynthSpec {
  std::string arch = "llama";  // any of supported_archs()
  int64_t n_embd = 256;
  int64_t n_layer = 4;
  int64_t n_head = 8;
  int64_t n_head_kv = 2;
  int64_t n_embd_head = 0;  // head size (attention.key_length); 0: n_embd / n_head
  int64_t n_ff = 768;
  int64_t n_ctx_train = 2048;
  int64_t n_vocab = 512;  // llama: at least 259 (3 control + 256 byte tokens); gpt2: at least 257
  DType type = DType::F32;  // dtype of the matrices; norms stay f32
  float rope_freq_base = 10000.0f;  // llama only
  float rope_scaling_factor = 0;  // linear RoPE scaling (rope.scaling.factor); 0: none
  int64_t n_ctx_orig = 0;  // phi3: rope.scaling.original_context_length, with long and short RoPE factors; 0: none
  int64_t n_expert = 0;       // experts per feed-forward (qwen3moe, or Mixtral-style llama); 0: dense
  int64_t n_expert_used = 0;  // experts each token is routed to
  int64_t n_ff_exp = 0;       // an expert's feed-forward length (expert_feed_forward_length); 0: n_ff
  int64_t n_swa = 0;  // attention.sliding_window; 0: none (gemma3 slides five layers in six)
  float norm_eps = 1e-5f;
  bool tied_embeddings = false;  // no output.weight: the token embedding serves as output
  uint64_t seed = 42;
  // Rows of each matrix drawn at random; the rest repeat them (0: every row). For a model whose
  // size matters and not its values (timing), which is then quick to make at any size.
  int64_t distinct_rows = 0;

  int64_t head_size() const { return n_embd_head > 0 ? n_embd_head : n_embd / n_head; }
};

// The model as a GGUF writer. With weights = false the tensors are declared without data
// (for a header-only image) and no vocabulary is added. Throws Error when the shape does
// not fit the dtype's blocks.
GGUFWriter synthetic_model(const SynthSpec& spec, bool weights);
// Writes the model with random weights to `path`.
void write_synthetic_model(const SynthSpec& spec, const std::string& path);

}  // namespace engine
