#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

#include "bench.h"
#include "cost/cost.h"
#include "cost/roofline.h"
#include "engine/arch.h"
#include "engine/error.h"

std::string BenchTest::name() const {
  const std::string base = fmt::format("{}{}", kind == Kind::kPrompt ? "pp" : "tg", n_tokens);
  return depth > 0 ? fmt::format("{} @ d{}", base, depth) : base;
}

int64_t BenchTest::positions() const {
  return (kind == Kind::kPrompt ? depth : std::max<int64_t>(depth, 1)) + n_tokens;
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
    if (n > 0)
      for (int64_t d : opt.depths) tests.push_back({BenchTest::Kind::kPrompt, n, d});
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
    if (test.depth > 0) session.prefill(random_tokens(test.depth));
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

// A step of the session's model by the default cost model on `hw`: its predicted seconds, and
// the bytes it reads and writes. (The cost's nodes point into the step graph: predicted here.)
struct StepPrediction {
  double seconds, bytes;
};
StepPrediction predict_step(const engine::Session& session, engine::DType kv_type, const cost::HardwareProfile& hw,
                            int64_t n_tokens, int64_t n_past) {
  engine::KVCache kv(session.model().hparams(), session.n_ctx(), kv_type);
  const engine::StepGraph step = engine::build_step_graph(session.model(), kv, engine::StepShape{n_tokens, n_past, 1});
  const cost::GraphCost graph_cost = cost::analyze(*step.graph, cost::CostModel::kDefault);
  return {cost::predict(graph_cost, hw).total_s, graph_cost.total.bytes()};
}

// The test's predicted seconds: a prompt as the session runs it, in steps of n_ubatch tokens after its depth;
// decode as n_tokens times the step halfway through (whose bytes also go to `decode_bytes`).
double predicted_seconds(const engine::Session& session, const BenchTest& test, engine::DType kv_type,
                         const cost::HardwareProfile& hw, double& decode_bytes) {
  if (test.kind == BenchTest::Kind::kPrompt) {
    double seconds = 0;
    for (int64_t done = 0; done < test.n_tokens; done += session.params().n_ubatch)
      seconds += predict_step(session, kv_type, hw, std::min(session.params().n_ubatch, test.n_tokens - done), test.depth + done).seconds;
    return seconds;
  }
  const StepPrediction step = predict_step(session, kv_type, hw, 1, std::max<int64_t>(test.depth, 1) + test.n_tokens / 2);
  decode_bytes = step.bytes;
  return step.seconds * static_cast<double>(test.n_tokens);
}

}  // namespace

TestResult run_test(engine::Session& session, const BenchTest& test, const BenchOptions& opt, const cost::HardwareProfile& hw,
                    const BandwidthProbe& probe) {
  if (test.positions() > session.n_ctx())
    throw engine::Error(fmt::format("{} needs {} context positions but the context holds {} (see -c)", test.name(),
                                    test.positions(), session.n_ctx()));
  std::mt19937 rng(1234);
  time_once(session, test, rng);  // warm-up: page in the weights, settle the thread pool
  TestResult r;
  r.test = test;
  std::optional<double> read_before = probe ? probe() : std::nullopt;
  for (int i = 0; i < opt.reps; ++i) {
    r.samples_ts.push_back(static_cast<double>(test.n_tokens) / time_once(session, test, rng));
    const std::optional<double> read_after = read_before ? probe() : std::nullopt;
    if (read_after) r.samples_bandwidth_gbs.push_back((*read_before + *read_after) / 2);
    read_before = read_after;
  }
  const double n = static_cast<double>(r.samples_ts.size());
  r.mean_ts = std::accumulate(r.samples_ts.begin(), r.samples_ts.end(), 0.0) / n;
  if (r.samples_ts.size() > 1) {
    double sq = 0;
    for (double v : r.samples_ts) sq += (v - r.mean_ts) * (v - r.mean_ts);
    r.stddev_ts = std::sqrt(sq / (n - 1));
  }
  r.predicted_ts = static_cast<double>(test.n_tokens) / predicted_seconds(session, test, opt.kv_type, hw, r.step_bytes);
  r.bandwidth_gbs = hw.mem_bw_gbs;
  if (r.samples_bandwidth_gbs.size() == r.samples_ts.size())
    r.bandwidth_gbs = std::accumulate(r.samples_bandwidth_gbs.begin(), r.samples_bandwidth_gbs.end(), 0.0) / n;
  else
    r.samples_bandwidth_gbs.clear();  // a probe refused midway: the profile's bandwidth for every repetition
  return r;
}
