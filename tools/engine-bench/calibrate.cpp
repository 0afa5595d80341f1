// engine-bench --calibrate: the rates this backend's own kernels reach, timed op by op on models
// synthesized for it and loaded as any model is (so the packed layouts the backend makes of them
// are what runs): its matrix products' arithmetic over a long and a short prompt and bandwidth
// over decode steps and prompts of 2 to 15 tokens whose weights are far beyond the last-level
// cache, per weight dtype; its attention's arithmetic over a long prompt and in decode steps
// after a long and a deep context; its other ops' bandwidth over a long prompt, per op.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <random>

#include "bench.h"
#include "cost/cost.h"
#include "cost/hardware.h"
#include "cost/roofline.h"
#include "engine/arch.h"
#include "engine/error.h"
#include "engine/synth.h"

namespace {

constexpr int64_t kDecodeSteps = 16;
constexpr double kDecodeWeightBytes = 256.0 * (1 << 20);  // beyond a GPU's last-level cache
constexpr int kRuns = 5;
constexpr int kColumnRuns = 3;  // 14 prompts a dtype over weights beyond the cache: the longest part

// The weight dtypes the engine reads, each calibrated.
constexpr engine::DType kWeightTypes[] = {
    engine::DType::F32,  engine::DType::F16,  engine::DType::BF16, engine::DType::Q4_0, engine::DType::Q4_1,
    engine::DType::Q5_0, engine::DType::Q5_1, engine::DType::Q8_0, engine::DType::Q2_K, engine::DType::Q3_K,
    engine::DType::Q4_K, engine::DType::Q5_K, engine::DType::Q6_K};

// Layers of a 1B model's shape (2048 x 2048 attention, 2048 x 5632 feed-forward matrices),
// whose rows repeat a few drawn ones: quick to synthesize at any size, and timed the same.
engine::SynthSpec calibration_model(engine::DType type, int64_t n_layer) {
  engine::SynthSpec spec;
  spec.n_embd = 2048;
  spec.n_head = 32;  // 64-dimension heads, four to a KV head
  spec.n_head_kv = 8;
  spec.n_ff = 5632;
  spec.type = type;
  spec.n_layer = n_layer;
  spec.distinct_rows = 64;
  return spec;
}

// The decode steps' weights, beyond the last-level cache of the memory they stream from: on the
// CPU backend the host's, as far as the read probe reads (a shared host's cache of 480 MiB served
// part of 256 MiB, whose decode products read 10-20 % faster than the same at 1 GiB). Lavapipe's
// kernels run far below memory's rate, where the cache makes no difference.
double decode_weight_bytes(const BenchOptions& opt) {
  return opt.backend == "cpu" ? std::max(kDecodeWeightBytes, static_cast<double>(cost::read_probe_bytes())) : kDecodeWeightBytes;
}

// Layers enough for `bytes` of `type` weights, and two at least.
int64_t decode_layers(engine::DType type, double bytes) {
  const engine::SynthSpec s = calibration_model(type, 1);
  const int64_t n_embd_kv = s.n_embd / s.n_head * s.n_head_kv;
  const double layer_bytes =
      static_cast<double>(engine::row_bytes(type, s.n_embd)) * static_cast<double>(2 * s.n_embd + 2 * n_embd_kv + 2 * s.n_ff) +
      static_cast<double>(engine::row_bytes(type, s.n_ff)) * static_cast<double>(s.n_embd);
  return std::max<int64_t>(2, static_cast<int64_t>(std::ceil(bytes / layer_bytes)));
}

// A profiling session of opt's backend and device on the model `spec`, whose file is gone once loaded.
std::unique_ptr<engine::Session> calibration_session(const BenchOptions& opt, const engine::SynthSpec& spec,
                                                     int64_t n_ctx) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     fmt::format("engine-calibrate-{}-{}.gguf", getpid(), engine::dtype_name(spec.type));
  engine::write_synthetic_model(spec, path.string());
  engine::SessionParams params;
  params.n_ctx = n_ctx;
  params.n_ubatch = std::min(n_ctx, cost::HardwareProfile::kLongPrompt);
  params.n_threads = opt.threads;
  params.backend = opt.backend;
  params.device = opt.device;
  params.kv_type = opt.kv_type;
  params.profile = true;
  std::unique_ptr<engine::Session> session;
  try {
    session = engine::Session::create(path.string(), params);
  } catch (...) {
    std::filesystem::remove(path);
    throw;
  }
  std::filesystem::remove(path);
  return session;
}

