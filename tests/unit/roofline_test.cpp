// Hardware profiles (builtin datasheets and the cpu-local probe) and roofline prediction.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "cost/roofline.h"
#include "engine/error.h"
#include "engine/op_params.h"

using namespace engine;
using cost::ComputeClass;

namespace {

const cost::HardwareProfile& h100() {
  static const cost::HardwareProfile p = cost::hardware_profile("h100-sxm", 1);
  return p;
}

// A graph of one matrix product: weight [k, m] of `weight_type` times f32 activations [k, n].
struct MatMulGraph {
  Graph g;
  Tensor* product;
  MatMulGraph(DType weight_type, int64_t k, int64_t m, int64_t n) {
    Tensor* w = g.new_tensor_2d(weight_type, k, m, "w");
    w->flags |= kWeight;
    Tensor* x = g.new_tensor_2d(DType::F32, k, n, "x");
    product = g.mul_mat(w, x);
    g.expand(product);
  }
};

// Expected roofline of that product under the default cost model, from the formula.
struct Expected {
  double compute_s, memory_s;
};
Expected roofline(DType weight_type, int64_t k, int64_t m, int64_t n, double peak_tflops, double bw_gbs) {
  const double flops = 2.0 * k * m * n;  // one fmul and one fadd per multiply-add
  const double bytes = static_cast<double>(row_bytes(weight_type, k)) * m + 4.0 * k * n + 4.0 * m * n;
  return {flops / (peak_tflops * 1e12), bytes / (bw_gbs * 1e9)};
}

}  // namespace

TEST(Hardware, EveryBuiltinProfileParsesWithPositiveFigures) {
  const auto& profiles = cost::builtin_profiles();
  std::vector<std::string> names;
  for (const auto& p : profiles) {
    names.push_back(p.name);
    EXPECT_FALSE(p.description.empty()) << p.name;
    EXPECT_GT(p.mem_bw_gbs, 0) << p.name;
    EXPECT_GT(p.mem_gb, 0) << p.name;
    for (ComputeClass c : {ComputeClass::kF32, ComputeClass::kF16, ComputeClass::kBF16, ComputeClass::kInt8})
      EXPECT_GT(p.peak_tflops(c), 0) << p.name << " " << cost::compute_class_name(c);
  }
  const std::vector<std::string> expected = {"a100-80gb", "apple-m2-max", "h100-pcie", "h100-sxm", "h200-sxm", "rtx-3090", "rtx-4090"};
  EXPECT_EQ(names, expected);
}

TEST(Hardware, NamedProfileCarriesItsDatasheetFigures) {
  EXPECT_EQ(h100().name, "h100-sxm");
  EXPECT_DOUBLE_EQ(h100().mem_bw_gbs, 3350);
  EXPECT_DOUBLE_EQ(h100().peak_tflops_f32, 67);
  EXPECT_DOUBLE_EQ(h100().peak_tflops(ComputeClass::kInt8), 1979);
  EXPECT_DOUBLE_EQ(h100().mem_gb, 80);
}

TEST(Hardware, UnknownNameErrorListsTheKnownNames) {
  try {
    cost::hardware_profile("tpu-v9", 1);
    FAIL() << "no error for an unknown profile";
  } catch (const engine::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("tpu-v9"), std::string::npos) << what;
    EXPECT_NE(what.find("cpu-local"), std::string::npos) << what;
    for (const auto& p : cost::builtin_profiles()) EXPECT_NE(what.find(p.name), std::string::npos) << what;
  }
}

// One thread: two spinning workers on a machine whose cores other processes share lose whole
// timeslices at each join, a millisecond an op, which is the machine's state and not the probe's.
TEST(Hardware, CpuLocalMeasuresPlausibleRates) {
  const cost::HardwareProfile p = cost::hardware_profile("cpu-local", 1);
  EXPECT_EQ(p.name, "cpu-local");
  EXPECT_GT(p.mem_bw_gbs, 0.1);
  EXPECT_GT(p.peak_tflops_f32, 0.001);
  EXPECT_GE(p.peak_tflops_f16, p.peak_tflops_f32);
  EXPECT_GE(p.peak_tflops_bf16, p.peak_tflops_f32);
  EXPECT_GE(p.peak_tflops_int8, p.peak_tflops_f32);
  EXPECT_GT(p.mem_gb, 0);
  EXPECT_GT(p.op_overhead_us, 0) << "a multiply's dispatch costs something";
  EXPECT_LT(p.op_overhead_us, 1000) << "and not a millisecond";
  EXPECT_GT(p.profiled_op_overhead_us, 0) << "a timed multiply's dispatch too";
  EXPECT_LT(p.profiled_op_overhead_us, 1000);
  EXPECT_NE(p.description.find("1 thread"), std::string::npos) << p.description;
}

