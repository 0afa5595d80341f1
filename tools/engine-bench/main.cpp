// engine-bench: prompt-processing and generation throughput of GGUF models, as llama-bench.
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <exception>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "bench.h"
#include "cost/hardware.h"
#include "cost/html_report.h"
#include "engine/error.h"
#include "tool_cli.h"

namespace {

// Fails before anything runs when a model cannot be opened or a test does not fit the context -c
// sets (without -c each test's context is sized to it).
void check_models(const BenchOptions& opt, const std::vector<BenchTest>& tests) {
  for (const std::string& path : opt.models) {
    engine::Model::load(path, engine::GGUFLoad::kHeaderOnly);
    for (const BenchTest& t : tests)
      if (opt.n_ctx > 0 && t.positions() > opt.n_ctx)
        throw engine::Error(fmt::format("{}: {} needs {} context positions but the context holds {} (see -c)", path,
                                        t.name(), t.positions(), opt.n_ctx));
  }
}

engine::SessionParams session_params(const BenchOptions& opt, int64_t n_ctx) {
  engine::SessionParams params;
  params.n_ctx = n_ctx;
  params.n_threads = opt.threads;
  params.kv_type = opt.kv_type;
  params.backend = opt.backend;
  params.device = opt.device;
  params.n_ubatch = opt.n_ubatch;
  return params;
}

// On this machine's profile (cpu-local) a decode test's roofline divides each repetition by the
// bandwidth read right before and after it: on a shared host the read moves by ±10 % within
// minutes, faster than a test runs. The probe's buffer is freed and the peak RSS reset after each
// read, so the peak reported is the highest the session reached between reads.
TestResult measure(engine::Session& session, const BenchTest& t, const BenchOptions& opt, const BenchContext& context) {
  const cost::HardwareProfile& hw = context.hardware;
  size_t peak_rss = 0;
  BandwidthProbe probe;
  if (hw.name == "cpu-local" && t.kind == BenchTest::Kind::kGen) {
    if (context.peak_rss_resets) reset_peak_rss();  // not the loading's peak
    probe = [&] {
      peak_rss = std::max(peak_rss, peak_rss_bytes());
      const std::optional<double> gbs = cost::measure_read_bandwidth_gbs(opt.threads);
      if (gbs && context.peak_rss_resets) reset_peak_rss();
      return gbs;
    };
  }
  TestResult r = run_test(session, t, opt, hw, probe);
  r.memory = session.memory();
  r.peak_rss = std::max(peak_rss, peak_rss_bytes());
  return r;
}

void write_report_file(const std::string& path, const std::vector<BenchRecord>& records, const BenchContext& context) {
  nlohmann::json doc = bench_document(records, context);
  if (doc.is_array()) doc = {{"tests", doc}};
  std::ofstream out(path);
  cost::write_html_report(out, nullptr, &doc);
  out.close();
  if (!out) throw engine::Error("cannot write the report " + path);
}

// --calibrate: the device's profile as the benchmarks use it (on the CPU and lavapipe, measured
// on the spot with this backend's ops) with the rates of its matrix products per weight dtype,
// written for engine-cost --hw FILE.
cost::HardwareProfile calibrate(const BenchOptions& opt, const std::string& path) {
  const engine::DeviceInfo device = engine::device_info(opt.backend, opt.device);
  cost::HardwareProfile p = cost::hardware_profile(cost::hardware_name_for(device), opt.threads,
                                                   cost::OpProbe{opt.backend, opt.device});
  const std::string when = fmt::format("{:%Y-%m-%d %H:%M} UTC", fmt::gmtime(std::time(nullptr)));
  // A datasheet profile has no fixed cost of an op: the backend's own launches give it.
  if (p.name != "cpu-local") {
    const cost::OpOverhead overhead = cost::measure_op_overhead(opt.threads, cost::OpProbe{opt.backend, opt.device});
    p.op_overhead_us = overhead.us;
    p.profiled_op_overhead_us = overhead.profiled_us;
    p.description += fmt::format(", {:.1f} us an op of the {} backend (measured; {:.1f} us profiled)", p.op_overhead_us,
                                 opt.backend, p.profiled_op_overhead_us);
  }
  calibrate_kernels(p, opt);
  p.name += "-calibrated";
  p.calibrated = when;
  p.description += fmt::format("; calibrated {} for {} device {} ({})", when, opt.backend, opt.device, device.name);
  if (opt.calibrate_types != calibration_types({})) {
    std::vector<std::string> names;
    for (engine::DType t : opt.calibrate_types) names.emplace_back(engine::dtype_name(t));
    p.description += fmt::format(", products of {} weights only", fmt::join(names, ", "));
  }
  std::ofstream out(path);
  cost::write_profile(p, out, "engine-bench --calibrate, " + when);
  out.close();
  if (!out) throw engine::Error("cannot write the profile " + path);
  std::printf("wrote %s: %s\n", path.c_str(), p.description.c_str());
  return p;
}

// The benchmarks, their predictions on `hardware` (the device's profile where absent).
void run(const BenchOptions& opt, const std::string& format, const std::optional<cost::HardwareProfile>& hardware) {
  const std::vector<BenchTest> tests = bench_tests(opt);
  if (tests.empty()) throw engine::Error("nothing to time: every -p and -n size is 0");
  engine::check_backend(opt.backend, opt.device);
  check_models(opt, tests);
  BenchContext context;
  context.threads = opt.threads;
  context.kv_type = opt.kv_type;
  context.backend = opt.backend;
  context.sweeping = opt.sweeping();
  // The profile of the device (on the CPU, a probe of its bandwidth and FMA rate, whose buffer is
  // freed and the peak RSS reset after it, so the peak reported is the model's, not the probe's).
  context.hardware = hardware ? *hardware
                              : cost::hardware_profile(cost::hardware_name_for(engine::device_info(opt.backend, opt.device)),
                                                       opt.threads, cost::OpProbe{opt.backend, opt.device});
  context.peak_rss_resets = reset_peak_rss();
  const auto report = make_report(format, std::cout, context);
  std::vector<BenchRecord> records;
  auto keep = [&](const ModelInfo& info, const TestResult& r) {
    report->add(info, r);
    records.push_back({info, r});
  };
  for (const std::string& path : opt.models) {
    if (opt.n_ctx == 0) {
      // A session per test, its context sized to the test as llama-bench sizes each test's: its
      // memory follows the length, and so does the KV cache's layout (V's rows a context long).
      for (const BenchTest& t : tests) {
        const auto session = engine::Session::create(path, session_params(opt, t.positions()));
        if (context.peak_rss_resets) reset_peak_rss();
        keep(describe_model(*session, path), measure(*session, t, opt, context));
      }
      continue;
    }
    const auto session = engine::Session::create(path, session_params(opt, opt.n_ctx));
    const ModelInfo info = describe_model(*session, path);
    for (const BenchTest& t : tests) keep(info, measure(*session, t, opt, context));
  }
  report->finish();
  if (!opt.report_html.empty()) write_report_file(opt.report_html, records, context);
}


// --tune: the form each dtype's decode products run on, and what each form streamed when timed.
void print_decode_forms(const std::vector<engine::CpuDecodeForm>& forms) {
  const std::string path = engine::cpu_decode_forms_path();
  std::printf("CPU decode forms (%s; each form's column: GB/s streamed on all threads / on one thread with the requests kept for "
              "it; each rows column: "
              "the requests kept on that class of rows, and near+far / far only / none GB/s as timed on it on all threads; the "
              "same on one thread)\n\n"
              "| dtype | form | avx2 GB/s | avx2-vnni GB/s | avx512 GB/s |",
              path.empty() ? "not cached: no cache folder" : path.c_str());
  const std::vector<engine::CpuStreamRequests> classes = forms.empty() ? std::vector<engine::CpuStreamRequests>{} : forms.front().rows;
  std::string separator = "|---|---|---:|---:|---:|";
  for (size_t c = 0; c < classes.size(); ++c) {
    std::printf(" rows of %lld%s |", static_cast<long long>(classes[c].row_elements), c + 1 == classes.size() ? "+" : "");
    separator += "---|";
  }
  std::printf("\n%s\n", separator.c_str());
  for (const auto& f : forms) {
    std::printf("| %s | %s | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f |", std::string(engine::dtype_name(f.weight)).c_str(),
                f.form.c_str(), f.all_threads.avx2_gbs, f.one_thread.avx2_gbs, f.all_threads.avx2_vnni_gbs, f.one_thread.avx2_vnni_gbs,
                f.all_threads.avx512_gbs, f.one_thread.avx512_gbs);
    for (const engine::CpuStreamRequests& r : f.rows)
      std::printf(" %s (%.1f / %.1f / %.1f; %.1f / %.1f / %.1f) |", r.chosen.c_str(), r.all_threads.near_and_far_gbs,
                  r.all_threads.far_only_gbs, r.all_threads.no_requests_gbs, r.one_thread.near_and_far_gbs, r.one_thread.far_only_gbs,
                  r.one_thread.no_requests_gbs);
    std::printf("\n");
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions opt;
  std::string format = "md", kv_type = "f16";
  using tool_cli::integer;
  CLI::App app{"engine-bench: prompt-processing (ppN) and generation (tgN) throughput, as llama-bench measures it"};
  tool_cli::show_defaults(app);
  app.add_option("-m,--model", opt.models, "GGUF model files (comma-separated; required)")->delimiter(',');
  auto* prompt_opt = app.add_option("-p,--n-prompt", opt.n_prompt, "prompt sizes to time (comma-separated; 0: none)")
      ->delimiter(',')
      ->check(integer(int64_t{0}, int64_t{1} << 24));
  app.add_option("-n,--n-gen", opt.n_gen, "generated token counts to time (comma-separated; 0: none)")
      ->delimiter(',')
      ->check(integer(int64_t{0}, int64_t{1} << 24));
  auto* depth_opt = app.add_option("-d,--depth", opt.depths, "KV cache depths the pp and tg tests start from (comma-separated)")
      ->delimiter(',')
      ->check(integer(int64_t{0}, int64_t{1} << 24));
  app.add_option("-t,--threads", opt.threads, "threads (default: all hardware threads)")->check(integer(1, 1024));
  app.add_option("-r,--repetitions", opt.reps, "timed repetitions of each test")->check(integer(1, 100000));
  app.add_option("--backend", opt.backend, "backend (--list-devices shows those built in)")
      ->check(tool_cli::checked_by([](const std::string& name) { engine::check_backend(name); }, "NAME"));
  app.add_option("--device", opt.device, "the backend's device number (--list-devices)")->check(integer(0, 1023));
  bool list_devices = false;
  app.add_flag("--list-devices", list_devices, "list the devices of every backend built in, then exit");
  app.add_option("--kv-type", kv_type, "KV cache type")->check(CLI::IsMember({"f16", "f32"}));
  app.add_option("-c,--ctx", opt.n_ctx, "context size of every test (0: each test's sized to it, as llama-bench does)")
      ->check(integer(int64_t{0}, int64_t{1} << 24));
  app.add_option("-b,--ubatch", opt.n_ubatch, "prompt tokens per step")->check(integer(int64_t{1}, int64_t{1} << 16));
  app.add_option("--sweep-pp", opt.sweep_pp,
                 "prompt lengths to sweep: pp at each, with the session's memory per point (comma-separated)")
      ->delimiter(',')
      ->check(integer(int64_t{1}, int64_t{1} << 24))
      ->excludes(prompt_opt, depth_opt);
  app.add_option("--sweep-tg", opt.sweep_tg,
                 "context depths to sweep: tg<n> (n: the first -n) at each, with the memory per point (comma-separated)")
      ->delimiter(',')
      ->check(integer(int64_t{0}, int64_t{1} << 24))
      ->excludes(prompt_opt, depth_opt);
  app.add_option("--report", opt.report_html, "also write a self-contained HTML report (tables, charts) to this file")
      ->check(tool_cli::writable_file);
  app.add_option("-o,--output", format, "md | csv | json")->check(CLI::IsMember({"md", "csv", "json"}));
  std::string calibrate_path, hardware;
  auto* calibrate_opt =
      app.add_option("--calibrate", calibrate_path,
                     "measure the device's hardware profile (bandwidth, compute, an op's fixed cost on this backend), "
                     "write it to this .json file for engine-cost --hw FILE, then run the benchmarks of any -m, predicted with it")
          ->check(tool_cli::writable_file);
  std::vector<std::string> calibrate_types;
  app.add_option("--calibrate-dtypes", calibrate_types,
                 "the weight dtypes --calibrate times (comma-separated, e.g. the -m models' own; default: every one "
                 "the engine reads)")
      ->delimiter(',')
      ->check(tool_cli::checked_by([](const std::string& name) { calibration_types({name}); }, "DTYPE"))
      ->needs(calibrate_opt);
  app.add_option("--hw", hardware,
                 "hardware profile the predictions use (engine-cost --hw list, or a --calibrate file; default: the device's)")
      ->check(tool_cli::checked_by(cost::check_hardware_name, "PROFILE"))
      ->excludes(calibrate_opt);
  bool tune = false;
  app.add_flag("--tune", tune,
               "time the CPU backend's decode forms of every weight dtype now (AVX2, AVX2 + VNNI, AVX-512: those the "
               "CPU has), keep the fastest of each (cached per CPU model; first use does this by itself), print them; "
               "then run any -m given");
  if (const auto exit_code = tool_cli::parse(app, argc, argv, "engine-bench")) return *exit_code;
  if (list_devices) return tool_cli::print_devices();

  if (!calibrate_path.empty() && !calibrate_path.ends_with(".json")) {
    std::fprintf(stderr, "engine-bench: error: --calibrate: '%s' must end in .json (engine-cost --hw reads it by that)\n",
                 calibrate_path.c_str());
    return 1;
  }
  if (opt.models.empty() && calibrate_path.empty() && !tune) {
    std::fprintf(stderr, "engine-bench: error: --model is required\n");
    return 1;
  }
  opt.kv_type = *engine::dtype_from_name(kv_type);
  if (opt.threads == 0) opt.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  tool_cli::log_to_stderr(spdlog::level::warn);
  try {
    opt.calibrate_types = calibration_types(calibrate_types);
    if (tune) print_decode_forms(engine::cpu_decode_forms(true));
    std::optional<cost::HardwareProfile> profile;
    if (!calibrate_path.empty()) profile = calibrate(opt, calibrate_path);
    if (!hardware.empty()) profile = cost::hardware_profile(hardware, opt.threads, cost::OpProbe{opt.backend, opt.device});
    if (!opt.models.empty()) run(opt, format, profile);
  } catch (const std::exception& e) {
    std::cout.flush();
    std::fprintf(stderr, "engine-bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
