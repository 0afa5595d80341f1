// The four profile views as text tables, per phase, then the memory line.
#include <cstdio>
#include <string>

#include "cost/profile.h"
#include "report_units.h"

namespace cost {
namespace {

std::string line(const char* fmt, auto... args) {
  char buf[1024];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

std::string rule(size_t width) {
  std::string s;
  for (size_t i = 0; i < width; ++i) s += "─";
  return s + "\n";
}

std::string layer_name(int layer) { return layer < 0 ? "other" : std::to_string(layer); }

double mib(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

void write_ops(std::ostream& out, const PhaseProfile& p) {
  out << "Per-op profile (" << p.name << ")\n";
  constexpr size_t kWidth = 62;
  out << rule(kWidth) << line("%-34s %10s %7s %8s\n", "Kernel", "Time (ms)", "%", "Calls") << rule(kWidth);
  int64_t calls = 0;
  for (const OpRow& r : p.ops) {
    out << line("%-34s %10.3f %7.1f %8lld\n", r.label.c_str(), r.ms, r.pct, static_cast<long long>(r.calls));
    calls += r.calls;
  }
  out << rule(kWidth) << line("%-34s %10.3f %7.1f %8lld\n\n", "TOTAL", p.op_ms_sum, 100.0, static_cast<long long>(calls));
}

void write_modules(std::ostream& out, const PhaseProfile& p) {
  out << "Module tree (" << p.name << ")\n";
  const auto ms = [](double v) { return line("%.3fms", v); };
  write_module_table(out, p.modules,
                     {{"Self time", [&](const ModuleRow& r) { return r.self.empty() ? "" : ms(p.module_ms(r.self)); }},
                      {"Total time", [&](const ModuleRow& r) { return ms(p.module_ms(r.total)); }},
                      {"Number of Calls", [&](const ModuleRow& r) { return r.total.empty() ? "" : std::to_string(p.steps); }}});
  out << "\n";
}

void write_efficiency(std::ostream& out, const PhaseProfile& p, const Profile& profile) {
  const double steps = static_cast<double>(p.steps);
  out << "Efficiency (" << p.name << ")\n"
      << line("  Forward time:     %.3f ms per step (%lld steps, %lld tokens, %.3f ms in all)\n", p.wall_ms / steps,
              static_cast<long long>(p.steps), static_cast<long long>(p.tokens), p.wall_ms)
      << line("  FLOPs / forward:  %s FLOP\n", human_count(p.flops / steps).c_str())
      << line("  Effective:        %.4f TFLOP/s (%.2f GFLOP/s), %.2f GB/s\n", p.tflops(), p.tflops() * 1e3,
              p.wall_ms > 0 ? p.bytes / p.wall_ms / 1e6 : 0.0)
      << "\n  Per layer (roofline: " << profile.hardware.name << ")\n"
      << line("  %-6s %11s %12s %11s %10s %13s\n", "Layer", "Time (ms)", "GFLOP", "GFLOP/s", "GB/s", "% roofline");
  for (const LayerRow& r : p.layers)
    out << line("  %-6s %11.3f %12.4f %11.2f %10.2f %13.1f\n", layer_name(r.layer).c_str(), r.ms, r.flops / 1e9,
                r.gflops_s(), r.gb_s(), r.roofline_pct());
  out << "\n  Time by op type\n" << line("  %-10s %8s %12s %11s\n", "Type", "Count", "Total (ms)", "Mean (ms)");
  for (const OpTypeRow& r : p.op_types)
    out << line("  %-10s %8lld %12.3f %11.4f\n", r.op.c_str(), static_cast<long long>(r.count), r.total_ms, r.mean_ms());
  out << "\n  Slowest nodes (" << p.slowest.size() << ")\n";
  for (const NodeExec& r : p.slowest)
    out << line("  - %.4f ms — `%s` %s (%s)\n", r.ms, r.module.c_str(), r.name.c_str(), r.op.c_str());
  out << "\n";
}

void write_prediction(std::ostream& out, const PhaseProfile& p, const Profile& profile) {
  out << "Predicted vs measured (" << p.name << ", roofline on " << profile.hardware.name
      << (profile.hardware.calibrated.empty() ? "" : ", calibrated " + profile.hardware.calibrated) << ")\n"
      << line("  %-10s %15s %14s %8s\n", "Layer", "Predicted (ms)", "Measured (ms)", "Ratio");
  for (const LayerRow& r : p.layers)
    out << line("  %-10s %15.4f %14.3f %8.2f\n", layer_name(r.layer).c_str(), r.predicted_ms, r.ms, r.ratio());
  out << line("  %-10s %15.4f %14.3f %8.2f\n", "TOTAL", p.predicted_ms, p.op_ms_sum,
              p.predicted_ms > 0 ? p.op_ms_sum / p.predicted_ms : 0.0)
      << "\n" << line("  %-10s %15s %14s %8s\n", "Op type", "Predicted (ms)", "Measured (ms)", "Ratio");
  for (const OpTypeRow& r : p.op_types)  // a view is predicted to take no time: no ratio
    out << line("  %-10s %15.4f %14.3f %8s\n", r.op.c_str(), r.predicted_ms, r.total_ms,
                r.predicted_ms > 0 ? line("%.2f", r.ratio()).c_str() : "-");
  out << "\n";
}

void write_phase(std::ostream& out, const PhaseProfile& p, const Profile& profile) {
  out << "=== " << p.name << ": " << p.steps << (p.steps == 1 ? " step, " : " steps, ") << p.tokens << " tokens ===\n"
      << line("wall %.3f ms (backend compute) | per-op sum %.3f ms (%.1f%% of wall) | whole steps %.3f ms "
              "(graph build, plan, inputs, logits: %.3f ms)\n\n",
              p.wall_ms, p.op_ms_sum, p.wall_ms > 0 ? 100.0 * p.op_ms_sum / p.wall_ms : 0.0, p.step_ms,
              p.step_ms - p.wall_ms);
  write_ops(out, p);
  write_modules(out, p);
  write_efficiency(out, p, profile);
  write_prediction(out, p, profile);
}

}  // namespace

std::string memory_line(const ProcessMemory& m) {
  return line("Peak Memory: weights %.2f MiB | KV cache %.2f MiB | compute buffer %.2f MiB | peak RSS %.2f MiB", mib(m.weights),
              mib(m.kv_cache), mib(m.compute_buffer), mib(m.peak_rss));
}

void write_profile_text(std::ostream& out, const Profile& profile) {
  out << "Profile: " << profile.source << " (" << profile.arch << ", " << profile.n_layer << " layers, "
      << profile.weight_type << "), " << profile.backend << " backend, " << profile.threads << " threads\n\n";
  if (profile.prefill) write_phase(out, *profile.prefill, profile);
  if (profile.decode) write_phase(out, *profile.decode, profile);
  out << memory_line(profile.memory) << "\n";
}

}  // namespace cost
