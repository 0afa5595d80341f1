#include "cost/chrome_trace.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace cost {
namespace {

using nlohmann::json;

constexpr int kPid = 1;
constexpr int kPrefillTid = 1;
constexpr int kDecodeTid = 2;

json shape_json(const engine::Tensor& t) { return json(std::vector<int64_t>(t.ne, t.ne + t.n_dims())); }

json metadata(const char* what, int tid, const std::string& name) {
  return {{"name", what}, {"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"args", {{"name", name}}}};
}

}  // namespace

json chrome_trace(const ProfiledRun& run) {
  json events = json::array();
  events.push_back(metadata("process_name", kPrefillTid, "engine-run " + run.source));
  events.push_back(metadata("thread_name", kPrefillTid, "prefill"));
  events.push_back(metadata("thread_name", kDecodeTid, "decode"));
  int64_t phase_step[2] = {0, 0};
  for (const ProfiledStep& step : run.steps) {
    const engine::StepRecord& rec = step.record;
    const int tid = rec.prefill ? kPrefillTid : kDecodeTid;
    const double start_us = rec.start_ms * 1e3;
    uint64_t total_ns = 0;
    for (uint64_t ns : step.ns) total_ns += ns;
    const int64_t index = phase_step[rec.prefill ? 0 : 1]++;
    events.push_back({{"name", std::string(rec.prefill ? "prefill" : "decode") + " step " + std::to_string(index)},
                      {"cat", "step"},
                      {"ph", "X"},
                      {"ts", start_us},
                      {"dur", std::max(rec.compute_ms * 1e3, static_cast<double>(total_ns) / 1e3)},
                      {"pid", kPid},
                      {"tid", tid},
                      {"args", {{"n_tokens", rec.shape.n_tokens}, {"n_past", rec.shape.n_past}, {"wall_ms", rec.compute_ms}}}});
    const auto& nodes = step.analysis->step.graph->nodes();
    uint64_t at_ns = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const engine::Tensor& n = *nodes[i];
      const NodePrediction& cost = step.analysis->prediction.nodes[i];
      json shapes = json::array({shape_json(n)});
      for (const engine::Tensor* s : n.src)
        if (s) shapes.push_back(shape_json(*s));
      const std::string op(engine::op_name(n.op));
      events.push_back({{"name", n.name},
                        {"cat", op},
                        {"ph", "X"},
                        {"ts", start_us + static_cast<double>(at_ns) / 1e3},
                        {"dur", static_cast<double>(step.ns[i]) / 1e3},
                        {"pid", kPid},
                        {"tid", tid},
                        {"args",
                         {{"op", op},
                          {"name", n.name},
                          {"layer", n.layer},
                          {"shapes", shapes},
                          {"dtype", engine::dtype_name(n.type)},
                          {"flops", cost.flops},
                          {"bytes", cost.bytes},
                          {"module", n.module}}}});
      at_ns += step.ns[i];
    }
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace cost
