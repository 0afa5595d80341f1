#pragma once
// engine-bench: prompt-processing and generation throughput, in the manner of llama.cpp's
// llama-bench, with each generation result set against the memory-bandwidth roofline.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost/hardware.h"
#include "engine/dtype.h"
#include "engine/model.h"
#include "engine/session.h"

struct BenchOptions {
  std::vector<std::string> models;
  std::vector<int64_t> n_prompt{512};
  std::vector<int64_t> n_gen{128};
  std::vector<int64_t> depths{0};  // KV positions filled before a test is timed
  int threads = 0;                 // resolved to the hardware threads when 0
  int reps = 5;
  std::string backend = "cpu";
  int device = 0;
  engine::DType kv_type = engine::DType::F16;
  int64_t n_ctx = 0;               // every test's context; 0: each test on a session sized to it
  int64_t n_ubatch = 512;
  // Sweeps: pp at each prompt length, tg<first n_gen> at each depth.
  std::vector<int64_t> sweep_pp;
  std::vector<int64_t> sweep_tg;
  std::string report_html;  // also write the HTML report here when not empty
  std::vector<engine::DType> calibrate_types;  // the weight dtypes --calibrate times (calibration_types)
  bool sweeping() const { return !sweep_pp.empty() || !sweep_tg.empty(); }
};

// One measurement: pp<N> (a prompt of N tokens) or tg<N> (N decode steps) at a depth.
struct BenchTest {
  enum class Kind { kPrompt, kGen };
  Kind kind = Kind::kPrompt;
  int64_t n_tokens = 0;
  int64_t depth = 0;
  bool sweep_point = false;

  std::string name() const;  // "pp512", "tg128", "pp512 @ d2048" (llama-bench's names)
  // KV positions the test fills: a prompt starts after `depth` tokens, generation after max(depth, 1).
  int64_t positions() const;
};

// The tests of the options: every pp at every depth, then every tg at every depth;
// when sweeping, the sweep points instead: every swept pp, then tg<first n_gen> at every swept depth.
std::vector<BenchTest> bench_tests(const BenchOptions& opt);

struct DtypeShare {
  engine::DType type;
  double share;  // of all tensor bytes
};

struct ModelInfo {
  std::string path;
  std::string description;  // "llama 1B Q4_0": architecture, parameter class, dominant dtype
  size_t size_bytes = 0;    // all tensor data
  int64_t params = 0;       // elements of all tensors
  std::vector<DtypeShare> dtype_mix;  // largest share first
  // Weight dtypes whose prompt multiplies keep float activations on this backend and machine
  // (Backend::prefill_float_activations), so their numbers are not llama.cpp's integer order.
  std::vector<engine::DType> prefill_float_activations;
};

ModelInfo describe_model(const engine::Session& session, const std::string& path);

struct TestResult {
  BenchTest test;
  std::vector<double> samples_ts;  // tokens per second of each repetition
  double mean_ts = 0;
  double stddev_ts = 0;            // sample standard deviation; 0 for one repetition
  double step_bytes = 0;           // tg: bytes one decode step reads and writes (cost model)
  double bandwidth_gbs = 0;        // the bandwidth the roofline divides by: the profile's, or on
                                   // cpu-local for tg, the mean of samples_bandwidth_gbs
  std::vector<double> samples_bandwidth_gbs;  // cpu-local tg: each repetition's, the mean of the reads
                                              // probed right before and after it
  double predicted_ts = 0;         // tokens per second the roofline predicts (cost::predict, default model)
  engine::MemoryUse memory;        // the session's own bytes: what changes with the length
  size_t peak_rss = 0;             // process high-water mark (VmHWM) after the test

  // tg: step_bytes * t/s / bandwidth, each repetition's over its own bandwidth where probed, the
  // mean over repetitions (0 for a prompt test).
  double roofline_fraction() const {
    if (test.kind != BenchTest::Kind::kGen) return 0;
    if (samples_bandwidth_gbs.empty() || samples_bandwidth_gbs.size() != samples_ts.size())
      return step_bytes * mean_ts / (bandwidth_gbs * 1e9);
    double sum = 0;
    for (size_t i = 0; i < samples_ts.size(); ++i) sum += step_bytes * samples_ts[i] / (samples_bandwidth_gbs[i] * 1e9);
    return sum / static_cast<double>(samples_ts.size());
  }
};

// The process's peak resident set (VmHWM), 0 where /proc is unavailable.
size_t peak_rss_bytes();
// Resets the peak to the current RSS (Linux /proc/self/clear_refs); false when refused.
bool reset_peak_rss();

// Sets profile.mul_mat_tflops, mul_mat_short_tflops, mul_mat_gbs and mul_mat_columns_gbs: the
// arithmetic rates opt's backend and device reach in a long and a short prompt's matrix products
// and the bandwidth in a decode step's and in a 2- to 15-token prompt's, for each of
// opt.calibrate_types;
// attention_tflops, attention_decode_tflops and attention_decode_deep_tflops, its attention
// products' rate over a long prompt and in decode steps after one and after a deep context; and
// op_gbs, its other ops' bandwidth over the long prompt (calibrate.cpp).
// Throws engine::Error where one cannot be timed.
void calibrate_kernels(cost::HardwareProfile& profile, const BenchOptions& opt);

// The weight dtypes named (dtype_name's spelling), or every one the engine reads where `names` is
// empty. Throws engine::Error naming one that is no weight dtype.
std::vector<engine::DType> calibration_types(const std::vector<std::string>& names);

// Reads the host's bandwidth now, in GB/s (nullopt where it cannot).
using BandwidthProbe = std::function<std::optional<double>()>;

// Runs `test` opt.reps times after one warm-up on a session of the model; where `probe` is given
// it reads the bandwidth before the first repetition and after each (samples_bandwidth_gbs).
// Throws engine::Error when the session's context cannot hold the test.
TestResult run_test(engine::Session& session, const BenchTest& test, const BenchOptions& opt, const cost::HardwareProfile& hw,
                    const BandwidthProbe& probe = {});

// What every report gets besides the rows.
struct BenchContext {
  std::string backend;  // the backend's own name ("CPU")
  int threads = 0;
  engine::DType kv_type = engine::DType::F16;
  cost::HardwareProfile hardware;  // the device's profile (cost::hardware_name_for): roofline and predictions
  bool sweeping = false;
  bool peak_rss_resets = false;  // sweeping: the peak RSS was reset before each point
};

struct BenchRecord {
  ModelInfo model;
  TestResult result;
};

// The json document of the results: an array of llama-bench-like records, or when sweeping
// {"tests": [records], "sweeps": {"pp": [points], "tg": [points]}} (the HTML report reads it).
nlohmann::json bench_document(const std::vector<BenchRecord>& records, const BenchContext& context);

// Receives results as they are measured; md and csv print each row at once, json at the end.
class BenchReport {
 public:
  virtual ~BenchReport() = default;
  virtual void add(const ModelInfo& model, const TestResult& result) = 0;
  virtual void finish() = 0;
};

// format: "md" | "csv" | "json".
std::unique_ptr<BenchReport> make_report(const std::string& format, std::ostream& out, const BenchContext& context);
