// Roofline prediction from a graph's static cost and a hardware profile.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "cost/roofline.h"
#include "engine/error.h"
#include "engine/op_params.h"

namespace cost {
namespace {

void require_positive(double rate, const std::string& what, const HardwareProfile& hw) {
  if (!(rate > 0)) throw engine::Error("hardware profile '" + hw.name + "' has no positive " + what);
}

double rate_of(const std::map<engine::DType, double>& rates, engine::DType type, double otherwise) {
  const auto it = rates.find(type);
  return it == rates.end() ? otherwise : it->second;
}

// The arithmetic time of a product of `weight` by `columns` activation columns, `flops` and
// `bytes` in all. From kShortPrompt columns on: at the calibrated short-prompt rate there, the
// long-prompt rate from kLongPrompt on, in between at a rate interpolated in log(columns). Below
// kShortPrompt, where kernels run a few columns at a time: the time the calibration measured at
// that column count where it did, else a time per column going geometrically from a decode
// step's (the weight at the calibrated bandwidth) to the short prompt's. Uncalibrated dtypes
// take the class peak.
double product_compute_s(const HardwareProfile& hw, const engine::Tensor& weight, int64_t columns, double flops,
                         double bytes, double peak) {
  using P = HardwareProfile;
  const double long_rate = rate_of(hw.mul_mat_tflops, weight.type, peak) * 1e12;
  const double short_rate = rate_of(hw.mul_mat_short_tflops, weight.type, long_rate / 1e12) * 1e12;
  const double n = static_cast<double>(columns);
  if (columns >= P::kLongPrompt) return flops / long_rate;
  if (columns >= P::kShortPrompt) {
    const double at = std::log(n / P::kShortPrompt) / std::log(static_cast<double>(P::kLongPrompt) / P::kShortPrompt);
    return flops / (short_rate + at * (long_rate - short_rate));
  }
  if (const auto table = hw.mul_mat_columns_gbs.find(weight.type); table != hw.mul_mat_columns_gbs.end())
    if (const auto measured = table->second.find(columns); measured != table->second.end())
      return bytes / (measured->second * 1e9);
  const auto gbs = hw.mul_mat_gbs.find(weight.type);
  if (gbs == hw.mul_mat_gbs.end() || !hw.mul_mat_short_tflops.contains(weight.type)) return flops / short_rate;
  const double decode_column_s = static_cast<double>(weight.nbytes()) / (gbs->second * 1e9);
  const double prompt_column_s = flops / n / short_rate;
  const double at = std::log(n) / std::log(static_cast<double>(P::kShortPrompt));
  return n * std::pow(decode_column_s, 1 - at) * std::pow(prompt_column_s, at);
}

// The arithmetic rate, TFLOP/s, of attention's products of `cache` (the KV cache's dtype) for
// `queries` queries a head over `positions` cached ones: the calibrated long-prompt rate (else
// `otherwise`) from kLongPrompt queries on; below, a rate geometric in log(queries) between the
// decode step's and that one. The decode step's is geometric in log(positions) between its
// rates after kLongPrompt and after kDeepContext positions, the nearer of them beyond.
double attention_tflops(const HardwareProfile& hw, engine::DType cache, int64_t queries, int64_t positions, double otherwise) {
  using P = HardwareProfile;
  const double long_rate = rate_of(hw.attention_tflops, cache, otherwise);
  const auto decode = hw.attention_decode_tflops.find(cache);
  if (decode == hw.attention_decode_tflops.end() || queries >= P::kLongPrompt) return long_rate;
  double decode_rate = decode->second;
  if (const auto deep = hw.attention_decode_deep_tflops.find(cache); deep != hw.attention_decode_deep_tflops.end()) {
    const double depth = std::log(static_cast<double>(std::max<int64_t>(1, positions)) / P::kLongPrompt) /
                         std::log(static_cast<double>(P::kDeepContext) / P::kLongPrompt);
    const double at = std::clamp(depth, 0.0, 1.0);
    decode_rate = std::pow(decode_rate, 1 - at) * std::pow(deep->second, at);
  }
  const double at = std::log(static_cast<double>(std::max<int64_t>(1, queries))) / std::log(static_cast<double>(P::kLongPrompt));
  return std::pow(decode_rate, 1 - at) * std::pow(long_rate, at);
}

// The cached positions a product of the KV cache reads: q.k's rows, or the span (k) of the
// values' product.
int64_t kv_positions(const engine::Tensor& product) {
  const engine::Tensor& cache = *product.src[0];
  return engine::mul_mat_params(product).kv_span ? cache.ne[0] : cache.ne[1];
}

}  // namespace

double causal_work_share(const engine::Tensor& node) {
  const bool softmax = node.op == engine::Op::SOFT_MAX;
  const engine::Tensor* product = softmax ? node.src[0] : &node;
  if (!product || product->op != engine::Op::MUL_MAT || !engine::mul_mat_params(*product).causal) return 1;
  const int64_t queries = product->ne[1], positions = kv_positions(*product);
  if ((!softmax && queries < 2) || positions < 1) return 1;  // one query a head runs the whole span
  // Query c reads positions 0 .. past + c: (past + (queries + 1) / 2) positions on average.
  const double read = static_cast<double>(engine::mul_mat_params(*product).causal_past) + (static_cast<double>(queries) + 1) / 2;
  return std::min(1.0, read / static_cast<double>(positions));
}

double causal_work_bytes(const engine::Tensor& node, const Counts& counts) {
  const double share = causal_work_share(node);
  const bool keys = node.op == engine::Op::MUL_MAT && !engine::mul_mat_params(node).kv_span;
  return counts.get(Metric::kRead) * share + counts.get(Metric::kWrite) * (keys ? share : 1);
}

ComputeClass compute_class(const engine::Tensor& node) {
  if (!engine::is_mat_mul(node.op) || !node.src[0]) return ComputeClass::kF32;
  const engine::DType weight = node.src[0]->type;
  if (engine::dtype_info(weight).quantized) return ComputeClass::kInt8;
  if (weight == engine::DType::F16) return ComputeClass::kF16;
  if (weight == engine::DType::BF16) return ComputeClass::kBF16;
  return ComputeClass::kF32;
}

Prediction predict(const GraphCost& cost, const HardwareProfile& hw) {
  require_positive(hw.mem_bw_gbs, "memory bandwidth", hw);
  Prediction out;
  out.nodes.reserve(cost.nodes.size());
  for (const NodeCost& nc : cost.nodes) {
    NodePrediction& np = out.nodes.emplace_back();
    if (engine::op_info(nc.node->op).is_view) continue;  // aliases storage: nothing runs
    const ComputeClass cls = compute_class(*nc.node);
    np.flops = nc.counts.arithmetic();
    np.bytes = nc.counts.bytes();
    // A product runs at the rates the backend's kernels for its src0 dtype were calibrated at: a
    // weight's by its column count, the KV cache's (attention, batched per head) at attention's
    // rate for its queries a head (dim 1), or else the long-prompt rate of its dtype; the
    // experts' product at the rates of its dtype (it reads only the chosen experts, so not the
    // whole tensor a weight's column reads).
    const bool experts = nc.node->op == engine::Op::MUL_MAT_ID;
    const engine::Tensor* a = engine::is_mat_mul(nc.node->op) ? nc.node->src[0] : nullptr;
    if (np.flops > 0) {
      const double peak = hw.peak_tflops(cls);
      const double product_rate = rate_of(hw.mul_mat_tflops, a ? a->type : engine::DType::F32, peak);
      const double rate = experts ? product_rate
                          : a     ? attention_tflops(hw, a->type, nc.node->ne[1], kv_positions(*nc.node), product_rate)
                                  : peak;
      require_positive(rate, std::string(compute_class_name(cls)) + " peak rate", hw);
      np.compute_s = a && a->has(engine::kWeight) && !experts ? product_compute_s(hw, *a, nc.node->nrows(), np.flops, np.bytes, peak)
                                                   : np.flops / (rate * 1e12);
    }
    const auto op_rate = hw.op_gbs.find(nc.node->op);
    const double gbs = a                              ? rate_of(hw.mul_mat_gbs, a->type, hw.mem_bw_gbs)
                       : op_rate != hw.op_gbs.end() ? op_rate->second
                                                    : hw.mem_bw_gbs;
    np.memory_s = np.bytes / (gbs * 1e9);
    if (nc.node->op != engine::Op::NONE) np.overhead_s = hw.op_overhead_us * 1e-6;
    if (hw.attention_skips_masked) {
      np.compute_s *= causal_work_share(*nc.node);
      np.memory_s *= np.bytes > 0 ? causal_work_bytes(*nc.node, nc.counts) / np.bytes : 1;
    }
    np.time_s = std::max(np.compute_s, np.memory_s) + np.overhead_s;
    np.memory_bound = np.memory_s > np.compute_s;
    out.total_s += np.time_s;
    out.compute_s += np.compute_s;
    out.memory_s += np.memory_s;
    out.overhead_s += np.overhead_s;
  }
  return out;
}

double tokens_per_second(const Prediction& prediction, int64_t n_tokens) {
  if (n_tokens <= 0) throw engine::Error("tokens per second needs a positive token count, got " + std::to_string(n_tokens));
  if (!(prediction.total_s > 0)) throw engine::Error("tokens per second needs a positive predicted time");
  return static_cast<double>(n_tokens) / prediction.total_s;
}

}  // namespace cost
