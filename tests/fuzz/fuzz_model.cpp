// Fuzz target: a model from a parsed GGUF header (hyper-parameters against tensor shapes, missing
// tensors, zero or absurd dimensions, unknown architectures), its step graphs for a prompt and a
// decode step, their costs and compute-buffer plans, and its tokenizer. Bad input must raise
// engine::Error, nothing else.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cost/cost.h"
#include "engine/arch.h"
#include "engine/error.h"
#include "engine/gguf.h"
#include "engine/kv_cache.h"
#include "engine/model.h"
#include "engine/plan.h"
#include "engine/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto model = engine::Model::from_gguf(
        engine::GGUFFile::from_bytes("fuzz.gguf", std::vector<uint8_t>(data, data + size), engine::GGUFLoad::kHeaderOnly));
    const engine::HParams& hp = model->hparams();
    const int64_t n_ctx = std::min<int64_t>(engine::default_context(hp), 64);
    const engine::KVCache kv(hp, n_ctx, engine::DType::F16);
    for (const engine::StepShape step : {engine::StepShape{std::min<int64_t>(n_ctx, 8), 0, 1},
                                         engine::StepShape{1, n_ctx - 1, 1}}) {
      const engine::StepGraph graph = engine::build_step_graph(*model, kv, step);
      (void)cost::analyze(*graph.graph, cost::CostModel::kDefault);
      (void)engine::Plan::make(*graph.graph);
    }
    auto tokenizer = engine::Tokenizer::from_gguf(model->file());
    (void)tokenizer->decode(tokenizer->encode("Once upon a time, <s> \xe2\x96\x81 caf\xc3\xa9 \xff", true, true));
  } catch (const engine::Error&) {
  }
  return 0;
}