std::vector<int32_t> random_tokens(const engine::Session& session, int64_t n) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(session.n_vocab() - 1));
  std::vector<int32_t> tokens(static_cast<size_t>(n));
  for (int32_t& t : tokens) t = pick(rng);
  return tokens;
}

// Calls visit(node, its cost, its profiled seconds) for every node the session's profiled steps
// ran outside the last layer (whose feed-forward takes only the rows whose logits are wanted, one
// column of a prompt) and outside the layers (embedding, output): the arithmetic and bytes the
// cost model counts (dequantization included, so that predictions divide by rates the same
// counts ran at) beside the profiler's time.
template <typename Visit>
void visit_timed_layer_nodes(const engine::Session& session, Visit visit) {
  const engine::KVCache kv(session.model().hparams(), session.n_ctx(), session.params().kv_type);
  const std::vector<engine::OpTiming>& records = session.profiler().records();
  for (const engine::StepRecord& rec : session.steps()) {
    const engine::StepGraph step = engine::build_step_graph(session.model(), kv, rec.shape);
    const cost::GraphCost step_cost = cost::analyze(*step.graph, cost::CostModel::kDefault);
    for (size_t i = 0; i < step_cost.nodes.size() && i < rec.n_records; ++i) {
      const engine::Tensor& n = *step_cost.nodes[i].node;
      if (n.layer < 0 || n.layer + 1 >= session.model().hparams().n_layer) continue;
      visit(n, step_cost.nodes[i].counts, static_cast<double>(records[rec.first_record + i].ns) * 1e-9);
    }
  }
}

struct Timed {
  double flops = 0, bytes = 0, seconds = 0;
};

// The seconds of a profiled node that are its work: less the fixed cost of an op as the profiler
// times it, which the roofline adds back.
double work_seconds(const cost::HardwareProfile& profile, double profiled_seconds) {
  return profiled_seconds - profile.timed_op_overhead_us() * 1e-6;
}

// The products of `type` weights the session timed, summed.
Timed timed_products(const engine::Session& session, const cost::HardwareProfile& profile, engine::DType type) {
  Timed out;
  visit_timed_layer_nodes(session, [&](const engine::Tensor& n, const cost::Counts& c, double s) {
    if (n.op != engine::Op::MUL_MAT || !n.src[0]->has(engine::kWeight) || n.src[0]->type != type) return;
    out.flops += c.arithmetic();
    out.bytes += c.bytes();
    out.seconds += work_seconds(profile, s);
  });
  if (!(out.flops > 0 && out.seconds > 0))
    throw engine::Error(fmt::format("calibration: no timed {} product", engine::dtype_name(type)));
  return out;
}

double median(std::vector<double> rates) {
  std::nth_element(rates.begin(), rates.begin() + static_cast<ptrdiff_t>(rates.size() / 2), rates.end());
  return rates[rates.size() / 2];
}

// The median of each rate `score` gives `runs` runs of `work` after a warm-up: what a typical run
// reaches, as the benchmarks' means are, and not one run that lost its cores.
template <typename Key, typename Work, typename Score>
std::map<Key, double> median_rates(engine::Session& session, Work work, Score score, int runs = kRuns) {
  std::map<Key, std::vector<double>> rates_of;
  for (int run = -1; run < runs; ++run) {  // run -1: the warm-up
    session.reset();
    session.clear_profile();
    work();
    if (run < 0) continue;
    for (const auto& [key, rate] : std::map<Key, double>(score(session))) rates_of[key].push_back(rate);
  }
  std::map<Key, double> medians;
  for (auto& [key, rates] : rates_of) medians[key] = median(std::move(rates));
  return medians;
}

// The median rate of `type` products over `runs` runs of `work`.
template <typename Work, typename Rate>
double median_product_rate(engine::Session& session, const cost::HardwareProfile& profile, engine::DType type, Work work,
                           Rate rate, int runs = kRuns) {
  return median_rates<int>(session, work, [&](const engine::Session& s) {
    return std::map<int, double>{{0, rate(timed_products(s, profile, type))}};
  }, runs).at(0);
}

