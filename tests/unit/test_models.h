#pragma once
// Small synthetic models written once per test process into the temp folder, removed at its exit.
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "engine/arch.h"
#include "engine/synth.h"

namespace engine::test_models {

// The step's node called `name`, or nullptr.
inline const Tensor* node_named(const StepGraph& step, const std::string& name) {
  for (const Tensor* t : step.graph->nodes())
    if (t->name == name) return t;
  return nullptr;
}

// The temp folder's path for this process's model file `name` (parallel test processes never
// share one); the file is removed when the process exits.
inline std::string process_model_path(const std::string& name) {
  struct RemovedAtExit {
    std::set<std::string> paths;
    ~RemovedAtExit() {
      std::error_code ignored;
      for (const std::string& p : paths) std::filesystem::remove(p, ignored);
    }
  };
  static RemovedAtExit files;
  const auto path = std::filesystem::temp_directory_path() / ("engine-test-" + std::to_string(getpid()) + "-" + name + ".gguf");
  return *files.paths.insert(path.string()).first;
}

// Writes `spec` to this process's file `name` the first time it is asked for; returns its path.
inline std::string written_once(const std::string& name, const SynthSpec& spec) {
  static std::set<std::string> written;
  const std::string path = process_model_path(name);
  if (written.insert(name).second) write_synthetic_model(spec, path);
  return path;
}

// Path of a synthetic llama model of `type` (tiny shape), written on first use.
inline std::string synthetic_model(DType type, int64_t n_embd = 256, int64_t n_ff = 512) {
  SynthSpec spec;
  spec.type = type;
  spec.n_embd = n_embd;
  spec.n_ff = n_ff;
  spec.n_layer = 2;
  spec.n_head = 4;
  spec.n_head_kv = 2;
  spec.n_ctx_train = 256;
  return written_once(std::string(dtype_name(type)) + "-" + std::to_string(n_embd) + "-" + std::to_string(n_ff), spec);
}

// A tiny synthetic gpt2 model: 2 layers, 64 embedding, 4 heads, ffn 256, 400-token byte-level
// BPE vocab, 128 positions; `tied`: no output.weight.
inline SynthSpec gpt2_spec(bool tied) {
  SynthSpec spec;
  spec.arch = "gpt2";
  spec.n_embd = 64;
  spec.n_layer = 2;
  spec.n_head = 4;
  spec.n_head_kv = 4;
  spec.n_ff = 256;
  spec.n_vocab = 400;
  spec.n_ctx_train = 128;
  spec.tied_embeddings = tied;
  return spec;
}

// Path of that model, written on first use.
inline std::string synthetic_gpt2_model(bool tied) {
  return written_once(std::string("gpt2-") + (tied ? "tied" : "untied"), gpt2_spec(tied));
}

// A tiny synthetic qwen2 model with the 1024-token byte-level BPE vocabulary engine-gguf synth
// writes for Qwen (Qwen2's pre-tokenizer, <|im_start|> and <|im_end|>), written on first use.
inline std::string synthetic_qwen2_model() {
  SynthSpec spec;
  spec.arch = "qwen2";
  spec.n_embd = 64;
  spec.n_head = 2;
  spec.n_head_kv = 1;
  spec.n_ff = 128;
  spec.n_layer = 2;
  spec.n_vocab = 1024;
  return written_once("qwen2-vocab1024", spec);
}

}  // namespace engine::test_models
