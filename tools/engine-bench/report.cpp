#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

#include "bench.h"
#include "engine/error.h"

namespace {

bool is_gen(const TestResult& r) { return r.test.kind == BenchTest::Kind::kGen; }

// llama-bench's units: MiB below one GiB, parameters in K, M or B.
std::string size_text(size_t bytes) {
  const double b = static_cast<double>(bytes);
  return b >= 1024.0 * 1024 * 1024 ? fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024))
                                   : fmt::format("{:.2f} MiB", b / (1024.0 * 1024));
}

std::string params_text(int64_t params) {
  const double p = static_cast<double>(params);
  if (p >= 1e9) return fmt::format("{:.2f} B", p / 1e9);
  if (p >= 1e6) return fmt::format("{:.2f} M", p / 1e6);
  return fmt::format("{:.2f} K", p / 1e3);
}

// "q4_0 79.4 %, f32 0.6 %" for people, "q4_0:0.7940;f32:0.0060" for CSV.
std::string dtype_mix_text(const ModelInfo& m, bool for_people) {
  std::vector<std::string> parts;
  for (const DtypeShare& d : m.dtype_mix)
    parts.push_back(for_people ? fmt::format("{} {:.1f} %", engine::dtype_name(d.type), 100 * d.share)
                               : fmt::format("{}:{:.4f}", engine::dtype_name(d.type), d.share));
  return fmt::format("{}", fmt::join(parts, for_people ? ", " : ";"));
}

class MarkdownReport : public BenchReport {
 public:
  MarkdownReport(std::ostream& out, const BenchContext& c) : out_(out), c_(c) {
    backend_ = c.backend;
    for (char& ch : backend_) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  }
  void add(const ModelInfo& m, const TestResult& r) override {
    if (models_.empty()) {  // the header with the first row: a run that fails before any prints nothing
      out_ << fmt::format("| {:<30} | {:>10} | {:>10} | {:<10} | {:>7} | {:>13} | {:>20} | {:>9} | {:>8} |\n", "model",
                          "size", "params", "backend", "threads", "test", "t/s", "predicted", "roofline");
      out_ << fmt::format("| {:-<30} | {:->9}: | {:->9}: | {:-<10} | {:->6}: | {:->12}: | {:->19}: | {:->8}: | {:->7}: |\n",
                          "", "", "", "", "", "", "", "", "");
    }
    if (seen_.insert(m.path).second) models_.push_back(m);
    const std::string roofline = is_gen(r) ? fmt::format("{:.1f} %", 100 * r.roofline_fraction()) : "";
    out_ << fmt::format("| {:<30} | {:>10} | {:>10} | {:<10} | {:>7} | {:>13} | {:>20} | {:>9.2f} | {:>8} |\n",
                        m.description, size_text(m.size_bytes), params_text(m.params), backend_, c_.threads,
                        r.test.name(), fmt::format("{:.2f} ± {:.2f}", r.mean_ts, r.stddev_ts), r.predicted_ts, roofline);
    out_.flush();  // a row as soon as it is measured, as llama-bench does
  }
  void finish() override {
    out_ << "\n";
    for (const ModelInfo& m : models_) {
      out_ << fmt::format("dtype mix of {} ({}): {}\n", m.description, m.path, dtype_mix_text(m, true));
      std::vector<std::string_view> float_acts;
      for (engine::DType t : m.prefill_float_activations) float_acts.push_back(engine::dtype_name(t));
      if (!float_acts.empty())
        out_ << fmt::format("prompt multiplies of {} weights keep the activations in float on this backend, where "
                            "llama.cpp quantizes them (CPU: AMX tiles; ENGINE_CPU_AMX=0 gives llama.cpp's order)\n",
                            fmt::join(float_acts, ", "));
    }
    const cost::HardwareProfile& hw = c_.hardware;
    out_ << fmt::format("hardware profile {} ({}): {:.1f} GB/s, {:.2f} TFLOP/s f32, {:.1f} us an op; predicted = t/s of "
                        "the cost model's roofline on it (each node the slower of its bytes at that bandwidth and its "
                        "arithmetic at its class's peak, a product's at the rates calibrated for its weight dtype where "
                        "the profile has them, plus the fixed cost of an op); roofline = bytes a decode step "
                        "reads and writes (weights + KV cache at that depth) x t/s / bandwidth{}\n",
                        hw.name, hw.description, hw.mem_bw_gbs, hw.peak_tflops_f32, hw.op_overhead_us,
                        hw.name == "cpu-local" ? " read right before and after each repetition" : "");
  }