// The arithmetic and bytes of n's counts that the backend's kernels do (all but where they skip
// what a causal mask hides): the rates are of that work, as the roofline divides it.
double work_arithmetic(const cost::HardwareProfile& profile, const engine::Tensor& n, const cost::Counts& c) {
  return c.arithmetic() * (profile.attention_skips_masked ? cost::causal_work_share(n) : 1.0);
}
double work_bytes(const cost::HardwareProfile& profile, const engine::Tensor& n, const cost::Counts& c) {
  return profile.attention_skips_masked ? cost::causal_work_bytes(n, c) : c.bytes();
}

// Over a long prompt: the arithmetic rate of attention's products (the KV cache's, in whatever
// kernel the backend runs them), and the bandwidth each op other than the products reaches:
// its nodes' bytes over their time less the fixed cost of an op the profile already counts.
void calibrate_attention_and_ops(cost::HardwareProfile& profile, const BenchOptions& opt) {
  using Profile = cost::HardwareProfile;
  const auto session = calibration_session(opt, calibration_model(engine::DType::Q4_0, 2), Profile::kLongPrompt);
  const std::vector<int32_t> tokens = random_tokens(*session, Profile::kLongPrompt);
  profile.attention_skips_masked = session->backend().skips_masked_attention();
  // Keyed by op; MUL_MAT's are attention's products, in TFLOP/s.
  std::map<engine::Op, double> rates = median_rates<engine::Op>(*session, [&] { session->prefill(tokens); }, [&](const engine::Session& s) {
    std::map<engine::Op, Timed> per_op;
    visit_timed_layer_nodes(s, [&](const engine::Tensor& n, const cost::Counts& c, double seconds) {
      if (n.op == engine::Op::NONE || engine::op_info(n.op).is_view) return;
      if (n.op == engine::Op::MUL_MAT && n.src[0]->has(engine::kWeight)) return;
      Timed& t = per_op[n.op];
      t.flops += work_arithmetic(profile, n, c);
      t.bytes += work_bytes(profile, n, c);
      t.seconds += work_seconds(profile, seconds);
    });
    std::map<engine::Op, double> out;
    for (const auto& [op, t] : per_op) {
      if (!(t.seconds > 0)) continue;  // a node another's kernel computes (a fused softmax)
      out[op] = op == engine::Op::MUL_MAT ? t.flops / t.seconds / 1e12 : t.bytes / t.seconds / 1e9;
    }
    return out;
  });
  if (const auto attention = rates.find(engine::Op::MUL_MAT); attention != rates.end()) {
    profile.attention_tflops[session->params().kv_type] = attention->second;
    rates.erase(attention);
  }
  profile.op_gbs = rates;
}

// Attention's products in decode steps (one query a head, whose kernels may run far below the
// prompt's rate) after kLongPrompt and after kDeepContext cached positions, between steps whose
// weights stream beyond the last-level cache as a real model's do: a layer's K and V come back
// from memory, not from the cache they were left in. The prompt runs once; each run is a few
// steps on from where the last ended.
void calibrate_decode_attention(cost::HardwareProfile& profile, const BenchOptions& opt) {
  using Profile = cost::HardwareProfile;
  constexpr int64_t kSteps = 4;
  const engine::DType weights = engine::DType::Q4_0;
  const int64_t n_ctx = Profile::kDeepContext + (kRuns + 1) * kSteps;
  const auto session = calibration_session(opt, calibration_model(weights, decode_layers(weights, decode_weight_bytes(opt))), n_ctx);
  const std::vector<int32_t> tokens = random_tokens(*session, n_ctx);
  const auto rate_after = [&](int64_t positions) {
    const auto next = [&] { return tokens[static_cast<size_t>(session->n_past())]; };
    session->prefill(std::span(tokens).subspan(static_cast<size_t>(session->n_past()),
                                               static_cast<size_t>(positions - session->n_past())));
    std::vector<double> rates;
    for (int run = -1; run < kRuns; ++run) {  // run -1: the warm-up
      session->clear_profile();
      for (int64_t i = 0; i < kSteps; ++i) session->decode(next());
      if (run < 0) continue;
      Timed t;
      visit_timed_layer_nodes(*session, [&](const engine::Tensor& n, const cost::Counts& c, double seconds) {
        if (n.op != engine::Op::MUL_MAT || n.src[0]->has(engine::kWeight)) return;
        t.flops += work_arithmetic(profile, n, c);
        t.seconds += work_seconds(profile, seconds);
      });
      if (!(t.flops > 0 && t.seconds > 0)) throw engine::Error("calibration: no timed attention product in a decode step");
      rates.push_back(t.flops / t.seconds / 1e12);
    }
    return median(std::move(rates));
  };
  const engine::DType cache = session->params().kv_type;
  profile.attention_decode_tflops[cache] = rate_after(Profile::kLongPrompt);
  profile.attention_decode_deep_tflops[cache] = rate_after(Profile::kDeepContext);
}

}  // namespace

