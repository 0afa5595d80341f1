#pragma once
// Which of a graph's nodes the CPU backend runs together, found once when the graph is allocated:
// - a causal attention's kq, softmax and kqv as one fused pass (attention.h);
// - decode's products that multiply the same activation column (a layer's Q, K and V; its gate
//   and up) as one pool job at the first of them (mul_mat_column_group): one wake-up and join,
//   and one conversion of the column a thread, instead of one each. A step pays several
//   microseconds at every product's start and end, more than a quarter of the smallest
//   products' time (docs/benchmarks.md).
// The graph is unchanged: the plan keeps such products live from the first of them
// (Plan::first_siblings), and a later one runs early only where its output lies on bytes no node
// in between reads or writes.
#include <cstddef>
#include <vector>

#include "engine/graph.h"
#include "engine/plan.h"

namespace engine::cpu {

struct Schedule {
  std::vector<bool> fused;                  // by node: a fused attention starts here
  std::vector<std::vector<size_t>> groups;  // by node: the product group run here, this node first
  std::vector<bool> grouped;                // by node: runs in an earlier node's group
};

Schedule schedule(const std::vector<Tensor*>& nodes, const Plan& plan, int nth);

}  // namespace engine::cpu