TEST(Hardware, DevicesFindTheirProfileByTheNameTheirDriverReports) {
  DeviceInfo gpu{"vulkan", 0, "NVIDIA H100 80GB HBM3", 0, 0, "nvidia", "discrete-gpu", 32};
  EXPECT_EQ(cost::hardware_name_for(gpu), "h100-sxm");
  gpu.name = "Some Future GPU";
  EXPECT_THROW(cost::hardware_name_for(gpu), engine::Error) << "no profile names it";
  const DeviceInfo lavapipe{"vulkan", 0, "llvmpipe (LLVM 15.0.6, 256 bits)", 0, 0, "llvmpipe", "software", 8};
  EXPECT_EQ(cost::hardware_name_for(lavapipe), "cpu-local") << "a software driver runs on the host";
  EXPECT_EQ(cost::hardware_name_for(DeviceInfo{"cpu", 0, "AMD EPYC", 0, 0, "avx512", "cpu", 0}), "cpu-local");
}

TEST(Hardware, CpuLocalRejectsZeroThreads) { EXPECT_THROW(cost::measure_local_cpu(0), engine::Error); }

TEST(Roofline, MatMulClassFollowsTheWeightType) {
  EXPECT_EQ(cost::compute_class(*MatMulGraph(DType::Q4_0, 64, 8, 1).product), ComputeClass::kInt8);
  EXPECT_EQ(cost::compute_class(*MatMulGraph(DType::Q6_K, 256, 8, 1).product), ComputeClass::kInt8);
  EXPECT_EQ(cost::compute_class(*MatMulGraph(DType::F16, 64, 8, 1).product), ComputeClass::kF16);
  EXPECT_EQ(cost::compute_class(*MatMulGraph(DType::BF16, 64, 8, 1).product), ComputeClass::kBF16);
  EXPECT_EQ(cost::compute_class(*MatMulGraph(DType::F32, 64, 8, 1).product), ComputeClass::kF32);
  Graph g;
  Tensor* a = g.new_tensor_1d(DType::F32, 8);
  EXPECT_EQ(cost::compute_class(*g.add(a, a)), ComputeClass::kF32);
}

TEST(Roofline, SingleTokenQuantizedMatMulIsMemoryBound) {
  MatMulGraph m(DType::Q4_0, 256, 512, 1);
  const auto p = cost::predict(cost::analyze(m.g, cost::CostModel::kDefault), h100());
  const Expected e = roofline(DType::Q4_0, 256, 512, 1, 1979, 3350);
  ASSERT_EQ(p.nodes.size(), 1u);
  EXPECT_DOUBLE_EQ(p.nodes[0].flops, 2.0 * 256 * 512);
  EXPECT_DOUBLE_EQ(p.nodes[0].compute_s, e.compute_s);
  EXPECT_DOUBLE_EQ(p.nodes[0].memory_s, e.memory_s);
  EXPECT_DOUBLE_EQ(p.nodes[0].time_s, e.memory_s);
  EXPECT_TRUE(p.nodes[0].memory_bound);
  EXPECT_DOUBLE_EQ(p.total_s, e.memory_s);
}

