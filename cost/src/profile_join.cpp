// Rebuilds each recorded step's graph from its shape and pairs its nodes with their times.
#include <algorithm>
#include <map>
#include <thread>
#include <utility>

#include "cost/process_memory.h"
#include "cost/profile.h"
#include "engine/error.h"

namespace cost {
namespace {

std::shared_ptr<const StepAnalysis> analyze_step(const engine::Session& session, const engine::StepShape& shape,
                                                 const HardwareProfile& hw) {
  auto a = std::make_shared<StepAnalysis>();
  engine::KVCache kv(session.model().hparams(), session.n_ctx(), session.params().kv_type);
  a->step = engine::build_step_graph(session.model(), kv, shape);
  a->cost = analyze(*a->step.graph, CostModel::kDefault);
  a->prediction = predict(a->cost, hw);
  return a;
}

}  // namespace

ProfiledRun join_profile(const engine::Session& session, std::string source, std::string_view hardware_name) {
  ProfiledRun run;
  run.source = std::move(source);
  run.session = &session;
  const engine::MemoryUse mem = session.memory();
  run.memory = ProcessMemory{mem.weights, mem.kv_cache, mem.compute_buffer, peak_rss_bytes()};
  const int requested = session.params().n_threads;
  run.threads = requested > 0 ? requested : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  run.hardware = hardware_profile(hardware_name, run.threads, OpProbe{session.params().backend, session.params().device});
  // Beside profiled times, each op pays the fixed cost the profiler's timing adds to its launch.
  run.hardware.op_overhead_us = run.hardware.timed_op_overhead_us();

  const auto& records = session.profiler().records();
  // Steps with the same token count and attention span have the same graph and costs.
  std::map<std::pair<int64_t, int64_t>, std::shared_ptr<const StepAnalysis>> shapes;
  for (const engine::StepRecord& rec : session.steps()) {
    const int64_t n_kv = engine::attention_span(rec.shape.n_past, rec.shape.n_tokens, session.n_ctx());
    auto& analysis = shapes[{rec.shape.n_tokens, n_kv}];
    if (!analysis) analysis = analyze_step(session, rec.shape, run.hardware);
    const auto& nodes = analysis->step.graph->nodes();
    if (rec.n_records != nodes.size() || rec.first_record + rec.n_records > records.size())
      throw engine::Error("profile: a step has " + std::to_string(rec.n_records) + " op records for " +
                          std::to_string(nodes.size()) + " graph nodes (was the profiler cleared alone?)");
    ProfiledStep& step = run.steps.emplace_back(ProfiledStep{rec, analysis, {}});
    step.ns.reserve(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      const engine::OpTiming& t = records[rec.first_record + i];
      if (t.node != static_cast<int>(i) || t.op != nodes[i]->op)
        throw engine::Error("profile: op record " + std::to_string(rec.first_record + i) + " ('" + t.name +
                            "') does not match graph node " + std::to_string(i) + " ('" + nodes[i]->name + "')");
      step.ns.push_back(t.ns);
    }
  }
  return run;
}

}  // namespace cost
