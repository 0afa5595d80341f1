// The profile document shared with the HTML report (docs/profiling.md lists its fields).
#include <nlohmann/json.hpp>

#include "cost/profile.h"

namespace cost {
namespace {

using nlohmann::json;

json phase_json(const PhaseProfile& p) {
  json j = {{"steps", p.steps},         {"tokens", p.tokens}, {"wall_ms", p.wall_ms}, {"step_ms", p.step_ms},
            {"op_ms_sum", p.op_ms_sum}, {"flops", p.flops},   {"bytes", p.bytes},     {"tflops", p.tflops()},
            {"predicted_ms", p.predicted_ms}};
  j["ops"] = json::array();
  for (const OpRow& r : p.ops)
    j["ops"].push_back({{"label", r.label}, {"op", r.op}, {"layer", r.layer}, {"ms", r.ms}, {"pct", r.pct}, {"calls", r.calls}});
  j["modules"] = json::array();
  for (const ModuleRow& r : p.modules) {
    const json self = r.self.empty() ? json(nullptr) : json(p.module_ms(r.self));
    j["modules"].push_back({{"path", r.path},
                            {"name", r.name},
                            {"art", r.art},
                            {"self_ms", self},
                            {"total_ms", p.module_ms(r.total)},
                            {"calls", r.total.empty() ? 0 : p.steps}});
  }
  j["layers"] = json::array();
  for (const LayerRow& r : p.layers)
    j["layers"].push_back({{"layer", r.layer},
                           {"ms", r.ms},
                           {"flops", r.flops},
                           {"bytes", r.bytes},
                           {"gflops_s", r.gflops_s()},
                           {"gb_s", r.gb_s()},
                           {"roofline_pct", r.roofline_pct()},
                           {"predicted_ms", r.predicted_ms},
                           {"ratio", r.ratio()}});
  j["op_types"] = json::array();
  for (const OpTypeRow& r : p.op_types)
    j["op_types"].push_back({{"op", r.op},
                             {"count", r.count},
                             {"total_ms", r.total_ms},
                             {"mean_ms", r.mean_ms()},
                             {"predicted_ms", r.predicted_ms},
                             {"ratio", r.ratio()}});
  j["slowest"] = json::array();
  for (const NodeExec& r : p.slowest)
    j["slowest"].push_back({{"name", r.name}, {"op", r.op}, {"layer", r.layer}, {"module", r.module}, {"ms", r.ms}});
  j["nodes"] = json::array();
  for (const NodeRow& r : p.nodes)
    j["nodes"].push_back({{"name", r.name},
                          {"op", r.op},
                          {"layer", r.layer},
                          {"module", r.module},
                          {"flops", r.flops},
                          {"bytes", r.bytes},
                          {"ms", r.ms},
                          {"intensity", r.intensity()},
                          {"achieved_gflops_s", r.achieved_gflops_s()}});
  return j;
}

}  // namespace

json profile_json(const Profile& p) {
  const HardwareProfile& hw = p.hardware;
  json j;
  j["model"] = {{"source", p.source},         {"arch", p.arch},     {"n_layer", p.n_layer},
                {"weight_type", p.weight_type}, {"params", p.params}, {"size_bytes", p.size_bytes}};
  j["backend"] = p.backend;
  j["threads"] = p.threads;
  j["hardware"] = {{"name", hw.name},
                   {"description", hw.description},
                   {"calibrated", hw.calibrated},
                   {"op_overhead_us", hw.op_overhead_us},
                   {"mem_bw_gbs", hw.mem_bw_gbs},
                   {"peak_tflops",
                    {{"f32", hw.peak_tflops_f32}, {"f16", hw.peak_tflops_f16}, {"bf16", hw.peak_tflops_bf16},
                     {"int8", hw.peak_tflops_int8}}}};
  j["phases"] = json::object();
  if (p.prefill) j["phases"]["prefill"] = phase_json(*p.prefill);
  if (p.decode) j["phases"]["decode"] = phase_json(*p.decode);
  j["memory"] = {{"weights", p.memory.weights},
                 {"kv_cache", p.memory.kv_cache},
                 {"compute_buffer", p.memory.compute_buffer},
                 {"peak_rss", p.memory.peak_rss}};
  return j;
}

}  // namespace cost
