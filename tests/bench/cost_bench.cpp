// The cost analyzer on the largest models: load, build the step graph, analyze, draw the
// trace (to a discarding stream), as `engine-cost MODEL --trace` does.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <functional>
#include <ostream>
#include <streambuf>

#include "cost/trace.h"
#include "engine/arch.h"
#include "engine/preset.h"

namespace {

class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

void trace_model(benchmark::State& state, const std::function<std::unique_ptr<engine::Model>()>& load) {
  NullBuffer null;
  std::ostream out(&null);
  for (auto _ : state) {
    auto model = load();
    engine::KVCache kv(model->hparams(), 32768, engine::DType::F16);
    engine::StepGraph step = engine::build_step_graph(*model, kv, engine::StepShape{1, 0, 1});
    cost::write_trace(out, *step.graph, cost::analyze(*step.graph, cost::CostModel::kDefault));
    state.counters["nodes"] = static_cast<double>(step.graph->nodes().size());
  }
}

void BM_TraceLlama405bHeaderFile(benchmark::State& state) {
  const std::string path = std::string(ENGINE_SHARED_DIR) + "/models/llama-3.1-405b-q8_0.header.gguf";
  if (!std::filesystem::exists(path)) return state.SkipWithError("no ../shared");
  trace_model(state, [&] { return engine::Model::load(path, engine::GGUFLoad::kHeaderOnly); });
}

void BM_TraceLlama405bPreset(benchmark::State& state) {
  trace_model(state, [] { return engine::preset_model(engine::find_preset("llama-3.1-405b")); });
}

}  // namespace

BENCHMARK(BM_TraceLlama405bHeaderFile)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TraceLlama405bPreset)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