// A q4_0 [256, 512] weight stays memory-bound at any batch on h100-sxm (intensity under
// 2*512*256 / (4*(256+512)) = 85 op/byte, int8 ridge 1979e12/3350e9 = 591), so the
// compute-bound case needs a larger weight.
TEST(Roofline, LargeBatchQuantizedMatMulIsComputeBound) {
  MatMulGraph m(DType::Q4_0, 4096, 4096, 4096);
  const auto p = cost::predict(cost::analyze(m.g, cost::CostModel::kDefault), h100());
  const Expected e = roofline(DType::Q4_0, 4096, 4096, 4096, 1979, 3350);
  ASSERT_EQ(p.nodes.size(), 1u);
  EXPECT_DOUBLE_EQ(p.nodes[0].compute_s, e.compute_s);
  EXPECT_DOUBLE_EQ(p.nodes[0].memory_s, e.memory_s);
  EXPECT_DOUBLE_EQ(p.nodes[0].time_s, e.compute_s);
  EXPECT_FALSE(p.nodes[0].memory_bound);
}

// The same shapes as the single-token case, batched, are compute-bound at the f32 rate.
TEST(Roofline, LargeBatchF32MatMulIsComputeBound) {
  MatMulGraph m(DType::F32, 256, 512, 4096);
  const auto p = cost::predict(cost::analyze(m.g, cost::CostModel::kDefault), h100());
  const Expected e = roofline(DType::F32, 256, 512, 4096, 67, 3350);
  ASSERT_EQ(p.nodes.size(), 1u);
  EXPECT_DOUBLE_EQ(p.nodes[0].time_s, e.compute_s);
  EXPECT_DOUBLE_EQ(p.nodes[0].memory_s, e.memory_s);
  EXPECT_FALSE(p.nodes[0].memory_bound);
}

TEST(Roofline, ViewNodesCostNothingAndTotalsSumTheNodes) {
  Graph g;
  Tensor* w = g.new_tensor_2d(DType::F16, 64, 32, "w");
  Tensor* x = g.new_tensor_2d(DType::F32, 64, 4, "x");
  Tensor* y = g.reshape_2d(g.mul_mat(w, x), 16, 8);
  Tensor* z = g.scale(y, 0.5f);
  g.expand(z);
  const auto p = cost::predict(cost::analyze(g, cost::CostModel::kDefault), h100());
  ASSERT_EQ(p.nodes.size(), 3u);
  EXPECT_GT(p.nodes[0].time_s, 0);
  EXPECT_EQ(p.nodes[1].time_s, 0);
  EXPECT_EQ(p.nodes[1].bytes, 0);
  EXPECT_GT(p.nodes[2].time_s, 0);
  EXPECT_DOUBLE_EQ(p.total_s, p.nodes[0].time_s + p.nodes[2].time_s);
  EXPECT_DOUBLE_EQ(p.memory_s, p.nodes[0].memory_s + p.nodes[2].memory_s);
  EXPECT_DOUBLE_EQ(p.compute_s, p.nodes[0].compute_s + p.nodes[2].compute_s);
}

TEST(Roofline, TokensPerSecondDividesTokensByTime) {
  cost::Prediction p;
  p.total_s = 0.25;
  EXPECT_DOUBLE_EQ(cost::tokens_per_second(p, 1), 4);
  EXPECT_DOUBLE_EQ(cost::tokens_per_second(p, 8), 32);
  EXPECT_THROW(cost::tokens_per_second(p, 0), engine::Error);
  p.total_s = 0;
  EXPECT_THROW(cost::tokens_per_second(p, 1), engine::Error);
}

TEST(Roofline, ProfileWithoutBandwidthIsRejected) {
  MatMulGraph m(DType::F32, 64, 8, 1);
  cost::HardwareProfile empty;
  empty.name = "empty";
  EXPECT_THROW(cost::predict(cost::analyze(m.g, cost::CostModel::kDefault), empty), engine::Error);
}

TEST(Roofline, EachOpPaysTheProfilesFixedCostViewsNone) {
  Graph g;
  Tensor* x = g.new_tensor_2d(DType::F32, 64, 8, "x");
  Tensor* y = g.scale(g.add(x, x), 2.0f);
  Tensor* viewed = g.reshape_2d(y, 512, 1);
  g.expand(g.scale(viewed, 0.5f));  // three computing nodes and a view
  cost::HardwareProfile hw = h100();
  const cost::GraphCost c = cost::analyze(g, cost::CostModel::kDefault);
  const cost::Prediction without = cost::predict(c, hw);
  hw.op_overhead_us = 5;
  const cost::Prediction with = cost::predict(c, hw);
  EXPECT_NEAR(with.overhead_s, 3 * 5e-6, 1e-12);
  EXPECT_NEAR(with.total_s - without.total_s, 3 * 5e-6, 1e-12);
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    const bool view = op_info(c.nodes[i].node->op).is_view;
    EXPECT_DOUBLE_EQ(with.nodes[i].overhead_s, view ? 0 : 5e-6) << op_name(c.nodes[i].node->op);
    EXPECT_DOUBLE_EQ(with.nodes[i].time_s, without.nodes[i].time_s + with.nodes[i].overhead_s);
  }
}

