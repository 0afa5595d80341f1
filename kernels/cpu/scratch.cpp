#include "cpu/scratch.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cpu/attention.h"
#include "cpu/kernels.h"
#include "cpu/node_threads.h"
#include "cpu/repack.h"
#include "cpu/vec_dot.h"
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

size_t node_work_size(const Tensor* node, int nth, bool weight_packed) {
  switch (node->op) {
    case Op::MUL_MAT: return mul_mat_work_size(node, nth, weight_packed);
    case Op::SOFT_MAX: return soft_max_work_size(node, nth);
    case Op::ROPE: return rope_work_size(node, nth);
    case Op::MUL_MAT_ID: return mul_mat_id_work_size(node, nth, weight_packed);
    default: return 0;
  }
}

size_t scratch_bytes(const Graph& graph, const Schedule& together, int n_threads, const std::function<bool(const Tensor&)>& packed) {
  const auto& nodes = graph.nodes();
  size_t bytes = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Tensor* node = nodes[i];
    if (together.fused[i]) {
      bytes = std::max(bytes, fused_attention_work_size(node, nodes[i + 2], n_threads));
      i += 2;
    } else if (!together.groups[i].empty()) {
      std::vector<ColumnProduct> products;
      for (size_t m : together.groups[i]) products.push_back({nodes[m], packed(*nodes[m]->src[0])});
      bytes = std::max(bytes, mul_mat_column_group_work_size(products, n_threads));
    } else if (!together.grouped[i]) {
      const bool weight_packed = is_mat_mul(node->op) && packed(*node->src[0]);
      bytes = std::max(bytes, node_work_size(node, node_threads(node, n_threads), weight_packed));
    }
  }
  return bytes;
}

size_t scratch_bytes(const Graph& graph, const Plan& plan, int n_threads) {
  std::vector<Tensor*> to_pack;
  if (simd_active()) to_pack = weights_to_pack(graph, [](const Tensor&) { return false; });
  return scratch_bytes(graph, schedule(graph.nodes(), plan, n_threads), n_threads,
                       [&](const Tensor& w) { return std::find(to_pack.begin(), to_pack.end(), &w) != to_pack.end(); });
}

}  // namespace engine::cpu
