#pragma once
// A model's whole static analysis: the step graph's costs, the memory it needs, and the
// roofline speed on a hardware profile. engine-cost prints it; programs can use it too.
#include <cstdint>
#include <optional>
#include <string>

#include "cost/cost.h"
#include "cost/hardware.h"
#include "cost/roofline.h"
#include "engine/arch.h"

namespace cost {

struct AnalysisOptions {
  int64_t n_tokens = 1;   // new tokens in the analyzed step
  int64_t n_past = 0;     // cached tokens before it
  int64_t n_ctx = 0;      // KV cache positions; 0: the model's default context (as engine-run)
  int64_t n_ubatch = 512; // prompt tokens per step (as engine-run -b)
  engine::DType kv_type = engine::DType::F16;
  CostModel model = CostModel::kDefault;
  std::string hardware;   // profile name; empty: no prediction
  int threads = 0;        // as engine-run -t (0: all hardware threads): the scratch, the cpu-local probe
  std::string backend = "cpu";  // whose memory figures (engine-run --backend): its scratch differs
};

// Bytes a session needs, from the same Plan the runtime allocates.
struct MemoryEstimate {
  size_t weights = 0;         // tensor data in the file
  size_t kv_cache = 0;        // K and V for n_ctx positions
  size_t compute_buffer = 0;  // plan of the largest step (engine::largest_step)
  size_t scratch = 0;         // the backend's work memory outside the plan for that step (Backend::scratch_bytes)
  int64_t reserve_tokens = 0; // tokens of that step
  size_t total() const { return weights + kv_cache + compute_buffer + scratch; }
};

struct Speed {
  HardwareProfile hardware;
  Prediction step;               // the analyzed step, node by node (default cost model)
  double decode_tok_s = 0;       // one token after n_past cached ones
  double prefill_tok_s = 0;      // a prompt of prefill_tokens
  int64_t prefill_tokens = 0;
};

struct Analysis {
  std::string source;  // the file path, or "preset NAME"
  engine::HParams hparams;
  engine::DType weight_type = engine::DType::F32;  // the dtype holding most weight bytes
  engine::ParameterCount params;
  AnalysisOptions options;                        // n_ctx resolved
  engine::StepGraph step;
  GraphCost cost;
  MemoryEstimate memory;
  std::optional<Speed> speed;
};

// Checks the options (Error naming the bad one), builds and analyzes the step graph.
Analysis analyze_model(const engine::Model& model, std::string source, AnalysisOptions options);

}  // namespace cost