// A product of a dtype the profile calibrated runs at that dtype's arithmetic rate and bandwidth;
// other dtypes, and every other op, keep the class peak and the memory bandwidth.
TEST(Roofline, CalibratedDtypesTakeTheirOwnRates) {
  MatMulGraph q4(DType::Q4_0, 256, 512, 1), q8(DType::Q8_0, 256, 512, 1);
  cost::HardwareProfile hw = h100();
  hw.mul_mat_tflops[DType::Q4_0] = 0.5;
  hw.mul_mat_gbs[DType::Q4_0] = 20;
  const cost::GraphCost q4_cost = cost::analyze(q4.g, cost::CostModel::kDefault);
  const cost::NodePrediction calibrated = cost::predict(q4_cost, hw).nodes[0];
  EXPECT_DOUBLE_EQ(calibrated.compute_s, q4_cost.nodes[0].counts.arithmetic() / 0.5e12);
  EXPECT_DOUBLE_EQ(calibrated.memory_s, q4_cost.nodes[0].counts.bytes() / 20e9);
  const cost::NodePrediction datasheet = cost::predict(cost::analyze(q8.g, cost::CostModel::kDefault), hw).nodes[0];
  const Expected e = roofline(DType::Q8_0, 256, 512, 1, 1979, 3350);
  EXPECT_DOUBLE_EQ(datasheet.compute_s, e.compute_s);
  EXPECT_DOUBLE_EQ(datasheet.memory_s, e.memory_s);

  Graph g;
  Tensor* x = g.new_tensor_2d(DType::F32, 64, 8, "x");
  Tensor* keys = g.new_tensor_2d(DType::Q4_0, 64, 8, "not a weight");
  g.expand(g.add(x, x));
  g.expand(g.mul_mat(keys, x));
  const cost::GraphCost add_cost = cost::analyze(g, cost::CostModel::kDefault);
  EXPECT_DOUBLE_EQ(cost::predict(add_cost, hw).nodes[0].memory_s, add_cost.nodes[0].counts.bytes() / 3350e9);
  // A product of no weight (attention reads the KV cache) takes its dtype's rates, whatever its columns.
  const cost::NodePrediction attention = cost::predict(add_cost, hw).nodes[1];
  EXPECT_DOUBLE_EQ(attention.memory_s, add_cost.nodes[1].counts.bytes() / 20e9);
  EXPECT_DOUBLE_EQ(attention.compute_s, add_cost.nodes[1].counts.arithmetic() / 0.5e12);

  // Attention's own rate, where calibrated, beats its dtype's product rate.
  hw.attention_tflops[DType::Q4_0] = 0.25;
  EXPECT_DOUBLE_EQ(cost::predict(add_cost, hw).nodes[1].compute_s, add_cost.nodes[1].counts.arithmetic() / 0.25e12);
  EXPECT_DOUBLE_EQ(cost::predict(q4_cost, hw).nodes[0].compute_s, calibrated.compute_s) << "a weight's product keeps its";

  // An op the profile has a bandwidth for moves its bytes at it; a product's dtype rate beats it.
  hw.op_gbs[Op::ADD] = 2;
  hw.op_gbs[Op::MUL_MAT] = 1;
  const cost::Prediction with_ops = cost::predict(add_cost, hw);
  EXPECT_DOUBLE_EQ(with_ops.nodes[0].memory_s, add_cost.nodes[0].counts.bytes() / 2e9);
  EXPECT_DOUBLE_EQ(with_ops.nodes[1].memory_s, add_cost.nodes[1].counts.bytes() / 20e9);
}

