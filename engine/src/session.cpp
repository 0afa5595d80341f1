#include "engine/session.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <spdlog/spdlog.h>

#include "engine/error.h"

namespace engine {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

Session::~Session() = default;

std::unique_ptr<Session> Session::create(const std::string& model_path, const SessionParams& params) {
  const auto t0 = Clock::now();
  auto s = std::unique_ptr<Session>(new Session());
  s->created_ = t0;
  s->params_ = params;
  if (params.n_ubatch <= 0) throw Error("batch size must be positive");
  if (params.backend != "cpu") throw Error("unknown backend '" + params.backend + "' (available: cpu)");
  s->model_ = Model::load(model_path);
  const HParams& hp = s->model_->hparams();
  const int64_t n_ctx = params.n_ctx > 0 ? params.n_ctx : default_context(hp);
  if (params.n_ctx < 0) throw Error("context size must be positive, got " + std::to_string(params.n_ctx));
  s->tokenizer_ = Tokenizer::from_gguf(s->model_->file());
  s->backend_ = make_cpu_backend(params.n_threads);
  s->kv_ = std::make_unique<KVCache>(hp, n_ctx, params.kv_type, true);
  // Reserve the compute buffer for the largest step up front, as the cost model reports it.
  StepGraph g = build_step_graph(*s->model_, *s->kv_, largest_step(n_ctx, params.n_ubatch));
  s->backend_->allocate(*g.graph, Plan::make(*g.graph));
  s->timings_.load_ms = ms_since(t0);
  spdlog::info("{}: {} with {} layers, {} embedding, {} heads ({} KV), vocab {}; context {}, KV cache {}, {} backend",
               model_path, hp.arch, hp.n_layer, hp.n_embd, hp.n_head, hp.n_head_kv, hp.n_vocab, n_ctx,
               dtype_name(params.kv_type), s->backend_->name());
  return s;
}

void Session::run_step(std::span<const int32_t> tokens, bool prefill) {
  const auto t0 = Clock::now();
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int32_t n_vocab = static_cast<int32_t>(model_->hparams().n_vocab);
  for (int32_t t : tokens)
    if (t < 0 || t >= n_vocab)
      throw Error("token id " + std::to_string(t) + " is outside the vocabulary of " + std::to_string(n_vocab));
  const StepShape shape{n, n_past_, 1};
  StepGraph g = build_step_graph(*model_, *kv_, shape);
  backend_->allocate(*g.graph, Plan::make(*g.graph));
  fill_step_inputs(g, tokens, n_past_);
  if (!params_.profile) {
    backend_->compute(*g.graph, nullptr);
  } else {
    StepRecord& rec = steps_.emplace_back(StepRecord{shape, prefill, profiler_.records().size()});
    const auto c0 = Clock::now();
    rec.start_ms = std::chrono::duration<double, std::milli>(c0 - created_).count();
    backend_->compute(*g.graph, &profiler_);
    rec.compute_ms = ms_since(c0);
    rec.n_records = profiler_.records().size() - rec.first_record;
  }
  const float* out = static_cast<const float*>(g.logits->data);
  logits_.assign(out, out + n_vocab);
  n_past_ += n;
  if (params_.profile) steps_.back().step_ms = ms_since(t0);
}

void Session::clear_profile() {
  profiler_.clear();
  steps_.clear();
}

std::span<const float> Session::prefill(std::span<const int32_t> tokens) {
  if (tokens.empty()) throw Error("prefill needs at least one token");
  if (n_past_ + static_cast<int64_t>(tokens.size()) > n_ctx())
    throw Error("prompt of " + std::to_string(tokens.size()) + " tokens does not fit the context of " +
                std::to_string(n_ctx()) + " (" + std::to_string(n_past_) + " already used)");
  const auto t0 = Clock::now();
  for (size_t i = 0; i < tokens.size(); i += static_cast<size_t>(params_.n_ubatch))
    run_step(tokens.subspan(i, std::min(tokens.size() - i, static_cast<size_t>(params_.n_ubatch))), true);
  timings_.prefill_ms += ms_since(t0);
  timings_.prefill_tokens += static_cast<int64_t>(tokens.size());
  return logits_;
}

std::span<const float> Session::decode(int32_t token) {
  if (n_past_ + 1 > n_ctx()) throw Error("context of " + std::to_string(n_ctx()) + " tokens is full");
  const auto t0 = Clock::now();
  run_step(std::span<const int32_t>(&token, 1), false);
  timings_.decode_ms += ms_since(t0);
  timings_.decode_tokens += 1;
  return logits_;
}

MemoryUse Session::memory() const {
  return MemoryUse{model_->weights_bytes(), kv_->bytes(), backend_->compute_buffer_bytes()};
}

}  // namespace engine
