#include "cpu/schedule.h"

#include <algorithm>

#include "cpu/attention.h"
#include "cpu/kernels.h"

namespace engine::cpu {
namespace {

// Whether computing `early` before nodes[from, to) changes nothing they see: none of them reads
// or writes the bytes the plan gives its output.
bool runs_early_over(const Tensor* early, const std::vector<Tensor*>& nodes, size_t from, size_t to, const Plan& plan) {
  for (size_t k = from; k < to; ++k) {
    if (plan.overlap(early, nodes[k])) return false;
    for (const Tensor* s : nodes[k]->src)
      if (s && plan.overlap(early, s)) return false;
  }
  return true;
}

// nodes[i] and the later products of its chain (first[j] == i, Plan::first_siblings) that the
// column group kernel runs with it; empty where none does.
std::vector<size_t> product_group(const std::vector<Tensor*>& nodes, size_t i, const Plan& plan, const std::vector<size_t>& first) {
  if (nodes[i]->op != Op::MUL_MAT || first[i] != i) return {};
  std::vector<size_t> group{i};
  for (size_t j = i + 1, last = i; j < nodes.size() && j <= last + Plan::kSiblingWindow; ++j) {
    if (first[j] != i) continue;
    last = j;
    if (mul_mat_joins_column_group(nodes[i], nodes[j]) && runs_early_over(nodes[j], nodes, i, j, plan)) group.push_back(j);
  }
  return group.size() > 1 ? group : std::vector<size_t>{};
}

}  // namespace

Schedule schedule(const std::vector<Tensor*>& nodes, const Plan& plan, int nth) {
  Schedule s{std::vector<bool>(nodes.size(), false), std::vector<std::vector<size_t>>(nodes.size()),
             std::vector<bool>(nodes.size(), false)};
  const std::vector<size_t> first = Plan::first_siblings(nodes);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (s.grouped[i]) continue;
    if (fuses_attention(nodes, i, plan, nth)) {
      s.fused[i] = true;
      i += 2;
      continue;
    }
    s.groups[i] = product_group(nodes, i, plan, first);
    for (size_t j = 1; j < s.groups[i].size(); ++j) s.grouped[s.groups[i][j]] = true;
  }
  return s;
}

}  // namespace engine::cpu