// Attention's products take the decode rate at one query a head, the long-prompt rate from
// kLongPrompt queries, and in between a rate geometric in log(queries).
TEST(Roofline, AttentionRateFollowsItsQueries) {
  cost::HardwareProfile hw = h100();
  hw.attention_tflops[DType::F16] = 2.0;
  const auto compute_s = [&](int64_t queries) {
    Graph g;
    const int64_t k_ne[] = {64, 544, 4}, q_ne[] = {64, queries, 4};
    Tensor* keys = g.new_tensor(DType::F16, 3, k_ne, "k cache");
    Tensor* q = g.new_tensor(DType::F32, 3, q_ne, "q");
    g.expand(g.mul_mat(keys, q));
    const cost::GraphCost c = cost::analyze(g, cost::CostModel::kDefault);
    return std::pair{cost::predict(c, hw).nodes[0].compute_s, c.nodes[0].counts.arithmetic()};
  };
  const auto [before, flops] = compute_s(1);
  EXPECT_DOUBLE_EQ(before, flops / 2.0e12) << "no decode rate: the prompt's";
  hw.attention_decode_tflops[DType::F16] = 0.02;
  EXPECT_DOUBLE_EQ(compute_s(1).first, flops / 0.02e12);
  const auto [long_s, long_flops] = compute_s(512);
  EXPECT_DOUBLE_EQ(long_s, long_flops / 2.0e12);
  const auto [mid_s, mid_flops] = compute_s(64);
  const double at = std::log(64.0) / std::log(512.0);
  EXPECT_NEAR(mid_s, mid_flops / (std::pow(0.02, 1 - at) * std::pow(2.0, at) * 1e12), 1e-15);
  EXPECT_GT(mid_s / mid_flops, long_s / long_flops);
  EXPECT_LT(mid_s / mid_flops, compute_s(1).first / flops);
}

// A decode step's attention products take the rate after kLongPrompt cached positions there
// and before, the rate after kDeepContext there and beyond, and in between a rate geometric in
// log(positions): q.k's positions are its rows, the values' product's its span (k).
TEST(Roofline, AttentionDecodeRateFollowsItsDepth) {
  cost::HardwareProfile hw = h100();
  hw.attention_tflops[DType::F16] = 2.0;
  hw.attention_decode_tflops[DType::F16] = 0.02;
  const auto rate = [&](int64_t positions, int64_t queries, bool values) {
    Graph g;
    const int64_t k_ne[] = {64, positions, 4}, v_ne[] = {positions, 64, 4};
    const int64_t q_ne[] = {values ? positions : 64, queries, 4};
    Tensor* cache = g.new_tensor(DType::F16, 3, values ? v_ne : k_ne, "kv cache");
    Tensor* product = g.mul_mat(cache, g.new_tensor(DType::F32, 3, q_ne, "q"));
    if (values) set_mul_mat_params(*product, {.kv_span = true});
    g.expand(product);
    const cost::GraphCost c = cost::analyze(g, cost::CostModel::kDefault);
    return c.nodes.back().counts.arithmetic() / cost::predict(c, hw).nodes.back().compute_s / 1e12;
  };
  EXPECT_NEAR(rate(4096, 1, false), 0.02, 1e-12) << "no deep rate: the one decode rate at every depth";
  hw.attention_decode_deep_tflops[DType::F16] = 0.08;
  for (bool values : {false, true}) {
    EXPECT_NEAR(rate(64, 1, values), 0.02, 1e-12);
    EXPECT_NEAR(rate(512, 1, values), 0.02, 1e-12);
    EXPECT_NEAR(rate(1024, 1, values), 0.04, 1e-12);  // half way in log(positions): the geometric mean
    EXPECT_NEAR(rate(2048, 1, values), 0.08, 1e-12);
    EXPECT_NEAR(rate(8192, 1, values), 0.08, 1e-12);
  }
  const double at = std::log(64.0) / std::log(512.0);
  EXPECT_NEAR(rate(1024, 64, true), std::pow(0.04, 1 - at) * std::pow(2.0, at), 1e-12) << "queries between: from the rate at its depth";
  EXPECT_NEAR(rate(1024, 512, true), 2.0, 1e-12);
}

