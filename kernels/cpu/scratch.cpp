#include "cpu/scratch.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "cpu/attention.h"
#include "cpu/kernels.h"
#include "cpu/node_threads.h"
#include "engine/error.h"

namespace engine::cpu {

void require_work(const ComputeParams& p, size_t bytes, const Tensor* node) {
  if (bytes == 0) return;
  if (!p.wdata || p.wsize < bytes)
    throw Error(std::string(op_name(node->op)) + " '" + node->name + "': scratch buffer too small (" + std::to_string(p.wsize) +
                " bytes, needs " + std::to_string(bytes) + ")");
  if (reinterpret_cast<uintptr_t>(p.wdata) % kWorkAlign != 0)
    throw Error(std::string(op_name(node->op)) + " '" + node->name + "': scratch buffer not " + std::to_string(kWorkAlign) +
                "-byte aligned");
}

size_t node_work_size(const Tensor* node, int nth) {
  switch (node->op) {
    case Op::MUL_MAT: return mul_mat_work_size(node, nth);
    case Op::SOFT_MAX: return soft_max_work_size(node, nth);
    case Op::ROPE: return rope_work_size(node, nth);
    default: return 0;
  }
}

size_t scratch_bytes(const Graph& graph, const Plan& plan, int n_threads) {
  const auto& nodes = graph.nodes();
  size_t bytes = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (fuses_attention(nodes, i, plan)) {
      bytes = std::max(bytes, fused_attention_work_size(nodes[i], nodes[i + 2], n_threads));
      i += 2;
    } else {
      bytes = std::max(bytes, node_work_size(nodes[i], node_threads(nodes[i], n_threads)));
    }
  }
  return bytes;
}

}  // namespace engine::cpu
