// The per-phase views: each node execution's time joined with its step's static costs.
#include <algorithm>
#include <map>
#include <numeric>

#include "cost/profile.h"
#include "engine/error.h"

namespace cost {
namespace {

using engine::Op;

const engine::Tensor& storage_of(const engine::Tensor& t) { return t.view_src ? storage_of(*t.view_src) : t; }

// "blk.3.ffn_up.weight" -> "ffn_up"; "output.weight" -> "output".
std::string weight_role(const std::string& name) {
  std::string s = name;
  if (s.rfind("blk.", 0) == 0) s = s.substr(s.find('.', 4) + 1);
  const size_t dot = s.rfind('.');
  return dot == std::string::npos ? s : s.substr(0, dot);
}

bool has_layer_in_label(const engine::Tensor& n) {
  return engine::is_mat_mul(n.op) && n.src[0] && storage_of(*n.src[0]).has(engine::kWeight) && n.layer >= 0;
}

constexpr size_t kSlowest = 20;

PhaseProfile phase_profile(const ProfiledRun& run, bool prefill, const std::string& root) {
  PhaseProfile p;
  p.name = prefill ? "prefill" : "decode";
  const engine::Graph* shape = nullptr;
  std::map<std::string, size_t> op_index, type_index;
  std::map<int, LayerRow> layers;
  std::vector<NodeExec> execs;
  for (const ProfiledStep& step : run.steps) {
    if (step.record.prefill != prefill) continue;
    const auto& nodes = step.analysis->step.graph->nodes();
    if (!shape) {
      shape = step.analysis->step.graph.get();
      for (const engine::Tensor* n : nodes) p.nodes.push_back(NodeRow{n->name, std::string(engine::op_name(n->op)), n->module, n->layer});
    }
    if (nodes.size() != p.nodes.size())
      throw engine::Error("profile: the " + p.name + " steps' graphs differ in node count");
    ++p.steps;
    p.tokens += step.record.shape.n_tokens;
    p.wall_ms += step.record.compute_ms;
    p.step_ms += step.record.step_ms;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const engine::Tensor& n = *nodes[i];
      const NodePrediction& pred = step.analysis->prediction.nodes[i];
      const double ms = static_cast<double>(step.ns[i]) / 1e6;
      const double predicted_ms = pred.time_s * 1e3;
      p.op_ms_sum += ms;
      p.flops += pred.flops;
      p.bytes += pred.bytes;
      p.predicted_ms += predicted_ms;
      NodeRow& row = p.nodes[i];
      row.flops += pred.flops;
      row.bytes += pred.bytes;
      row.ms += ms;

      const std::string label = op_label(n);
      auto [op_at, new_label] = op_index.try_emplace(label, p.ops.size());
      if (new_label) p.ops.push_back(OpRow{label, row.op, has_layer_in_label(n) ? n.layer : -1});
      p.ops[op_at->second].ms += ms;
      p.ops[op_at->second].calls += 1;

      auto [type_at, new_type] = type_index.try_emplace(row.op, p.op_types.size());
      if (new_type) p.op_types.push_back(OpTypeRow{row.op});
      OpTypeRow& type = p.op_types[type_at->second];
      type.count += 1;
      type.total_ms += ms;
      type.predicted_ms += predicted_ms;

      LayerRow& layer = layers[n.layer];
      layer.layer = n.layer;
      layer.ms += ms;
      layer.flops += pred.flops;
      layer.bytes += pred.bytes;
      layer.predicted_ms += predicted_ms;

      execs.push_back(NodeExec{n.name, row.op, n.module, n.layer, ms});
    }
  }
  for (OpRow& r : p.ops) r.pct = p.op_ms_sum > 0 ? 100.0 * r.ms / p.op_ms_sum : 0;
  std::stable_sort(p.ops.begin(), p.ops.end(), [](const OpRow& a, const OpRow& b) { return a.ms > b.ms; });
  std::stable_sort(p.op_types.begin(), p.op_types.end(),
                   [](const OpTypeRow& a, const OpTypeRow& b) { return a.total_ms > b.total_ms; });
  for (const auto& [index, row] : layers) p.layers.push_back(row);
  const size_t n_slow = std::min(kSlowest, execs.size());
  std::partial_sort(execs.begin(), execs.begin() + static_cast<std::ptrdiff_t>(n_slow), execs.end(),
                    [](const NodeExec& a, const NodeExec& b) { return a.ms > b.ms; });
  p.slowest.assign(execs.begin(), execs.begin() + static_cast<std::ptrdiff_t>(n_slow));
  p.modules = module_rows(*shape, root);
  return p;
}

}  // namespace

std::string op_label(const engine::Tensor& n) {
  switch (n.op) {
    case Op::MUL_MAT: {
      if (!n.src[0] || !storage_of(*n.src[0]).has(engine::kWeight)) return "attention";  // K·Q and V·softmax
      if (n.module == "lm_head") return "matmul:lm_head";
      const std::string role = weight_role(storage_of(*n.src[0]).name);
      return "matmul:" + role + (n.layer >= 0 ? ":L" + std::to_string(n.layer) : "");
    }
    case Op::MUL_MAT_ID: return "matmul:" + weight_role(storage_of(*n.src[0]).name) + ":L" + std::to_string(n.layer);
    case Op::ARGSORT: return "route";
    case Op::GET_ROWS: return "gather";
    case Op::ADD: return "add";
    case Op::MUL: return "mul";
    case Op::SCALE: return "scale";
    case Op::RMS_NORM: return "rmsnorm";
    case Op::NORM: return "layernorm";
    case Op::ROPE: return "rope";
    case Op::SOFT_MAX: return "softmax";
    case Op::SILU: return "silu";
    case Op::GELU: return "gelu";
    case Op::CONT: return "cont";
    case Op::CPY: return n.src[1] && storage_of(*n.src[1]).has(engine::kKV) ? "kv_store" : "copy";
    default: return engine::op_info(n.op).is_view ? "view" : std::string(engine::op_name(n.op));
  }
}

double PhaseProfile::module_ms(const std::vector<size_t>& indices) const {
  return std::accumulate(indices.begin(), indices.end(), 0.0, [&](double s, size_t i) { return s + nodes[i].ms; });
}

Profile make_profile(const ProfiledRun& run) {
  const engine::Session& s = *run.session;
  const engine::Model& model = s.model();
  Profile p;
  p.source = run.source;
  p.arch = model.hparams().arch;
  p.n_layer = model.hparams().n_layer;
  p.weight_type = engine::dtype_name(model.dominant_dtype());
  for (const engine::GGUFTensorInfo& t : model.file().tensors()) p.params += t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3];
  p.size_bytes = model.weights_bytes();
  p.backend = s.backend().name();
  p.threads = run.threads;
  p.hardware = run.hardware;
  const std::string root = engine::module_root(p.arch);
  const auto has_phase = [&](bool prefill) {
    return std::any_of(run.steps.begin(), run.steps.end(), [&](const ProfiledStep& st) { return st.record.prefill == prefill; });
  };
  if (has_phase(true)) p.prefill = phase_profile(run, true, root);
  if (has_phase(false)) p.decode = phase_profile(run, false, root);
  p.memory = run.memory;
  return p;
}

}  // namespace cost
