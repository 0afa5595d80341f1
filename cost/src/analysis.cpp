#include "cost/analysis.h"

#include <algorithm>
#include <string>
#include <thread>

#include "engine/error.h"
#include "engine/session.h"

namespace cost {
namespace {

using engine::Error;

void check(const AnalysisOptions& o, int64_t n_ctx) {
  if (o.n_tokens < 1) throw Error("--tokens must be at least 1, got " + std::to_string(o.n_tokens));
  if (o.n_past < 0) throw Error("--past must not be negative, got " + std::to_string(o.n_past));
  if (o.n_ubatch < 1) throw Error("--ubatch must be at least 1, got " + std::to_string(o.n_ubatch));
  if (n_ctx < o.n_past + o.n_tokens)
    throw Error("context of " + std::to_string(n_ctx) + " is smaller than --past " + std::to_string(o.n_past) +
                " + --tokens " + std::to_string(o.n_tokens));
}

Prediction predict_step(const engine::Model& model, const engine::KVCache& kv, const engine::StepShape& shape,
                        const HardwareProfile& hw) {
  const engine::StepGraph g = engine::build_step_graph(model, kv, shape);
  return predict(analyze(*g.graph, CostModel::kDefault), hw);
}

}  // namespace

Analysis analyze_model(const engine::Model& model, std::string source, AnalysisOptions options) {
  const engine::HParams& hp = model.hparams();
  if (options.n_ctx == 0) options.n_ctx = std::max(engine::default_context(hp), options.n_past + options.n_tokens);
  check(options, options.n_ctx);
  Analysis a;
  a.source = std::move(source);
  a.hparams = hp;
  a.weight_type = model.dominant_dtype();
  a.params = model.parameters();
  a.options = options;
  engine::KVCache kv(hp, options.n_ctx, options.kv_type);
  a.step = engine::build_step_graph(model, kv, engine::StepShape{options.n_tokens, options.n_past, 1});
  a.cost = analyze(*a.step.graph, options.model);

  engine::SessionParams session;  // the session engine-run would open for these options
  session.n_ctx = options.n_ctx;
  session.kv_type = options.kv_type;
  session.n_ubatch = options.n_ubatch;
  session.n_threads = options.threads;
  session.backend = options.backend;
  const engine::MemoryUse need = engine::session_memory(model, session);
  a.memory = MemoryEstimate{need.weights, need.kv_cache, need.compute_buffer, need.scratch,
                            engine::largest_step(options.n_ctx, options.n_ubatch).n_tokens};

  if (!options.hardware.empty()) {
    Speed s;
    s.hardware = hardware_profile(options.hardware, std::max(1u, options.threads > 0 ? static_cast<unsigned>(options.threads)
                                                                                   : std::thread::hardware_concurrency()),
                                  OpProbe{options.backend, 0});
    s.step = options.model == CostModel::kDefault ? predict(a.cost, s.hardware)
                                                  : predict(analyze(*a.step.graph, CostModel::kDefault), s.hardware);
    s.decode_tok_s = tokens_per_second(predict_step(model, kv, {1, options.n_past, 1}, s.hardware), 1);
    s.prefill_tokens = options.n_tokens > 1 ? options.n_tokens : std::min(options.n_ubatch, options.n_ctx);
    s.prefill_tok_s =
        tokens_per_second(predict_step(model, kv, {s.prefill_tokens, 0, 1}, s.hardware), s.prefill_tokens);
    a.speed = std::move(s);
  }
  return a;
}

}  // namespace cost
