// engine-cost: what every node of a model's step graph costs, before anything runs.
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>

#include "cost/hardware.h"
#include "cost/report.h"
#include "cost/trace.h"
#include "engine/error.h"
#include "engine/preset.h"
#include "tool_cli.h"

int main(int argc, char** argv) {
  std::string path, preset, type, format = "text", model_name = "default", kv_type = "f16", hw;
  cost::AnalysisOptions opt;
  bool trace = false;
  using tool_cli::integer;
  CLI::App app{"engine-cost: the static cost of a model's compute graph (header-only GGUF files work; with no model "
               "and no --preset: the built-in stories260K model)"};
  tool_cli::show_defaults(app);
  app.add_option("model", path, "GGUF file");
  app.add_option("--preset", preset, "a public architecture instead of a file (--preset list shows them)");
  app.add_option("--type", type, "with --preset: the matrices' dtype (default: the published one)");
  app.add_option("--tokens", opt.n_tokens, "new tokens in the step")->check(integer(int64_t{1}, int64_t{1} << 24));
  app.add_option("--past", opt.n_past, "cached tokens before the step")->check(integer(int64_t{0}, int64_t{1} << 24));
  app.add_option("--ctx", opt.n_ctx, "context (KV cache) size; 0: as engine-run (training context, at most 4096)")
      ->check(integer(int64_t{0}, int64_t{1} << 24));
  app.add_option("--ubatch", opt.n_ubatch, "prompt tokens per step, as engine-run -b (sizes the compute buffer)")
      ->check(integer(int64_t{1}, int64_t{1} << 16));
  app.add_option("--kv-type", kv_type, "KV cache type")->check(CLI::IsMember({"f16", "f32"}));
  app.add_flag("--trace", trace, "print the ASCII dataflow trace instead of the summary");
  app.add_option("--format", format, "text | json | csv")->check(CLI::IsMember({"text", "json", "csv"}));
  app.add_option("--cost-model", model_name, "default | seed")->check(CLI::IsMember({"default", "seed"}));
  app.add_option("--hw", hw, "hardware profile for speed prediction (--hw list shows them)")
      ->check(tool_cli::checked_by([](const std::string& name) { if (name != "list") cost::check_hardware_name(name); },
                                   "PROFILE"));
  app.add_option("-t,--threads", opt.threads,
                 "threads, as engine-run -t (default: all hardware threads): the CPU scratch and the cpu-local probe")
      ->check(integer(1, 1024));
  app.add_option("--backend", opt.backend, "whose memory figures, as engine-run --backend (--list-devices in engine-run)")
      ->check(tool_cli::checked_by([](const std::string& name) { engine::check_backend(name); }, "NAME"));
  if (const auto exit_code = tool_cli::parse(app, argc, argv, "engine-cost")) return *exit_code;
  try {
    if (hw == "list") {
      cost::write_hardware_list(std::cout);
      return 0;
    }
    if (preset == "list") {
      for (const engine::Preset& p : engine::presets()) std::cout << p.name << "  " << p.description << "\n";
      return 0;
    }
    if (!path.empty() && !preset.empty()) throw engine::Error("give a GGUF file or --preset NAME, not both");
    std::unique_ptr<engine::Model> model;
    std::string source = path;
    if (path.empty() && preset.empty()) {
      model = engine::Model::load_builtin();
      source = model->file().path();
    } else if (!preset.empty()) {
      std::optional<engine::DType> dtype;
      if (!type.empty() && !(dtype = engine::dtype_from_name(type))) throw engine::Error("unknown --type '" + type + "'");
      model = engine::preset_model(engine::find_preset(preset), dtype);
      source = "preset " + preset;
    } else {
      model = engine::Model::load(path, engine::GGUFLoad::kHeaderOnly);
    }
    opt.kv_type = *engine::dtype_from_name(kv_type);
    opt.model = cost::cost_model_from_name(model_name);
    opt.hardware = hw;
    const cost::Analysis a = cost::analyze_model(*model, source, opt);
    if (trace) cost::write_trace(std::cout, *a.step.graph, a.cost);
    else if (format == "json") cost::write_json(std::cout, a);
    else if (format == "csv") cost::write_csv(std::cout, a);
    else cost::write_text(std::cout, a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engine-cost: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
