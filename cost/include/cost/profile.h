#pragma once
// Measured profile of a session's run: the backend's per-op times joined with the cost
// model's counts for the same nodes, summarized per phase (prefill, decode) as four
// views: per-op table, module tree, efficiency, predicted vs measured (docs/profiling.md).
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cost/cost.h"
#include "cost/hardware.h"
#include "cost/module_tree.h"
#include "cost/roofline.h"
#include "engine/arch.h"
#include "engine/session.h"

namespace cost {

// One graph shape's static analysis; steps of the same shape share it.
struct StepAnalysis {
  engine::StepGraph step;
  GraphCost cost;         // default cost model
  Prediction prediction;  // on the run's hardware profile
};

struct ProfiledStep {
  engine::StepRecord record;
  std::shared_ptr<const StepAnalysis> analysis;
  std::vector<uint64_t> ns;  // per graph node, as the backend timed it
};

struct ProcessMemory {
  size_t weights = 0, kv_cache = 0, compute_buffer = 0;
  size_t peak_rss = 0;  // VmHWM; 0 where /proc/self/status is unreadable
};

// The session's recorded steps, each with its graph rebuilt from its shape.
struct ProfiledRun {
  std::string source;  // model path
  const engine::Session* session = nullptr;
  HardwareProfile hardware;
  int threads = 0;  // resolved worker threads
  std::vector<ProfiledStep> steps;
  ProcessMemory memory;  // taken before the join (the cpu-local probe would raise the peak RSS)
};

// Joins session.steps() with session.profiler().records() and predicts each step on the
// hardware profile `hardware_name` (see hardware_profile(); "cpu-local" measures this machine
// with the session's threads). Throws engine::Error when the records do not match the
// rebuilt graphs (the profiler was cleared without clear_profile()).
ProfiledRun join_profile(const engine::Session& session, std::string source, std::string_view hardware_name);

// The label a node gets in the per-op table: "matmul:ffn_up:L0", "matmul:lm_head",
// "attention", "rmsnorm", "rope", "softmax", "kv_store", ...
std::string op_label(const engine::Tensor& node);

struct OpRow {
  std::string label;
  std::string op;  // Op name, "MUL_MAT"
  int layer = -1;  // -1 for labels that span layers
  double ms = 0, pct = 0;
  int64_t calls = 0;
};
struct LayerRow {
  int layer = -1;  // -1: nodes outside transformer blocks
  double ms = 0, flops = 0, bytes = 0, predicted_ms = 0;
  double gflops_s() const { return ms > 0 ? flops / ms / 1e6 : 0; }
  double gb_s() const { return ms > 0 ? bytes / ms / 1e6 : 0; }
  double roofline_pct() const { return ms > 0 ? 100.0 * predicted_ms / ms : 0; }
  double ratio() const { return predicted_ms > 0 ? ms / predicted_ms : 0; }
};
struct OpTypeRow {
  std::string op;
  int64_t count = 0;
  double total_ms = 0, predicted_ms = 0;
  double mean_ms() const { return count ? total_ms / static_cast<double>(count) : 0; }
  double ratio() const { return predicted_ms > 0 ? total_ms / predicted_ms : 0; }
};
struct NodeExec {
  std::string name, op, module;
  int layer = -1;
  double ms = 0;
};
struct NodeRow {
  std::string name, op, module;
  int layer = -1;
  double flops = 0, bytes = 0, ms = 0;  // summed over the phase's steps
  double intensity() const { return bytes > 0 ? flops / bytes : 0; }
  double achieved_gflops_s() const { return ms > 0 ? flops / ms / 1e6 : 0; }
};

struct PhaseProfile {
  std::string name;  // "prefill" | "decode"
  int64_t steps = 0, tokens = 0;
  double wall_ms = 0;      // backend compute wall clock, summed over steps
  double step_ms = 0;      // whole steps: wall_ms plus graph build, plan, inputs, logits
  double op_ms_sum = 0;    // per-op times summed
  double flops = 0, bytes = 0, predicted_ms = 0;
  double tflops() const { return wall_ms > 0 ? flops / wall_ms / 1e9 : 0; }
  std::vector<OpRow> ops;           // by ms, descending
  std::vector<ModuleRow> modules;   // display order; indices into nodes
  std::vector<LayerRow> layers;     // by layer, -1 first
  std::vector<OpTypeRow> op_types;  // by total_ms, descending
  std::vector<NodeExec> slowest;    // the 20 slowest node executions
  std::vector<NodeRow> nodes;       // graph order
  // Module time of the nodes at `indices` (ModuleRow::self or ::total).
  double module_ms(const std::vector<size_t>& indices) const;
};

struct Profile {
  std::string source, arch, weight_type, backend;
  int64_t n_layer = 0, params = 0;
  size_t size_bytes = 0;
  int threads = 0;
  HardwareProfile hardware;
  std::optional<PhaseProfile> prefill, decode;
  ProcessMemory memory;
};

// The views for both phases (a phase with no steps is absent).
Profile make_profile(const ProfiledRun& run);

// The document of docs/profiling.md ("model", "hardware", "phases", "memory").
nlohmann::json profile_json(const Profile& profile);
void write_profile_text(std::ostream& out, const Profile& profile);
// One line per table row: phase,view,label,op,layer,calls,ms,pct,flops,bytes,predicted_ms,ratio.
void write_profile_csv(std::ostream& out, const Profile& profile);
// "Peak Memory: weights … | KV cache … | compute buffer … | peak RSS …" (MiB).
std::string memory_line(const ProcessMemory& memory);

}  // namespace cost