// Kernels that skip what a causal mask hides do, of attention's dense work, the positions up to
// each query: half a square prompt from position 0, nearly all of a step far past it; a product
// of one query a head reads its whole span, and its softmax skips the masked tail.
TEST(Roofline, CausalWorkShareIsThePositionsUpToEachQuery) {
  const auto nodes = [](int64_t past, int64_t queries, int64_t positions) {
    Graph g;
    const int64_t k_ne[] = {64, positions, 4}, q_ne[] = {64, queries, 4}, v_ne[] = {positions, 64, 4};
    Tensor* kq = g.mul_mat(g.new_tensor(DType::F16, 3, k_ne, "k"), g.new_tensor(DType::F32, 3, q_ne, "q"));
    set_mul_mat_params(*kq, {.kv_span = false, .causal = true, .causal_past = static_cast<int32_t>(past)});
    Tensor* probs = g.soft_max(kq, nullptr, 0.125f);
    Tensor* kqv = g.mul_mat(g.new_tensor(DType::F16, 3, v_ne, "v"), probs);
    set_mul_mat_params(*kqv, {.kv_span = true, .causal = true, .causal_past = static_cast<int32_t>(past)});
    g.expand(kqv);
    return std::tuple{cost::causal_work_share(*kq), cost::causal_work_share(*probs), cost::causal_work_share(*kqv)};
  };
  EXPECT_EQ(nodes(0, 512, 512), std::tuple(256.5 / 512, 256.5 / 512, 256.5 / 512));
  EXPECT_EQ(nodes(1024, 256, 1280), std::tuple(1152.5 / 1280, 1152.5 / 1280, 1152.5 / 1280));
  EXPECT_EQ(nodes(1000, 1, 1024), std::tuple(1.0, 1001.0 / 1024, 1.0));

  Graph g;
  Tensor* w = g.new_tensor_2d(DType::F16, 64, 64, "w");
  w->flags = kWeight;
  Tensor* product = g.mul_mat(w, g.new_tensor_2d(DType::F32, 64, 8, "x"));
  g.expand(product);
  EXPECT_EQ(cost::causal_work_share(*product), 1.0) << "not attention";

  // A profile whose kernels skip takes that share of a node's time, and only then.
  Graph a;
  const int64_t k_ne[] = {64, 512, 4}, q_ne[] = {64, 512, 4};
  Tensor* kq = a.mul_mat(a.new_tensor(DType::F16, 3, k_ne, "k"), a.new_tensor(DType::F32, 3, q_ne, "q"));
  set_mul_mat_params(*kq, {.kv_span = false, .causal = true, .causal_past = 0});
  a.expand(a.soft_max(kq, nullptr, 0.125f));
  const cost::GraphCost c = cost::analyze(a, cost::CostModel::kDefault);
  cost::HardwareProfile hw = h100();
  const cost::Prediction dense = cost::predict(c, hw);
  hw.attention_skips_masked = true;
  const cost::Prediction skipping = cost::predict(c, hw);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_DOUBLE_EQ(skipping.nodes[i].compute_s, dense.nodes[i].compute_s * 256.5 / 512);
    EXPECT_DOUBLE_EQ(skipping.nodes[i].flops, dense.nodes[i].flops) << "the counts stay the graph's";
  }
  // q.k neither reads nor writes past a query; the softmax reads up to it and writes whole rows.
  const cost::Counts& scores = c.nodes[0].counts;
  const cost::Counts& probs = c.nodes[1].counts;
  EXPECT_DOUBLE_EQ(cost::causal_work_bytes(*c.nodes[0].node, scores), scores.bytes() * 256.5 / 512);
  EXPECT_DOUBLE_EQ(cost::causal_work_bytes(*c.nodes[1].node, probs),
                   probs.get(cost::Metric::kRead) * 256.5 / 512 + probs.get(cost::Metric::kWrite));
  EXPECT_DOUBLE_EQ(skipping.nodes[0].memory_s, dense.nodes[0].memory_s * 256.5 / 512);
  EXPECT_DOUBLE_EQ(skipping.nodes[1].memory_s, dense.nodes[1].memory_s * cost::causal_work_bytes(*c.nodes[1].node, probs) / probs.bytes());
  EXPECT_GT(skipping.nodes[1].memory_s, dense.nodes[1].memory_s * 256.5 / 512);
}

