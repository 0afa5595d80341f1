// engine-gguf synth: writes a model of a supported architecture with random weights of any shape and dtype.
#include <fmt/core.h>

#include <memory>
#include <string>

#include "commands.h"
#include "engine/arch.h"
#include "engine/dtype.h"
#include "engine/error.h"
#include "engine/synth.h"
#include "tool_cli.h"

void add_synth_command(CLI::App& app) {
  using tool_cli::integer;
  auto spec = std::make_shared<engine::SynthSpec>();
  auto out = std::make_shared<std::string>();
  auto type = std::make_shared<std::string>("f32");
  CLI::App* cmd = app.add_subcommand("synth", "write a model of a supported architecture with random weights");
  cmd->add_option("-o,--out", *out, "output GGUF file")->required()->check(tool_cli::writable_file);
  cmd->add_option("--arch", spec->arch, "architecture")->check(CLI::IsMember(engine::supported_archs()));
  cmd->add_option("--type", *type, "matrix dtype (f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_k..q6_k)");
  cmd->add_option("--embd", spec->n_embd, "embedding length")->check(integer(1, 1 << 16));
  cmd->add_option("--layers", spec->n_layer, "transformer blocks")->check(integer(1, 1024));
  cmd->add_option("--heads", spec->n_head, "attention heads")->check(integer(1, 1024));
  cmd->add_option("--kv-heads", spec->n_head_kv, "key/value heads")->check(integer(1, 1024));
  cmd->add_option("--head-dim", spec->n_embd_head, "head size (0: embedding / heads)")->check(integer(0, 1 << 12));
  cmd->add_option("--ff", spec->n_ff, "feed-forward length")->check(integer(1, 1 << 18));
  cmd->add_option("--vocab", spec->n_vocab, "vocabulary size")->check(integer(257, 1 << 20));
  cmd->add_option("--ctx", spec->n_ctx_train, "training context length")->check(integer(1, 1 << 24));
  cmd->add_option("--original-ctx", spec->n_ctx_orig,
                  "phi3: the context before long-context RoPE, with long and short factors (0: none)")
      ->check(integer(0, 1 << 24));
  cmd->add_option("--experts", spec->n_expert, "experts per feed-forward (qwen3moe, or llama as Mixtral; 0: dense)")
      ->check(integer(0, 1024));
  cmd->add_option("--experts-used", spec->n_expert_used, "experts each token is routed to")->check(integer(0, 1024));
  cmd->add_option("--expert-ff", spec->n_ff_exp, "an expert's feed-forward length (0: --ff)")->check(integer(0, 1 << 18));
  cmd->add_option("--sliding-window", spec->n_swa, "attention.sliding_window (0: none)")->check(integer(0, 1 << 24));
  cmd->add_flag("--tied-embeddings", spec->tied_embeddings, "no output matrix: the token embedding serves as output");
  cmd->add_option("--distinct-rows", spec->distinct_rows,
                  "draw this many rows of each matrix and repeat them (0: draw every row); a large file in seconds")
      ->check(integer(int64_t{0}, INT64_MAX));
  cmd->add_option("--seed", spec->seed, "random seed")->check(integer(uint64_t{0}, UINT64_MAX));
  cmd->callback([spec, out, type] {
    const auto dtype = engine::dtype_from_name(*type);
    if (!dtype || *dtype == engine::DType::Q8_1 || *dtype == engine::DType::Q8_K || *dtype == engine::DType::I32)
      throw engine::Error("unknown weight type '" + *type + "'");
    spec->type = *dtype;
    engine::write_synthetic_model(*spec, *out);
    fmt::print("wrote {}\n", *out);
  });
}
