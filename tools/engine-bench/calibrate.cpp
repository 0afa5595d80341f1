// engine-bench --calibrate: the rates this backend's own matrix products reach over a prompt,
// per weight dtype, timed op by op on one-layer models synthesized for it and loaded as any
// model is (so the packed layouts the backend makes of them are what runs).
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "bench.h"
#include "cost/cost.h"
#include "engine/arch.h"
#include "engine/error.h"
#include "engine/synth.h"

namespace {

constexpr int64_t kPrompt = 256;  // tokens a calibration prompt has: one step
constexpr int kRuns = 3;

// The weight dtypes the engine reads, each calibrated.
constexpr engine::DType kWeightTypes[] = {
    engine::DType::F32,  engine::DType::F16,  engine::DType::BF16, engine::DType::Q4_0, engine::DType::Q4_1,
    engine::DType::Q5_0, engine::DType::Q5_1, engine::DType::Q8_0, engine::DType::Q2_K, engine::DType::Q3_K,
    engine::DType::Q4_K, engine::DType::Q5_K, engine::DType::Q6_K};

// One layer whose products take long enough to time: 1024 x 1024 attention and 1024 x 2816
// feed-forward matrices (whole K-quant super-blocks).
engine::SynthSpec calibration_model(engine::DType type) {
  engine::SynthSpec spec;
  spec.n_embd = 1024;
  spec.n_layer = 1;
  spec.n_head = 8;
  spec.n_head_kv = 8;
  spec.n_ff = 2816;
  spec.type = type;
  return spec;
}

// The rate of the `type` products of the session's profiled steps.
double timed_rate(const engine::Session& session, const engine::KVCache& kv, engine::DType type) {
  const std::vector<engine::OpTiming>& records = session.profiler().records();
  double flops = 0, seconds = 0;
  for (const engine::StepRecord& rec : session.steps()) {
    const engine::StepGraph step = engine::build_step_graph(session.model(), kv, rec.shape);
    // The arithmetic the cost model counts for a product (dequantization included), so that
    // its predictions divide by the rate the same counts ran at.
    const cost::GraphCost step_cost = cost::analyze(*step.graph, cost::CostModel::kDefault);
    for (size_t i = 0; i < step_cost.nodes.size() && i < rec.n_records; ++i) {
      const engine::Tensor* n = step_cost.nodes[i].node;
      if (n->op != engine::Op::MUL_MAT || !n->src[0]->has(engine::kWeight) || n->src[0]->type != type) continue;
      flops += step_cost.nodes[i].counts.arithmetic();
      seconds += static_cast<double>(records[rec.first_record + i].ns) * 1e-9;
    }
  }
  if (!(flops > 0 && seconds > 0))
    throw engine::Error(fmt::format("calibration: no timed {} product", engine::dtype_name(type)));
  return flops / seconds / 1e12;
}

// TFLOP/s of the products of `type` weights over a kPrompt-token prompt: the best of
// kRuns after a warm-up (on a shared machine a run can lose its cores for a while).
double product_tflops(const BenchOptions& opt, engine::DType type) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     fmt::format("engine-calibrate-{}-{}.gguf", getpid(), engine::dtype_name(type));
  engine::write_synthetic_model(calibration_model(type), path.string());
  engine::SessionParams params;
  params.n_ctx = kPrompt;
  params.n_ubatch = kPrompt;
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
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(session->n_vocab() - 1));
  std::vector<int32_t> tokens(kPrompt);
  for (int32_t& t : tokens) t = pick(rng);
  session->prefill(tokens);  // warm-up
  const engine::KVCache kv(session->model().hparams(), session->n_ctx(), opt.kv_type);
  double best = 0;
  for (int run = 0; run < kRuns; ++run) {
    session->reset();
    session->clear_profile();
    session->prefill(tokens);
    best = std::max(best, timed_rate(*session, kv, type));
  }
  return best;
}

}  // namespace

void calibrate_products(cost::HardwareProfile& profile, const BenchOptions& opt) {
  for (engine::DType type : kWeightTypes) profile.mul_mat_tflops[type] = product_tflops(opt, type);
}
