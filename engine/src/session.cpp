#include "engine/session.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "engine/error.h"
#include "engine/plan.h"

namespace engine {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void check_params(const SessionParams& params) {
  if (params.n_ubatch <= 0) throw Error("batch size must be positive, got " + std::to_string(params.n_ubatch));
  if (params.n_ctx < 0) throw Error("context size must be positive, got " + std::to_string(params.n_ctx));
  check_backend(params.backend, params.device);
}

std::string gib(size_t bytes) { return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1 << 30)); }

// Refuses a session whose weights, KV cache and compute buffer cannot fit the memory still
// free on its device (the CPU: the host's), before any of it is allocated.
void check_fits(const MemoryUse& need, int64_t n_ctx, const DeviceInfo& device) {
  if (device.free_bytes == 0 || need.total() <= device.free_bytes) return;
  throw Error(fmt::format(
      "a context of {} positions needs {} bytes ({}: weights {} + KV cache {} + compute buffer {} + scratch {}), "
      "but {} bytes ({}) are free on {} device {} ({}); use a smaller context (-c)",
      n_ctx, need.total(), gib(need.total()), need.weights, need.kv_cache, need.compute_buffer, need.scratch,
      device.free_bytes, gib(device.free_bytes), device.backend, device.index, device.name));
}

// The largest step a session runs (engine::largest_step) and its plan: what it reserves its
// compute buffer and scratch for.
struct Reserve {
  StepGraph step;
  Plan plan;
};

Reserve reserve_for(const Model& model, const KVCache& kv, const SessionParams& params) {
  StepGraph step = build_step_graph(model, kv, largest_step(kv.n_ctx(), params.n_ubatch));
  Plan plan = Plan::make(*step.graph);
  return Reserve{std::move(step), std::move(plan)};
}

// The largest step's scratch, or a one-token step's at the full context where that takes more
// (a backend may hold every query head's scores for one token where a short prompt batch holds
// fewer rows of them).
size_t scratch_of(const Model& model, const KVCache& kv, const Reserve& reserve, const SessionParams& params) {
  const StepGraph last_token = build_step_graph(model, kv, StepShape{1, kv.n_ctx() - 1, 1});
  const Plan last_token_plan = Plan::make(*last_token.graph);
  return std::max(backend_scratch_bytes(params.backend, *reserve.step.graph, reserve.plan, params.n_threads),
                  backend_scratch_bytes(params.backend, *last_token.graph, last_token_plan, params.n_threads));
}

MemoryUse memory_of(const Model& model, const KVCache& kv, const Reserve& reserve, const SessionParams& params) {
  return MemoryUse{model.weight_storage_bytes(), kv.bytes(), reserve.plan.buffer_size, scratch_of(model, kv, reserve, params)};
}

}  // namespace

int64_t session_context(const Model& model, const SessionParams& params) {
  return params.n_ctx > 0 ? params.n_ctx : default_context(model.hparams());
}

MemoryUse session_memory(const Model& model, const SessionParams& params) {
  check_params(params);
  const KVCache kv(model.hparams(), session_context(model, params), params.kv_type);
  return memory_of(model, kv, reserve_for(model, kv, params), params);
}

Session::~Session() = default;

std::unique_ptr<Session> Session::create(const std::string& model_path, const SessionParams& params) {
  const auto t0 = Clock::now();
  check_params(params);
  return create(Model::load(model_path), params, t0);
}

std::unique_ptr<Session> Session::create(std::shared_ptr<const Model> model, const SessionParams& params) {
  return create(std::move(model), params, Clock::now());
}

