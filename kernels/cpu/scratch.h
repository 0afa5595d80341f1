#pragma once
// The CPU backend's work memory outside the plan: activations converted to a weight's dot
// format for MUL_MAT, the queries of the fused attention pass. One buffer, sized for the
// largest need of a graph and reused by every node.
#include <cstddef>

#include "engine/graph.h"
#include "engine/plan.h"

namespace engine::cpu {

// Bytes that buffer needs for `graph`, placed by `plan`, run by `n_threads` threads.
size_t scratch_bytes(const Graph& graph, const Plan& plan, int n_threads);

}  // namespace engine::cpu