// A product's arithmetic rate follows its columns: the short-prompt rate up to 16, the long one
// from 512, in between interpolated in log(columns).
TEST(Roofline, ProductRateFollowsItsColumns) {
  cost::HardwareProfile hw = h100();
  hw.mul_mat_short_tflops[DType::Q4_0] = 0.1;
  hw.mul_mat_tflops[DType::Q4_0] = 0.4;
  const auto rate = [&](int64_t columns) {
    MatMulGraph m(DType::Q4_0, 256, 512, columns);
    const cost::GraphCost c = cost::analyze(m.g, cost::CostModel::kDefault);
    return c.nodes[0].counts.arithmetic() / cost::predict(c, hw).nodes[0].compute_s / 1e12;
  };
  EXPECT_NEAR(rate(4), 0.1, 1e-12);
  EXPECT_NEAR(rate(16), 0.1, 1e-12);
  EXPECT_NEAR(rate(64), 0.1 + 0.3 * 2.0 / 5.0, 1e-12);  // log(64/16) / log(512/16) = 2/5
  EXPECT_NEAR(rate(512), 0.4, 1e-12);
  EXPECT_NEAR(rate(2048), 0.4, 1e-12);

  // Below 16 columns, with the dtype's bandwidth known: the time per column goes geometrically
  // from a decode step's (the weight at that bandwidth) to the 16-column prompt's.
  hw.mul_mat_gbs[DType::Q4_0] = 20;
  const auto compute_s = [&](int64_t columns) {
    MatMulGraph m(DType::Q4_0, 256, 512, columns);
    return cost::predict(cost::analyze(m.g, cost::CostModel::kDefault), hw).nodes[0].compute_s;
  };
  const double decode_column_s = static_cast<double>(row_bytes(DType::Q4_0, 256)) * 512 / 20e9;
  const double prompt_column_s = compute_s(16) / 16;
  EXPECT_NEAR(compute_s(1), decode_column_s, 1e-15);
  EXPECT_NEAR(compute_s(4), 4 * std::sqrt(decode_column_s * prompt_column_s), 1e-15);  // log 4 / log 16 = 1/2
  EXPECT_NEAR(rate(64), 0.1 + 0.3 * 2.0 / 5.0, 1e-12) << "from 16 columns on, as without it";

  // A column count the calibration measured takes that measurement: its bytes at that rate.
  hw.mul_mat_columns_gbs[DType::Q4_0] = {{3, 2.5}, {11, 0.5}};
  for (const int64_t columns : {3, 11}) {
    MatMulGraph m(DType::Q4_0, 256, 512, columns);
    const cost::GraphCost c = cost::analyze(m.g, cost::CostModel::kDefault);
    EXPECT_DOUBLE_EQ(cost::predict(c, hw).nodes[0].compute_s,
                     c.nodes[0].counts.bytes() / (hw.mul_mat_columns_gbs[DType::Q4_0][columns] * 1e9));
  }
  EXPECT_NEAR(compute_s(4), 4 * std::sqrt(decode_column_s * prompt_column_s), 1e-15) << "the others as before";
  EXPECT_NEAR(compute_s(1), decode_column_s, 1e-15);

  hw.mul_mat_short_tflops.clear();
  EXPECT_NEAR(rate(4), 0.4, 1e-12) << "without a short-prompt rate, the long one";
}

