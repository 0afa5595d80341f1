#pragma once
// A Session ties a model to a backend, a KV cache and a tokenizer: feed tokens, read
// logits, keep timings. engine-run is a thin shell over it; so is any linking program.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/arch.h"
#include "engine/backend.h"
#include "engine/kv_cache.h"
#include "engine/model.h"
#include "engine/plan.h"
#include "engine/tokenizer.h"

namespace engine {

struct SessionParams {
  int64_t n_ctx = 0;       // context positions; 0: the model's training context, at most 4096
  int n_threads = 0;       // 0: all hardware threads
  DType kv_type = DType::F16;
  std::string backend = "cpu";  // a name of available_backends() (backend.h)
  int device = 0;               // which of the backend's devices
  int64_t n_ubatch = 512;  // prompt tokens per forward step
  bool profile = false;    // record per-op timings
};

struct Timings {
  double load_ms = 0;
  double warm_up_ms = 0;  // Session::warm_up's wall clock; 0 when it did not run
  int64_t prefill_tokens = 0;
  double prefill_ms = 0;
  int64_t decode_tokens = 0;
  double decode_ms = 0;
};

// One forward step as run, kept when params.profile: the shape to rebuild its graph from,
// where its per-op records lie in profiler().records(), and its wall clock.
struct StepRecord {
  StepShape shape;
  bool prefill = false;     // part of a prefill() call, else of decode()
  size_t first_record = 0;  // index of its first OpTiming in profiler().records()
  size_t n_records = 0;
  double start_ms = 0;      // when its compute began, since the session was created
  double compute_ms = 0;    // wall clock of the backend's compute call
  double step_ms = 0;       // the whole step: graph build, plan, inputs, compute, logits
};

struct MemoryUse {
  size_t weights = 0;         // bytes of the backend's copy of the weights
  size_t kv_cache = 0;        // bytes of K and V for n_ctx positions
  size_t compute_buffer = 0;  // bytes of the backend's compute buffer
  size_t scratch = 0;         // bytes of the backend's work memory outside the plan
  size_t total() const { return weights + kv_cache + compute_buffer + scratch; }
};

// The context a session of `params` on `model` uses (params.n_ctx, or the model's default).
int64_t session_context(const Model& model, const SessionParams& params);
// What such a session allocates, without allocating it: the weights, the KV cache, the plan
// of its largest step and the backend's scratch for that step. The cost model reports these figures; Session::create checks
// them against the free memory before allocating.
MemoryUse session_memory(const Model& model, const SessionParams& params);

// Threads: a Model (its file, hyper-parameters and tokenizer data) is read-only once loaded and
// may be shared by sessions on any threads; a Session (its backend, KV cache and buffers) is
// used by one thread at a time. Sessions on different threads never share state.
class Session {
 public:
  // Throws Error naming the problem: a bad parameter, a bad model file, or a session that
  // needs more memory than the system has free (with both figures).
  static std::unique_ptr<Session> create(const std::string& model_path, const SessionParams& params);
  // The same over a model already loaded (Model::load_builtin, GGUFFile::from_bytes); sessions
  // may share one model, each backend holding its own copy of the weights.
  static std::unique_ptr<Session> create(std::shared_ptr<const Model> model, const SessionParams& params);
  ~Session();

  const Model& model() const { return *model_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const Backend& backend() const { return *backend_; }
  int64_t n_ctx() const { return kv_->n_ctx(); }
  int64_t n_past() const { return n_past_; }
  int64_t n_vocab() const { return model_->hparams().n_vocab; }

  // Runs `tokens` after the cached ones (in steps of n_ubatch) and returns the logits of the last one (the
  // session's memory: valid until its next step or its end). Throws Error when the context cannot hold them.
  std::span<const float> prefill(std::span<const int32_t> tokens);
  // Runs one token; returns its logits.
  std::span<const float> decode(int32_t token);
  // Forgets the cached tokens.
  void reset() { n_past_ = 0; }
  // Runs a short prompt and one decode step, then forgets them, timings and profile included: the
  // backend's one-time costs (kernels loaded at their first launch, buffers touched the first time)
  // are paid here instead of in the first prompt's figures. Only before the first prefill or
  // decode (else throws Error). Returns its wall clock in ms, also timings().warm_up_ms.
  double warm_up();

  const SessionParams& params() const { return params_; }
  const Timings& timings() const { return timings_; }
  MemoryUse memory() const;
  // Per-op timing records of every step since the last clear (when params.profile).
  Profiler& profiler() { return profiler_; }
  const Profiler& profiler() const { return profiler_; }
  // The steps run since the last clear_profile() (when params.profile).
  const std::vector<StepRecord>& steps() const { return steps_; }
  // Forgets the per-op records and the steps together (their indices refer to each other).
  void clear_profile();

 private:
  Session() = default;
  static std::unique_ptr<Session> create(std::shared_ptr<const Model> model, const SessionParams& params,
                                         std::chrono::steady_clock::time_point t0);
  void run_step(std::span<const int32_t> tokens, bool prefill);
  // The graph of a step of `shape`, allocated on the backend: the previous step's, rebased
  // (rebase_step), where it has the same tokens, outputs and attention span, as most decode
  // steps do (a span serves 32 positions); else a new one, planned.
  const StepGraph& step_graph(const StepShape& shape);

  SessionParams params_;
  std::shared_ptr<const Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<KVCache> kv_;
  std::vector<float> logits_;
  std::optional<StepGraph> step_;  // the last step's graph, its shape and plan (step_graph)
  StepShape step_shape_;
  std::optional<Plan> step_plan_;
  int64_t n_past_ = 0;
  Timings timings_;
  Profiler profiler_;
  std::vector<StepRecord> steps_;
  std::chrono::steady_clock::time_point created_;
};

}  // namespace engine
