#pragma once
// Small synthetic models written once per test run into the temp folder.
#include <filesystem>
#include <string>

#include "engine/synth.h"

namespace engine::test_models {

// Path of a synthetic llama model of `type` (tiny shape), written on first use.
inline std::string synthetic_model(DType type, int64_t n_embd = 256, int64_t n_ff = 512) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("engine-test-" + std::string(dtype_name(type)) + "-" + std::to_string(n_embd) + "-" +
                     std::to_string(n_ff) + ".gguf");
  SynthSpec spec;
  spec.type = type;
  spec.n_embd = n_embd;
  spec.n_ff = n_ff;
  spec.n_layer = 2;
  spec.n_head = 4;
  spec.n_head_kv = 2;
  spec.n_ctx_train = 256;
  write_synthetic_model(spec, path.string());
  return path.string();
}

}  // namespace engine::test_models