std::vector<engine::DType> calibration_types(const std::vector<std::string>& names) {
  if (names.empty()) return {std::begin(kWeightTypes), std::end(kWeightTypes)};
  std::vector<engine::DType> types;
  for (const std::string& name : names) {
    const std::optional<engine::DType> type = engine::dtype_from_name(name);
    if (!type || std::find(std::begin(kWeightTypes), std::end(kWeightTypes), *type) == std::end(kWeightTypes)) {
      std::string known;
      for (engine::DType t : kWeightTypes) known += (known.empty() ? "" : ", ") + std::string(engine::dtype_name(t));
      throw engine::Error(fmt::format("'{}' is not a weight dtype ({})", name, known));
    }
    if (std::find(types.begin(), types.end(), *type) == types.end()) types.push_back(*type);
  }
  return types;
}

void calibrate_kernels(cost::HardwareProfile& profile, const BenchOptions& opt) {
  calibrate_attention_and_ops(profile, opt);
  calibrate_decode_attention(profile, opt);
  for (engine::DType type : opt.calibrate_types) {
    {
      // Prompts of the lengths the profile's rates are for, each one step.
      using Profile = cost::HardwareProfile;
      const auto session = calibration_session(opt, calibration_model(type, 2), Profile::kLongPrompt);
      const std::vector<int32_t> tokens = random_tokens(*session, Profile::kLongPrompt);
      const auto tflops = [](const Timed& t) { return t.flops / t.seconds / 1e12; };
      const auto prompt_rate = [&](int64_t n) {
        return median_product_rate(*session, profile, type, [&] { session->prefill(std::span(tokens).first(static_cast<size_t>(n))); }, tflops);
      };
      profile.mul_mat_tflops[type] = prompt_rate(Profile::kLongPrompt);
      profile.mul_mat_short_tflops[type] = prompt_rate(Profile::kShortPrompt);
    }
    // Over larger weights fewer steps, so that a run reads as much as kDecodeSteps over kDecodeWeightBytes.
    const double weight_bytes = decode_weight_bytes(opt);
    const int64_t steps = std::max<int64_t>(4, std::lround(kDecodeSteps * kDecodeWeightBytes / weight_bytes));
    const int64_t n_tokens = std::max(steps + 1, cost::HardwareProfile::kShortPrompt);
    const auto session = calibration_session(opt, calibration_model(type, decode_layers(type, weight_bytes)), n_tokens);
    const std::vector<int32_t> tokens = random_tokens(*session, n_tokens);
    const auto gbs = [](const Timed& t) { return t.bytes / t.seconds / 1e9; };
    profile.mul_mat_gbs[type] = median_product_rate(
        *session, profile, type,
        [&] {
          session->prefill(std::span(tokens).first(1));
          for (int64_t i = 1; i <= steps; ++i) session->decode(tokens[static_cast<size_t>(i)]);
        },
        gbs);
    // Prompts of every column count below the short prompt's, on the same weights.
    for (int64_t n = 2; n < cost::HardwareProfile::kShortPrompt; ++n)
      profile.mul_mat_columns_gbs[type][n] =
          median_product_rate(*session, profile, type, [&] { session->prefill(std::span(tokens).first(static_cast<size_t>(n))); }, gbs, kColumnRuns);
  }
}
