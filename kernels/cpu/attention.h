#pragma once
// Attention fused, in causal prefill per (head, block of queries), in decode per K / V head: the
// kq MUL_MAT, its SOFT_MAX and the kqv MUL_MAT computed together, bit for bit as the three nodes
// compute them (attention.cpp).
#include <atomic>
#include <cstdint>
#include <vector>

#include "cpu/kernels.h"
#include "engine/plan.h"

namespace engine::cpu {

// Nanoseconds the threads spent on each node's share of the work (q.k, softmax, V product),
// by which a profile splits the fused run's time among the three nodes.
struct AttentionTimes {
  std::atomic<int64_t> ns[3]{};
  void add(const int64_t (&part)[3]) {
    for (int i = 0; i < 3; ++i) ns[i] += part[i];
  }
};

// True when kq -> soft_max -> kqv is a causal prefill attention, or one token's attention with
// 2 to 64 query heads on each K / V head and at least nth such heads, that the fused pass on nth
// threads reproduces, the plan having put kqv over none of its inputs (outputs are written while
// they are read). The caller checks that nothing else reads kq or soft_max: the pass does not
// write them.
bool fused_attention_fits(const Tensor* kq, const Tensor* soft_max, const Tensor* kqv, const Plan& plan, int nth);
// True when nodes i, i + 1, i + 2 are such an attention and nothing else reads its scores or
// probabilities, nor takes them as outputs: the backend then runs the fused pass there.
bool fuses_attention(const std::vector<Tensor*>& nodes, size_t i, const Plan& plan, int nth);
// Work memory bytes the fused pass needs with nth threads (ComputeParams::wdata): the queries in
// the dot format of K, and per thread the scores and probabilities of one block of queries
// (prefill) or of its K / V heads' query heads (decode).
size_t fused_attention_work_size(const Tensor* kq, const Tensor* kqv, int nth);
// Thread p.ith's share of kqv; all p.nth threads take part (they meet at p.barrier once).
void fused_attention(const ComputeParams& p, Tensor* kq, const Tensor* soft_max, Tensor* kqv, AttentionTimes& times);

}  // namespace engine::cpu
