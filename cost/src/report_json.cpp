#include <nlohmann/json.hpp>

#include "cost/report.h"

namespace cost {
namespace {

using nlohmann::json;

json counts_json(const Counts& c) {
  json j = json::object();
  for (const auto& [m, v] : c.items()) j[std::string(metric_name(m))] = v;
  return j;
}

json shape_json(const engine::Tensor& t) { return json(std::vector<int64_t>(t.ne, t.ne + t.n_dims())); }

}  // namespace

void write_json(std::ostream& out, const Analysis& a) {
  const engine::HParams& hp = a.hparams;
  const AnalysisOptions& o = a.options;
  json j;
  j["model"] = {{"source", a.source},         {"arch", hp.arch},        {"n_layer", hp.n_layer},
                {"n_embd", hp.n_embd},        {"n_head", hp.n_head},    {"n_head_kv", hp.n_head_kv},
                {"n_ff", hp.n_ff},            {"n_vocab", hp.n_vocab},  {"weight_type", engine::dtype_name(a.weight_type)},
                {"n_expert", hp.n_expert},    {"n_expert_used", hp.n_expert_used},
                {"params_total", a.params.total}, {"params_active", a.params.active}};
  j["step"] = {{"tokens", o.n_tokens}, {"past", o.n_past}, {"ctx", o.n_ctx}, {"attention_span", a.step.n_kv},
               {"cost_model", o.model == CostModel::kSeed ? "seed" : "default"}};
  j["totals"] = counts_json(a.cost.total);
  j["max_tempsize"] = a.cost.max_tempsize;
  for (const auto& [op, c] : a.cost.by_op) j["by_op"][op] = counts_json(c);
  for (const auto& [layer, c] : a.cost.by_layer) j["by_layer"].push_back({{"layer", layer}, {"counts", counts_json(c)}});
  j["memory"] = {{"weights", a.memory.weights},
                 {"kv_cache", a.memory.kv_cache},
                 {"compute_buffer", a.memory.compute_buffer},
                 {"scratch", a.memory.scratch},
                 {"reserve_tokens", a.memory.reserve_tokens},
                 {"total", a.memory.total()}};
  if (a.speed) {
    const Speed& s = *a.speed;
    j["speed"] = {{"hardware", s.hardware.name},          {"hardware_description", s.hardware.description},
                  {"hardware_calibrated", s.hardware.calibrated},
                  {"op_overhead_us", s.hardware.op_overhead_us}, {"step_s", s.step.total_s},
                  {"decode_tok_s", s.decode_tok_s},       {"prefill_tok_s", s.prefill_tok_s},
                  {"prefill_tokens", s.prefill_tokens}};
  }
  j["nodes"] = json::array();
  for (size_t i = 0; i < a.cost.nodes.size(); ++i) {
    const NodeCost& nc = a.cost.nodes[i];
    const engine::Tensor& n = *nc.node;
    json node = {{"index", i},
                 {"name", n.name},
                 {"op", engine::op_name(n.op)},
                 {"layer", n.layer},
                 {"dtype", engine::dtype_name(n.type)},
                 {"shape", shape_json(n)},
                 {"counts", counts_json(nc.counts)},
                 {"tempsize", nc.tempsize}};
    for (const engine::Tensor* s : n.src)
      if (s) node["inputs"].push_back({{"name", s->name}, {"dtype", engine::dtype_name(s->type)}, {"shape", shape_json(*s)}});
    if (a.speed) {
      const NodePrediction& p = a.speed->step.nodes[i];
      node["predicted"] = {{"time_s", p.time_s}, {"memory_bound", p.memory_bound}, {"flops", p.flops}, {"bytes", p.bytes}};
    }
    j["nodes"].push_back(std::move(node));
  }
  out << j.dump(1) << "\n";
}

}  // namespace cost
