// Roofline prediction from a graph's static cost and a hardware profile.
#include <algorithm>
#include <map>
#include <string>

#include "cost/roofline.h"
#include "engine/error.h"

namespace cost {
namespace {

void require_positive(double rate, const std::string& what, const HardwareProfile& hw) {
  if (!(rate > 0)) throw engine::Error("hardware profile '" + hw.name + "' has no positive " + what);
}

}  // namespace

ComputeClass compute_class(const engine::Tensor& node) {
  if (node.op != engine::Op::MUL_MAT || !node.src[0]) return ComputeClass::kF32;
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
    // A product's weight dtype picks the rates its kernels were calibrated at, where known.
    const bool product = nc.node->op == engine::Op::MUL_MAT && nc.node->src[0];
    const auto rate_of = [&](const std::map<engine::DType, double>& rates, double otherwise) {
      if (!product) return otherwise;
      const auto it = rates.find(nc.node->src[0]->type);
      return it == rates.end() ? otherwise : it->second;
    };
    if (np.flops > 0) {
      const double rate = rate_of(hw.mul_mat_tflops, hw.peak_tflops(cls));
      require_positive(rate, std::string(compute_class_name(cls)) + " peak rate", hw);
      np.compute_s = np.flops / (rate * 1e12);
    }
    np.memory_s = np.bytes / (rate_of(hw.mul_mat_gbs, hw.mem_bw_gbs) * 1e9);
    if (nc.node->op != engine::Op::NONE) np.overhead_s = hw.op_overhead_us * 1e-6;
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
