#pragma once
// Roofline prediction: each node takes as long as the slower of its arithmetic at the
// hardware's peak rate for its compute class and its memory traffic at full bandwidth, plus
// the profile's fixed cost per op (launch, dispatch, thread sync). No overlap between nodes.
#include <cstdint>
#include <vector>

#include "cost/cost.h"
#include "cost/hardware.h"

namespace cost {

// MUL_MAT takes the class of its weight (src0) dtype: quantized -> int8, f16 -> f16,
// bf16 -> bf16, else f32. Every other op is f32.
ComputeClass compute_class(const engine::Tensor& node);

struct NodePrediction {
  double flops = 0;      // every arithmetic metric (all but read and write), summed
  double bytes = 0;      // read + write
  double compute_s = 0;  // flops / peak rate of the node's class
  double memory_s = 0;   // bytes / bandwidth
  double overhead_s = 0;  // the profile's fixed cost of an op (views have none)
  double time_s = 0;     // max(compute_s, memory_s) + overhead_s
  bool memory_bound = false;  // memory_s > compute_s
};

struct Prediction {
  std::vector<NodePrediction> nodes;  // parallel to GraphCost::nodes
  double total_s = 0;    // sum of node times
  double compute_s = 0;  // sum of node compute times
  double memory_s = 0;   // sum of node memory times
  double overhead_s = 0; // sum of node fixed costs
};

// The share of a node's counted work (the dense products and softmax the graph describes)
// that kernels skipping what a causal mask hides compute: for attention's products of two or
// more queries a head, and for their softmax, the positions up to each query over all the
// positions read; 1 for every other node.
double causal_work_share(const engine::Tensor& node);
// The bytes of `counts` (node's) that such kernels move: the reads at that share, and the
// writes too for q.k, whose outputs past a query are never written (the softmax writes zeros
// there, the values' product every output).
double causal_work_bytes(const engine::Tensor& node, const Counts& counts);

// View nodes (RESHAPE, VIEW, PERMUTE, TRANSPOSE) cost nothing. Where hw.attention_skips_masked,
// a node's arithmetic takes causal_work_share of its count and its memory causal_work_bytes.
// Throws engine::Error when a rate the graph needs is not positive.
Prediction predict(const GraphCost& cost, const HardwareProfile& hw);

// Tokens per second when one graph evaluation processes `n_tokens` tokens in
// prediction.total_s. Throws engine::Error when either is not positive.
double tokens_per_second(const Prediction& prediction, int64_t n_tokens);

}  // namespace cost
