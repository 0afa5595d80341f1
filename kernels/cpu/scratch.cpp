#include "cpu/scratch.h"

#include <algorithm>

#include "cpu/attention.h"
#include "cpu/kernels.h"

namespace engine::cpu {

size_t scratch_bytes(const Graph& graph, const Plan& plan, int n_threads) {
  const auto& nodes = graph.nodes();
  size_t bytes = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (fuses_attention(nodes, i, plan)) {
      bytes = std::max(bytes, fused_attention_work_size(nodes[i]));
      i += 2;
    } else if (nodes[i]->op == Op::MUL_MAT) {
      bytes = std::max(bytes, mul_mat_work_size(nodes[i], n_threads));
    }
  }
  return bytes;
}

}  // namespace engine::cpu