std::unique_ptr<Session> Session::create(std::shared_ptr<const Model> model, const SessionParams& params,
                                         Clock::time_point t0) {
  check_params(params);
  auto s = std::unique_ptr<Session>(new Session());
  s->created_ = t0;
  s->params_ = params;
  s->model_ = std::move(model);
  const HParams& hp = s->model_->hparams();
  const int64_t n_ctx = session_context(*s->model_, params);
  s->kv_ = std::make_unique<KVCache>(hp, n_ctx, params.kv_type);
  // The largest step's graph gives the memory check its figures (session_memory's), then the
  // backend reserves its buffers with it up front.
  Reserve reserve = reserve_for(*s->model_, *s->kv_, params);
  check_fits(memory_of(*s->model_, *s->kv_, reserve, params), n_ctx, device_info(params.backend, params.device));
  s->tokenizer_ = Tokenizer::from_gguf(s->model_->file());
  s->backend_ = make_backend(params.backend, BackendParams{params.device, params.n_threads});
  s->backend_->load_weights(*s->model_);
  s->backend_->allocate_kv(*s->kv_);
  s->backend_->allocate(*reserve.step.graph, reserve.plan);
  s->timings_.load_ms = ms_since(t0);
  spdlog::info("{}: {} with {} layers, {} embedding, {} heads ({} KV), vocab {}; context {}, KV cache {}, {} backend",
               s->model_->file().path(), hp.arch, hp.n_layer, hp.n_embd, hp.n_head, hp.n_head_kv, hp.n_vocab, n_ctx,
               dtype_name(params.kv_type), s->backend_->name());
  return s;
}

const StepGraph& Session::step_graph(const StepShape& shape) {
  const bool reusable = step_ && step_shape_.n_tokens == shape.n_tokens && step_shape_.n_outputs == shape.n_outputs &&
                        step_->n_kv == attention_span(shape.n_past, shape.n_tokens, step_->n_ctx);
  step_shape_ = shape;
  if (reusable) {
    rebase_step(*step_, shape.n_past);
    backend_->rebind(*step_->graph, *step_plan_);
    return *step_;
  }
  step_ = build_step_graph(*model_, *kv_, shape);
  step_plan_ = Plan::make(*step_->graph);
  backend_->allocate(*step_->graph, *step_plan_);
  return *step_;
}

void Session::run_step(std::span<const int32_t> tokens, bool prefill) {
  const auto t0 = Clock::now();
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int32_t n_vocab = static_cast<int32_t>(model_->hparams().n_vocab);
  for (int32_t t : tokens)
    if (t < 0 || t >= n_vocab)
      throw Error("token id " + std::to_string(t) + " is outside the vocabulary of " + std::to_string(n_vocab));
  const StepShape shape{n, n_past_, 1};
  const StepGraph& g = step_graph(shape);
  set_step_inputs(*backend_, g, tokens, n_past_);
  if (!params_.profile) {
    backend_->compute(*g.graph, nullptr);
  } else {
    profiler_.make_room(g.graph->nodes().size());
    StepRecord& rec = steps_.emplace_back(StepRecord{shape, prefill, profiler_.records().size()});
    const auto c0 = Clock::now();
    rec.start_ms = std::chrono::duration<double, std::milli>(c0 - created_).count();
    backend_->compute(*g.graph, &profiler_);
    rec.compute_ms = ms_since(c0);
    rec.n_records = profiler_.records().size() - rec.first_record;
  }
  logits_.resize(static_cast<size_t>(n_vocab));
  backend_->get_output(*g.logits, logits_.data(), logits_.size() * sizeof(float));
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

double Session::warm_up() {
  if (n_past_ != 0 || timings_.prefill_tokens != 0 || timings_.decode_tokens != 0)
    throw Error("warm_up runs before the session's first prefill or decode");
  const auto t0 = Clock::now();
  // Columns enough for every backend's many-column kernels: the CPU's AMX tiles from 20, CUDA's tiles from 16.
  constexpr int64_t kWarmUpTokens = 32;
  const int32_t token = std::max(tokenizer_->bos(), 0);  // BOS, or token 0 where the vocab has none
  const std::vector<int32_t> prompt(static_cast<size_t>(std::min(kWarmUpTokens, n_ctx() - 1)), token);
  if (!prompt.empty()) prefill(prompt);
  decode(token);
  reset();
  clear_profile();
  const double load_ms = timings_.load_ms;
  timings_ = Timings{};
  timings_.load_ms = load_ms;
  timings_.warm_up_ms = ms_since(t0);
  return timings_.warm_up_ms;
}

MemoryUse Session::memory() const {
  return MemoryUse{backend_->weights_bytes(), backend_->kv_cache_bytes(), backend_->compute_buffer_bytes(),
                   backend_->scratch_bytes()};
}

}  // namespace engine