// A profile file keeps every calibrated figure through write_profile and hardware_profile.
TEST(Hardware, WrittenProfileReadsBackWithItsCalibratedRates) {
  cost::HardwareProfile p = h100();
  p.name = "h100-sxm-calibrated";
  p.calibrated = "2026-11-25 09:00 UTC";
  p.op_overhead_us = 4.5;
  p.profiled_op_overhead_us = 6.25;
  p.mul_mat_tflops = {{DType::Q4_K, 310.5}, {DType::F16, 640}};
  p.mul_mat_short_tflops = {{DType::Q4_K, 80.5}};
  p.mul_mat_gbs = {{DType::Q4_K, 2800}, {DType::F16, 3010.25}};
  p.op_gbs = {{Op::RMS_NORM, 410.5}, {Op::SOFT_MAX, 96}};
  p.attention_tflops = {{DType::F16, 120.5}};
  p.attention_decode_tflops = {{DType::F16, 0.75}};
  p.attention_decode_deep_tflops = {{DType::F16, 1.25}};
  p.attention_skips_masked = true;
  p.mul_mat_columns_gbs = {{DType::Q4_K, {{2, 1500.5}, {15, 240}}}};
  const std::string path = testing::TempDir() + "written-profile.json";
  {
    std::ofstream out(path);
    cost::write_profile(p, out, "a test");
  }
  const cost::HardwareProfile back = cost::hardware_profile(path, 1);
  EXPECT_EQ(back.name, p.name);
  EXPECT_EQ(back.calibrated, p.calibrated);
  EXPECT_DOUBLE_EQ(back.op_overhead_us, 4.5);
  EXPECT_DOUBLE_EQ(back.profiled_op_overhead_us, 6.25);
  EXPECT_DOUBLE_EQ(back.timed_op_overhead_us(), 6.25);
  EXPECT_EQ(back.mul_mat_tflops, p.mul_mat_tflops);
  EXPECT_EQ(back.mul_mat_short_tflops, p.mul_mat_short_tflops);
  EXPECT_EQ(back.mul_mat_gbs, p.mul_mat_gbs);
  EXPECT_EQ(back.op_gbs, p.op_gbs);
  EXPECT_EQ(back.attention_tflops, p.attention_tflops);
  EXPECT_EQ(back.attention_decode_tflops, p.attention_decode_tflops);
  EXPECT_EQ(back.attention_decode_deep_tflops, p.attention_decode_deep_tflops);
  EXPECT_TRUE(back.attention_skips_masked);
  EXPECT_EQ(back.mul_mat_columns_gbs, p.mul_mat_columns_gbs);
  std::filesystem::remove(path);
}

namespace {

// The profile `p` as written, with the first `from` of its text made `to`.
std::string written_with(const cost::HardwareProfile& p, const std::string& from, const std::string& to) {
  std::ostringstream text;
  cost::write_profile(p, text, "a test");
  std::string s = text.str();
  return s.replace(s.find(from), from.size(), to);
}

// Reading `text` throws engine::Error with `names` in its message.
void expect_refused(const std::string& text, const std::string& names) {
  try {
    cost::parse_profile(text, "profile");
    ADD_FAILURE() << "a profile read: " << text;
  } catch (const engine::Error& e) {
    EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
  }
}

}  // namespace

// A column count outside 2..15 in mul_mat_columns_gbs is refused, naming it.
TEST(Hardware, ProfileNamingAColumnCountPastTheShortPromptIsRefused) {
  cost::HardwareProfile p = h100();
  p.mul_mat_columns_gbs = {{DType::Q4_0, {{15, 10}}}};
  expect_refused(written_with(p, "\"15\"", "\"16\""), "names no column count '16'");
}

// attention_skips_masked is true or false, nothing else.
TEST(Hardware, ProfileWithANonBooleanMaskSkipIsRefused) {
  cost::HardwareProfile p = h100();
  p.attention_skips_masked = true;
  EXPECT_TRUE(cost::parse_profile(written_with(p, "true", "true"), "profile").attention_skips_masked);
  expect_refused(written_with(p, "true", "1"), "'attention_skips_masked' must be true or false");
}

// A profile file naming an op the engine has not is refused, naming it.
TEST(Hardware, ProfileNamingAnUnknownOpIsRefused) {
  const std::string path = testing::TempDir() + "unknown-op-profile.json";
  {
    cost::HardwareProfile p = h100();
    p.op_gbs = {{Op::ADD, 10}};
    std::ostringstream text;
    cost::write_profile(p, text, "a test");
    std::string s = text.str();
    s.replace(s.find("\"ADD\""), 5, "\"FLASH\"");
    std::ofstream(path) << s;
  }
  try {
    cost::hardware_profile(path, 1);
    ADD_FAILURE() << "a profile with an unknown op read";
  } catch (const engine::Error& e) {
    EXPECT_NE(std::string(e.what()).find("names no op 'FLASH'"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}
