#pragma once
// Static cost of a graph: for every node the arithmetic it performs, the bytes it reads
// and writes, and the intermediate bytes live while it runs. It walks the very graph a
// backend executes and never touches tensor data.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/graph.h"

namespace cost {

enum class Metric { kFmul, kFadd, kFdiv, kFexp, kFsin, kSqrt, kFpow, kRead, kWrite };
std::string_view metric_name(Metric m);  // "fmul", ..., "read", "write"

// Counts in the order a formula states them (the trace prints them in that order).
class Counts {
 public:
  void add(Metric m, double v);  // adds to an existing entry, else appends (zero is ignored)
  double get(Metric m) const;
  double arithmetic() const;  // every metric but read and write, summed
  double bytes() const;       // read + write
  const std::vector<std::pair<Metric, double>>& items() const { return items_; }
  Counts& operator+=(const Counts& other);

 private:
  std::vector<std::pair<Metric, double>> items_;
};

enum class CostModel {
  kDefault,  // every op reads and writes its operands; a multiply-add is one fmul and one fadd
  kSeed,     // the seed analyzer's numbers, quirks included (docs/cost-model.md lists them)
};
CostModel cost_model_from_name(std::string_view name);  // "default" | "seed"; throws engine::Error

struct NodeCost {
  const engine::Tensor* node;
  Counts counts;
  double tempsize;  // intermediate bytes live while the node runs
};

struct GraphCost {
  CostModel model;
  std::vector<NodeCost> nodes;  // in graph order
  Counts total;                 // metrics in order of first appearance
  double max_tempsize = 0;
  // Sums by transformer layer (-1: outside blocks) and by op name, in order of appearance.
  std::vector<std::pair<int, Counts>> by_layer;
  std::vector<std::pair<std::string, Counts>> by_op;
};

GraphCost analyze(const engine::Graph& graph, CostModel model);

// The costs one op incurs under `model` (without tempsize). `already_read` lists constant
// tensors whose bytes were counted earlier in the graph (the seed model pays them once).
Counts op_cost(const engine::Tensor& node, CostModel model, std::unordered_set<const engine::Tensor*>& already_read);

// Bytes of a tensor's elements laid out densely (a view's logical size).
double dense_bytes(const engine::Tensor& t);
// Constant tensors: leaves (weights, inputs, KV storage) and views of leaves.
bool is_constant(const engine::Tensor& t);

}  // namespace cost