 private:
  std::ostream& out_;
  BenchContext c_;
  std::string backend_;
  std::set<std::string> seen_;
  std::vector<ModelInfo> models_;
};

// Sweep points: throughput and the memory behind it, per point.
class SweepMarkdownReport : public BenchReport {
 public:
  SweepMarkdownReport(std::ostream& out, const BenchContext& c) : out_(out), c_(c) {}
  void add(const ModelInfo& m, const TestResult& r) override {
    if (!started_) {
      out_ << fmt::format("| {:<30} | {:>13} | {:>20} | {:>10} | {:>10} | {:>10} | {:>10} | {:>10} |\n", "model",
                          "test", "t/s", "weights", "KV cache", "compute", "session", "peak RSS");
      out_ << fmt::format("| {:-<30} | {:->12}: | {:->19}: | {:->9}: | {:->9}: | {:->9}: | {:->9}: | {:->9}: |\n", "",
                          "", "", "", "", "", "", "");
      started_ = true;
    }
    const engine::MemoryUse& mem = r.memory;
    out_ << fmt::format("| {:<30} | {:>13} | {:>20} | {:>10} | {:>10} | {:>10} | {:>10} | {:>10} |\n", m.description,
                        r.test.name(), fmt::format("{:.2f} ± {:.2f}", r.mean_ts, r.stddev_ts), size_text(mem.weights),
                        size_text(mem.kv_cache), size_text(mem.compute_buffer),
                        size_text(mem.total()), size_text(r.peak_rss));
    out_.flush();
  }
  void finish() override {
    out_ << fmt::format(
        "\nsession = weights + KV cache + compute buffer + scratch of a session sized to the point (threads {}, kv {}); peak RSS = "
        "the process high-water mark (VmHWM), {}\n",
        c_.threads, engine::dtype_name(c_.kv_type),
        c_.peak_rss_resets ? "reset before each point" : "which could not be reset here, so it only grows");
  }

 private:
  std::ostream& out_;
  BenchContext c_;
  bool started_ = false;
};

// A CSV field, quoted when it holds a separator or a quote.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

class CsvReport : public BenchReport {
 public:
  CsvReport(std::ostream& out, const BenchContext& c) : out_(out), c_(c) {}
  void add(const ModelInfo& m, const TestResult& r) override {
    if (!started_)
      out_ << "model_path,model_desc,model_size,model_params,dtype_mix,backend,threads,kv_type,n_prompt,n_gen,n_depth,"
              "test,reps,avg_ts,stddev_ts,samples_ts,predicted_ts,hardware,hardware_calibrated,decode_step_bytes,bandwidth_gbs,roofline_fraction,"
              "weights_bytes,kv_cache_bytes,compute_buffer_bytes,peak_rss\n";
    started_ = true;
    const bool gen = is_gen(r);
    out_ << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(m.path),
                        csv_field(m.description), m.size_bytes, m.params, dtype_mix_text(m, false),
                        c_.backend, c_.threads, engine::dtype_name(c_.kv_type), gen ? 0 : r.test.n_tokens,
                        gen ? r.test.n_tokens : 0, r.test.depth, r.test.name(), r.samples_ts.size(), r.mean_ts,
                        r.stddev_ts, fmt::join(r.samples_ts, ";"), r.predicted_ts, csv_field(c_.hardware.name),
                        csv_field(c_.hardware.calibrated),
                        gen ? fmt::format("{}", r.step_bytes) : "", r.bandwidth_gbs,
                        gen ? fmt::format("{}", r.roofline_fraction()) : "", r.memory.weights, r.memory.kv_cache,
                        r.memory.compute_buffer, r.peak_rss);
    out_.flush();
  }
  void finish() override {}

 private:
  std::ostream& out_;
  BenchContext c_;
  bool started_ = false;
};

