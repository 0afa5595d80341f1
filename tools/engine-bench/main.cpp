// engine-bench: prompt-processing and generation throughput of GGUF models, as llama-bench.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <thread>

#include "bench.h"
#include "cost/hardware.h"
#include "engine/arch.h"
#include "engine/error.h"

namespace {

// Fails before anything runs when a model cannot be opened or a test does not fit its context.
void check_models(const BenchOptions& opt, const std::vector<BenchTest>& tests) {
  for (const std::string& path : opt.models) {
    const auto model = engine::Model::load(path, engine::GGUFLoad::kHeaderOnly);
    const int64_t n_ctx = opt.n_ctx > 0 ? opt.n_ctx : engine::default_context(model->hparams());
    for (const BenchTest& t : tests)
      if (t.positions() > n_ctx)
        throw engine::Error(fmt::format("{}: {} needs {} context positions but the context holds {} (see -c)", path,
                                        t.name(), t.positions(), n_ctx));
  }
}

void run(const BenchOptions& opt, const std::string& format) {
  const std::vector<BenchTest> tests = bench_tests(opt);
  check_models(opt, tests);
  BenchContext context;
  context.threads = opt.threads;
  context.kv_type = opt.kv_type;
  context.bandwidth_gbs = cost::measure_local_cpu(opt.threads).mem_bw_gbs;
  context.backend = opt.backend;
  const auto report = make_report(format, std::cout, context);
  for (const std::string& path : opt.models) {
    engine::SessionParams params;
    params.n_ctx = opt.n_ctx;
    params.n_threads = opt.threads;
    params.kv_type = opt.kv_type;
    params.backend = opt.backend;
    params.n_ubatch = opt.n_ubatch;
    const auto session = engine::Session::create(path, params);
    const ModelInfo info = describe_model(session->model(), path);
    for (const BenchTest& t : tests) report->add(info, run_test(*session, t, opt, context.bandwidth_gbs));
  }
  report->finish();
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions opt;
  std::string format = "md", kv_type = "f16";
  CLI::App app{"engine-bench: prompt-processing (ppN) and generation (tgN) throughput, as llama-bench measures it"};
  app.add_option("-m,--model", opt.models, "GGUF model files (comma-separated)")->required()->delimiter(',');
  app.add_option("-p,--n-prompt", opt.n_prompt, "prompt sizes to time (comma-separated)")
      ->delimiter(',')
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  app.add_option("-n,--n-gen", opt.n_gen, "generated token counts to time (comma-separated)")
      ->delimiter(',')
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  app.add_option("-d,--depth", opt.depths, "KV cache depths for the tg tests (comma-separated)")
      ->delimiter(',')
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 24));
  app.add_option("-t,--threads", opt.threads, "threads (0: all hardware threads)")->check(CLI::Range(0, 1024));
  app.add_option("-r,--repetitions", opt.reps, "timed repetitions of each test")->check(CLI::Range(1, 100000));
  app.add_option("--backend", opt.backend, "backend")->check(CLI::IsMember({"cpu"}));
  app.add_option("--kv-type", kv_type, "KV cache type")->check(CLI::IsMember({"f16", "f32"}));
  app.add_option("-c,--ctx", opt.n_ctx, "context size (0: the model's, at most 4096)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 24));
  app.add_option("-b,--ubatch", opt.n_ubatch, "prompt tokens per step")->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
  app.add_option("-o,--output", format, "md | csv | json")->check(CLI::IsMember({"md", "csv", "json"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::fprintf(stderr, "engine-bench: error: %s\n", e.what());
    return 1;
  }
  opt.kv_type = *engine::dtype_from_name(kv_type);
  if (opt.threads == 0) opt.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  spdlog::set_level(spdlog::level::warn);
  try {
    run(opt, format);
  } catch (const std::exception& e) {
    std::cout.flush();
    std::fprintf(stderr, "engine-bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
