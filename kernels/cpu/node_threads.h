#pragma once
// How many of the pool's threads run a node: the backend's node loop runs it on them, and the
// scratch is sized for that many threads' slices (scratch.h).
#include <algorithm>
#include <cstdint>

#include "engine/tensor.h"

namespace engine::cpu {

// Below this many elements a non-matmul node runs on one thread: waking workers costs more.
constexpr int64_t kMinParallelElements = 4096;

inline int node_threads(const Tensor* node, int pool_threads) {
  if (is_mat_mul(node->op)) return pool_threads;
  // Many one-element rows (a transposed V store) cost a cache miss each, not their size.
  const bool scattered = node->ne[0] == 1 && node->nrows() >= kMinParallelElements / 16;
  if (node->nelements() < kMinParallelElements && !scattered) return 1;
  return static_cast<int>(std::min<int64_t>(pool_threads, node->nrows()));
}

}  // namespace engine::cpu
