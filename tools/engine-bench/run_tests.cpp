#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

#include "bench.h"
#include "cost/cost.h"
#include "engine/arch.h"
#include "engine/error.h"

std::string BenchTest::name() const {
  const std::string base = fmt::format("{}{}", kind == Kind::kPrompt ? "pp" : "tg", n_tokens);
  return depth > 0 ? fmt::format("{} @ d{}", base, depth) : base;
}

int64_t BenchTest::positions() const {
  return kind == Kind::kPrompt ? n_tokens : std::max<int64_t>(depth, 1) + n_tokens;
}

std::vector<BenchTest> bench_tests(const BenchOptions& opt) {
  std::vector<BenchTest> tests;
  if (opt.sweeping()) {
    for (int64_t n : opt.sweep_pp) tests.push_back({BenchTest::Kind::kPrompt, n, 0, true});
    const int64_t n_gen = std::max<int64_t>(1, opt.n_gen.front());
    for (int64_t d : opt.sweep_tg) tests.push_back({BenchTest::Kind::kGen, n_gen, d, true});
    return tests;
  }
  // A size of 0 times nothing, as llama-bench's -p 0 / -n 0.
  for (int64_t n : opt.n_prompt)
    if (n > 0) tests.push_back({BenchTest::Kind::kPrompt, n, 0});
  for (int64_t n : opt.n_gen)
    if (n > 0)
      for (int64_t d : opt.depths) tests.push_back({BenchTest::Kind::kGen, n, d});
  return tests;
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Seconds of the timed part of one run, from a fresh session state; token ids are random
// (the speed of a step does not depend on them).
double time_once(engine::Session& session, const BenchTest& test, std::mt19937& rng) {
  std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(session.n_vocab() - 1));
  auto random_tokens = [&](int64_t n) {
    std::vector<int32_t> tokens(static_cast<size_t>(n));
    for (int32_t& t : tokens) t = pick(rng);
    return tokens;
  };
  session.reset();
  if (test.kind == BenchTest::Kind::kPrompt) {
    const std::vector<int32_t> prompt = random_tokens(test.n_tokens);
    const auto t0 = Clock::now();
    session.prefill(prompt);
    return seconds_since(t0);
  }
  session.prefill(random_tokens(std::max<int64_t>(test.depth, 1)));
  const std::vector<int32_t> next = random_tokens(test.n_tokens);
  const auto t0 = Clock::now();
  for (int32_t t : next) session.decode(t);
  return seconds_since(t0);
}

// Bytes the decode step halfway through the test reads and writes, by the default cost model.
double decode_step_bytes(const engine::Session& session, const BenchTest& test, engine::DType kv_type) {
  engine::KVCache kv(session.model().hparams(), session.n_ctx(), kv_type);
  const int64_t n_past = std::max<int64_t>(test.depth, 1) + test.n_tokens / 2;
  const engine::StepGraph step = engine::build_step_graph(session.model(), kv, engine::StepShape{1, n_past, 1});
  return cost::analyze(*step.graph, cost::CostModel::kDefault).total.bytes();
}

}  // namespace

TestResult run_test(engine::Session& session, const BenchTest& test, const BenchOptions& opt, double bandwidth_gbs) {
  if (test.positions() > session.n_ctx())
    throw engine::Error(fmt::format("{} needs {} context positions but the context holds {} (see -c)", test.name(),
                                    test.positions(), session.n_ctx()));
  std::mt19937 rng(1234);
  time_once(session, test, rng);  // warm-up: page in the weights, settle the thread pool
  TestResult r;
  r.test = test;
  for (int i = 0; i < opt.reps; ++i)
    r.samples_ts.push_back(static_cast<double>(test.n_tokens) / time_once(session, test, rng));
  const double n = static_cast<double>(r.samples_ts.size());
  r.mean_ts = std::accumulate(r.samples_ts.begin(), r.samples_ts.end(), 0.0) / n;
  if (r.samples_ts.size() > 1) {
    double sq = 0;
    for (double v : r.samples_ts) sq += (v - r.mean_ts) * (v - r.mean_ts);
    r.stddev_ts = std::sqrt(sq / (n - 1));
  }
  if (test.kind == BenchTest::Kind::kGen) {
    r.step_bytes = decode_step_bytes(session, test, opt.kv_type);
    r.roofline_fraction = r.step_bytes * r.mean_ts / (bandwidth_gbs * 1e9);
  }
  return r;
}