class JsonReport : public BenchReport {
 public:
  JsonReport(std::ostream& out, const BenchContext& c) : out_(out), c_(c) {}
  void add(const ModelInfo& m, const TestResult& r) override { records_.push_back({m, r}); }
  void finish() override { out_ << bench_document(records_, c_).dump(2) << "\n"; }

 private:
  std::ostream& out_;
  BenchContext c_;
  std::vector<BenchRecord> records_;
};

size_t session_bytes(const engine::MemoryUse& m) { return m.weights + m.kv_cache + m.compute_buffer; }

nlohmann::json test_record(const ModelInfo& m, const TestResult& r, const BenchContext& c) {
  const bool gen = is_gen(r);
  nlohmann::json mix = nlohmann::json::array();
  for (const DtypeShare& d : m.dtype_mix) mix.push_back({{"type", engine::dtype_name(d.type)}, {"share", d.share}});
  return {
      {"model_path", m.path},
      {"model_desc", m.description},
      {"model_size", m.size_bytes},
      {"model_params", m.params},
      {"dtype_mix", mix},
      {"backend", c.backend},
      {"threads", c.threads},
      {"kv_type", engine::dtype_name(c.kv_type)},
      {"n_prompt", gen ? 0 : r.test.n_tokens},
      {"n_gen", gen ? r.test.n_tokens : 0},
      {"n_depth", r.test.depth},
      {"test", r.test.name()},
      {"reps", r.samples_ts.size()},
      {"avg_ts", r.mean_ts},
      {"stddev_ts", r.stddev_ts},
      {"samples_ts", r.samples_ts},
      {"decode_step_bytes", gen ? nlohmann::json(r.step_bytes) : nlohmann::json()},
      {"predicted_ts", r.predicted_ts},
      {"hardware", c.hardware.name},
      {"hardware_calibrated", c.hardware.calibrated},
      {"bandwidth_gbs", r.bandwidth_gbs},
      {"samples_bandwidth_gbs", r.samples_bandwidth_gbs},
      {"roofline_fraction", gen ? nlohmann::json(r.roofline_fraction()) : nlohmann::json()},
      {"weights_bytes", r.memory.weights},
      {"kv_cache_bytes", r.memory.kv_cache},
      {"compute_buffer_bytes", r.memory.compute_buffer},
      {"session_bytes", session_bytes(r.memory)},
      {"peak_rss", r.peak_rss},
  };
}

// One point of the sweep contract (docs: the profile/sweep json), plus the memory parts.
nlohmann::json sweep_point(const ModelInfo& m, const TestResult& r) {
  nlohmann::json p = {{"model", m.description}, {"model_path", m.path}};
  if (is_gen(r)) p["depth"] = r.test.depth, p["n_gen"] = r.test.n_tokens;
  else p["tokens"] = r.test.n_tokens;
  p.update({{"t_s", r.mean_ts},
            {"sd", r.stddev_ts},
            {"peak_rss", r.peak_rss},
            {"weights", r.memory.weights},
            {"kv_cache", r.memory.kv_cache},
            {"compute_buffer", r.memory.compute_buffer},
            {"session_bytes", session_bytes(r.memory)}});
  return p;
}

}  // namespace

std::unique_ptr<BenchReport> make_report(const std::string& format, std::ostream& out, const BenchContext& context) {
  if (format == "md" && context.sweeping) return std::make_unique<SweepMarkdownReport>(out, context);
  if (format == "md") return std::make_unique<MarkdownReport>(out, context);
  if (format == "csv") return std::make_unique<CsvReport>(out, context);
  if (format == "json") return std::make_unique<JsonReport>(out, context);
  throw engine::Error("unknown output format '" + format + "' (md, csv, json)");
}

nlohmann::json bench_document(const std::vector<BenchRecord>& records, const BenchContext& context) {
  nlohmann::json tests = nlohmann::json::array();
  for (const BenchRecord& r : records) tests.push_back(test_record(r.model, r.result, context));
  if (!context.sweeping) return tests;
  nlohmann::json pp = nlohmann::json::array(), tg = nlohmann::json::array();
  for (const BenchRecord& r : records)
    if (r.result.test.sweep_point) (is_gen(r.result) ? tg : pp).push_back(sweep_point(r.model, r.result));
  return {{"tests", tests}, {"sweeps", {{"pp", pp}, {"tg", tg}}}};
}
