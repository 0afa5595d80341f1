// engine-cost: what every node of a model's step graph costs, before anything runs.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <iostream>

#include "cost/trace.h"
#include "engine/arch.h"
#include "engine/error.h"

int main(int argc, char** argv) {
  std::string path, model_name = "default";
  int64_t tokens = 1, past = 0, ctx = 0;
  bool trace = false;
  CLI::App app{"engine-cost: static cost of a model's compute graph"};
  app.add_option("model", path, "GGUF file (header-only files work)")->required();
  app.add_option("--tokens", tokens, "new tokens in the step");
  app.add_option("--past", past, "cached tokens before the step");
  app.add_option("--ctx", ctx, "context (KV cache) size; 0: past + tokens");
  app.add_flag("--trace", trace, "print the ASCII dataflow trace");
  app.add_option("--cost-model", model_name, "default | seed");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "engine-cost: error: %s\n", e.what());
    return 1;
  }
  try {
    auto model = engine::Model::load(path, engine::GGUFLoad::kHeaderOnly);
    engine::KVCache kv(model->hparams(), ctx > 0 ? ctx : past + tokens, engine::DType::F16, false);
    engine::StepGraph step = engine::build_step_graph(*model, kv, engine::StepShape{tokens, past, 1});
    const auto cost = cost::analyze(*step.graph, cost::cost_model_from_name(model_name));
    if (trace) cost::write_trace(std::cout, *step.graph, cost);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engine-cost: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
