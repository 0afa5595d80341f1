#include <algorithm>
#include <cstdio>
#include <string>

#include "cost/report.h"
#include "cost/module_tree.h"
#include "report_units.h"

namespace cost {
namespace {

std::string line(const char* fmt, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

// Predicted time of the nodes that match `pick`, and the share of it that is memory-bound.
template <typename Pick>
std::pair<double, double> predicted(const Analysis& a, Pick pick) {
  double total = 0, memory_bound = 0;
  for (size_t i = 0; i < a.cost.nodes.size(); ++i)
    if (pick(*a.cost.nodes[i].node)) {
      const NodePrediction& p = a.speed->step.nodes[i];
      total += p.time_s;
      if (p.memory_bound) memory_bound += p.time_s;
    }
  return {total, memory_bound};
}

// Costs (and predicted times) per module: the model's tree of blocks, layer by layer.
void write_modules(std::ostream& out, const Analysis& a) {
  auto sum = [&](const std::vector<size_t>& nodes, auto value) {
    double v = 0;
    for (size_t i : nodes) v += value(i);
    return v;
  };
  auto arithmetic = [&](size_t i) { return a.cost.nodes[i].counts.arithmetic(); };
  auto bytes = [&](size_t i) { return a.cost.nodes[i].counts.bytes(); };
  auto self_or_blank = [](const ModuleRow& r, const std::string& v) { return r.self.empty() ? std::string() : v; };
  std::vector<ModuleColumn> columns = {
      {"Self arithmetic", [&](const ModuleRow& r) { return self_or_blank(r, human_count(sum(r.self, arithmetic))); }},
      {"Arithmetic", [&](const ModuleRow& r) { return human_count(sum(r.total, arithmetic)); }},
      {"Self bytes", [&](const ModuleRow& r) { return self_or_blank(r, human_bytes(sum(r.self, bytes))); }},
      {"Bytes", [&](const ModuleRow& r) { return human_bytes(sum(r.total, bytes)); }},
  };
  if (a.speed) {
    auto time = [&](size_t i) { return a.speed->step.nodes[i].time_s; };
    // `time` ends with this block; the columns run later, so they hold their own copy of it.
    columns.push_back({"Self time", [&, time](const ModuleRow& r) { return self_or_blank(r, human_seconds(sum(r.self, time))); }});
    columns.push_back({"Time", [&, time](const ModuleRow& r) { return human_seconds(sum(r.total, time)); }});
  }
  columns.push_back({"Nodes", [](const ModuleRow& r) { return std::to_string(r.total.size()); }});
  write_module_table(out, module_rows(*a.step.graph, engine::module_root(a.hparams.arch)), columns);
}

}  // namespace

void write_text(std::ostream& out, const Analysis& a) {
  const engine::HParams& hp = a.hparams;
  const AnalysisOptions& o = a.options;
  out << line("model    %s: %s, %lld layers, embedding %lld, %lld heads (%lld KV), feed-forward %lld, vocab %lld, "
              "weights mostly %s\n",
              a.source.c_str(), hp.arch.c_str(), (long long)hp.n_layer, (long long)hp.n_embd, (long long)hp.n_head,
              (long long)hp.n_head_kv, (long long)hp.n_ff, (long long)hp.n_vocab,
              std::string(engine::dtype_name(a.weight_type)).c_str());
  if (hp.n_expert > 0)
    out << line("params   %s total, %s active per token (%lld of %lld experts)\n", human_count(a.params.total).c_str(),
                human_count(a.params.active).c_str(), (long long)hp.n_expert_used, (long long)hp.n_expert);
  else
    out << line("params   %s\n", human_count(a.params.total).c_str());
  out << line("step     %lld new token(s) after %lld cached; context %lld; attention span %lld; %zu nodes; "
              "cost model %s\n\n",
              (long long)o.n_tokens, (long long)o.n_past, (long long)o.n_ctx, (long long)a.step.n_kv,
              a.step.graph->nodes().size(), o.model == CostModel::kSeed ? "seed" : "default");

  out << "totals\n";
  for (const auto& [m, v] : a.cost.total.items()) {
    const bool bytes = m == Metric::kRead || m == Metric::kWrite;
    out << line("  %-6s %14.6g  (%s)\n", std::string(metric_name(m)).c_str(), v,
                (bytes ? human_bytes(v) : human_count(v)).c_str());
  }
  out << line("  arithmetic %.6g, arithmetic intensity %.3g per byte, peak temporary storage %.0f bytes\n\n",
              a.cost.total.arithmetic(), a.cost.total.arithmetic() / std::max(1.0, a.cost.total.bytes()),
              a.cost.max_tempsize);

  const bool speed = a.speed.has_value();
  out << line("%-10s %12s %12s %12s", "op", "arithmetic", "read", "write") << (speed ? line(" %12s %7s %7s", "time", "share", "memory") : "")
      << "\n";
  for (const auto& [op, c] : a.cost.by_op) {
    out << line("%-10s %12s %12s %12s", op.c_str(), human_count(c.arithmetic()).c_str(),
                human_bytes(c.get(Metric::kRead)).c_str(), human_bytes(c.get(Metric::kWrite)).c_str());
    if (speed) {
      const auto [t, mem] = predicted(a, [&](const engine::Tensor& n) { return engine::op_name(n.op) == op; });
      out << line(" %12s %6.1f%% %6.1f%%", human_seconds(t).c_str(), 100 * t / a.speed->step.total_s,
                  t > 0 ? 100 * mem / t : 0.0);
    }
    out << "\n";
  }
  out << "\n";
  write_modules(out, a);

  const MemoryEstimate& m = a.memory;
  out << line("\nmemory (context %lld, KV cache %s, compute buffer planned for a %lld-token step)\n", (long long)o.n_ctx,
              std::string(engine::dtype_name(o.kv_type)).c_str(), (long long)m.reserve_tokens);
  out << line("  weights         %14zu bytes  (%s)\n", m.weights, human_bytes(static_cast<double>(m.weights)).c_str());
  out << line("  KV cache        %14zu bytes  (%s)\n", m.kv_cache, human_bytes(static_cast<double>(m.kv_cache)).c_str());
  out << line("  compute buffer  %14zu bytes  (%s)\n", m.compute_buffer,
              human_bytes(static_cast<double>(m.compute_buffer)).c_str());
  out << line("  scratch         %14zu bytes  (%s)\n", m.scratch, human_bytes(static_cast<double>(m.scratch)).c_str());
  out << line("  total           %14zu bytes  (%s)\n", m.total(), human_bytes(static_cast<double>(m.total())).c_str());

  if (speed) {
    const Speed& s = *a.speed;
    const auto [t, mem] = predicted(a, [](const engine::Tensor&) { return true; });
    out << line("\nspeed on %s (roofline: each node at the slower of its arithmetic and its memory traffic%s)\n",
                s.hardware.name.c_str(),
                s.hardware.op_overhead_us > 0 ? line(", plus %.1f us an op", s.hardware.op_overhead_us).c_str() : "");
    if (!s.hardware.calibrated.empty())
      out << line("  profile     %s\n", s.hardware.description.c_str());
    out << line("  this step   %s, %.1f%% of it memory-bound\n", human_seconds(t).c_str(), t > 0 ? 100 * mem / t : 0.0);
    out << line("  decode      %.1f tok/s (one token after %lld cached)\n", s.decode_tok_s, (long long)o.n_past);
    out << line("  prefill     %.1f tok/s (a %lld-token prompt)\n", s.prefill_tok_s, (long long)s.prefill_tokens);
  }
}

void write_hardware_list(std::ostream& out) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-14s %9s %9s %9s %9s %9s %7s  %s\n", "name", "GB/s", "f32 TF", "f16 TF", "bf16 TF",
                "int8 TOP", "mem GB", "description");
  out << buf;
  for (const HardwareProfile& p : builtin_profiles()) {
    std::snprintf(buf, sizeof buf, "%-14s %9.0f %9.1f %9.1f %9.1f %9.1f %7.0f  %s\n", p.name.c_str(), p.mem_bw_gbs,
                  p.peak_tflops_f32, p.peak_tflops_f16, p.peak_tflops_bf16, p.peak_tflops_int8, p.mem_gb,
                  p.description.c_str());
    out << buf;
  }
  out << "cpu-local      (measured on this machine when selected)\n";
}

}  // namespace cost
