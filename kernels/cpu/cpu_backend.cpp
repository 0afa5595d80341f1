// The CPU backend's dispatch: which (op, dtype) it runs, and the node loop over the thread pool
// with its per-op timing (cpu_backend.h; its memory is cpu_storage.cpp).
#include "cpu/cpu_backend.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>

#include "cpu/cpu_features.h"
#include "cpu/kernels.h"
#include "cpu/node_threads.h"
#include "cpu/repack.h"
#include "cpu/vec_dot.h"
#include "engine/error.h"
#include "engine/op_params.h"

namespace engine::cpu {
namespace {

using KernelFn = void (*)(const ComputeParams&, Tensor*);

KernelFn kernel_for(Op op) {
  switch (op) {
    case Op::GET_ROWS: return get_rows;
    case Op::ADD: return add;
    case Op::MUL: return mul;
    case Op::DIV: return div;
    case Op::SUM_ROWS: return sum_rows;
    case Op::ARGSORT: return argsort;
    case Op::MUL_MAT_ID: return mul_mat_id;
    case Op::SCALE: return scale;
    case Op::RMS_NORM: return rms_norm;
    case Op::NORM: return norm;
    case Op::MUL_MAT: return mul_mat;
    case Op::ROPE: return rope;
    case Op::SOFT_MAX: return soft_max;
    case Op::CONT:
    case Op::CPY: return cont;
    case Op::SILU: return silu;
    case Op::GELU: return gelu;
    default: return nullptr;
  }
}

bool is_f32(const Tensor* t) { return t && t->type == DType::F32; }

}  // namespace

bool CpuBackend::supports(const Tensor& node) const {
  const Tensor* a = node.src[0];
  const Tensor* b = node.src[1];
  const Tensor* c = node.src[2];
  if (op_info(node.op).is_view || node.op == Op::NONE) return true;
  if (node.op == Op::ARGSORT) return node.type == DType::I32 && is_f32(a);
  if (!a || (node.op != Op::CPY && node.op != Op::CONT && node.type != DType::F32)) return false;
  switch (node.op) {
    case Op::GET_ROWS: return get_rows_supports(a->type) && b && b->type == DType::I32;
    case Op::ADD:
    case Op::MUL:
    case Op::DIV: return is_f32(a) && is_f32(b);
    case Op::SUM_ROWS: return is_f32(a);
    case Op::MUL_MAT_ID: return mul_mat_supports(a->type) && is_f32(b) && c && c->type == DType::I32;
    case Op::SCALE:
    case Op::RMS_NORM:
    case Op::NORM:
    case Op::SILU:
    case Op::GELU: return is_f32(a);
    case Op::MUL_MAT: return mul_mat_supports(a->type) && is_f32(b);
    case Op::ROPE:
      return is_f32(a) && b && b->type == DType::I32 && (!c || is_f32(c)) &&
             (rope_params(node).mode == kRopeNormal || rope_params(node).mode == kRopeNeox);
    case Op::SOFT_MAX: return is_f32(a) && (!b || is_f32(b));
    case Op::CONT: return copy_supports(a->type, node.type);
    case Op::CPY: return b && copy_supports(a->type, b->type);
    default: return false;
  }
}

bool CpuBackend::prefill_float_activations(DType weight) const { return weight == DType::Q8_0 && amx_in_use(); }

void CpuBackend::compute(const Graph& graph, Profiler* profiler) {
  if (&graph != allocated_) throw Error("cpu backend: compute of a graph other than the one last allocated");
  const auto& nodes = graph.nodes();
  for (const Tensor* node : nodes) validate(*node);
  // Each op is timed from the previous op's end (one clock read per op), so the times add up
  // to the whole node loop; the previous record's bookkeeping lands in the next op.
  auto last = std::chrono::steady_clock::now();
  auto elapsed_ns = [&] {
    const auto now = std::chrono::steady_clock::now();
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now - last);
    last = now;
    return static_cast<uint64_t>(ns.count());
  };
  auto record = [&](size_t i, uint64_t ns) {
    const Tensor* node = nodes[i];
    profiler->record({static_cast<int>(i), node->op, node->name, node->layer, "cpu", ns});
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (schedule_.grouped[i]) {  // computed in an earlier node's product group
      if (profiler) record(i, group_ns_[i] + elapsed_ns());
      continue;
    }
    if (!schedule_.groups[i].empty()) {
      run_group(nodes, i);
      if (profiler) {
        share_group_time(nodes, i, elapsed_ns());
        record(i, group_ns_[i]);
      }
      continue;
    }
    if (schedule_.fused[i]) {
      AttentionTimes parts;
      run_attention(nodes[i], nodes[i + 1], nodes[i + 2], parts);
      if (profiler) {  // the pass's time split among the three nodes as their work was
        const uint64_t total = elapsed_ns();
        const double spent = static_cast<double>(parts.ns[0] + parts.ns[1] + parts.ns[2]);
        uint64_t given = 0;
        for (int n = 0; n < 2; ++n) {
          const auto share = static_cast<uint64_t>(spent > 0 ? total * (static_cast<double>(parts.ns[n]) / spent) : total / 3.0);
          record(i + n, share);
          given += share;
        }
        record(i + 2, total - std::min(total, given));
      }
      i += 2;
      continue;
    }
    Tensor* node = nodes[i];
    if (!op_info(node->op).is_view) run_node(node);
    if (profiler) record(i, elapsed_ns());
  }
  learner_.end_step();
}

void CpuBackend::validate(const Tensor& node) const {
  // Built only on failure: validate runs on every node of every step.
  const auto where = [&] { return " (node '" + node.name + "')"; };
  if (!supports(node)) {
    std::string dtypes;
    for (const Tensor* s : node.src)
      if (s) dtypes += (dtypes.empty() ? "" : ", ") + std::string(dtype_name(s->type));
    throw Error("cpu backend does not support " + std::string(op_name(node.op)) + " on " + dtypes + where());
  }
  if (op_info(node.op).is_view) return;
  if (!node.data) throw Error("cpu backend: no storage bound" + where());
  for (const Tensor* s : node.src)
    if (s && !s->data) throw Error("cpu backend: source '" + s->name + "' has no storage bound" + where());
  for (int i = is_mat_mul(node.op) ? 1 : 0; i < kMaxSrc; ++i)
    if (node.src[i] && is_packed(node.src[i]))
      throw Error("cpu backend: '" + node.src[i]->name + "' is packed for products and cannot be read here" + where());
}

template <typename Kernel>
void CpuBackend::run_job(int nth, bool weight_packed, std::optional<StreamRequests> column_requests, const Kernel& kernel) {
  ComputeParams params;
  params.nth = nth;
  params.column_requests = column_requests;
  params.wdata = scratch_.data();
  params.wsize = scratch_.size();
  params.weight_packed = weight_packed;
  barrier_.reset(nth);
  params.barrier = &barrier_;
  claims_.reset(nth);
  params.claims = &claims_;
  pool_.run(nth, [&](int ith) {
    ComputeParams mine = params;
    mine.ith = ith;
    kernel(mine);
  });
}

template <typename Kernel>
void CpuBackend::run_column_job(DType weight, int64_t row_elements, size_t weight_bytes, bool weight_packed, const Kernel& kernel) {
  const StreamRequests requests = learner_.requests(weight, row_elements);
  const auto start = std::chrono::steady_clock::now();
  run_job(pool_.size(), weight_packed, requests, kernel);
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  learner_.record(weight, row_elements, weight_bytes, static_cast<uint64_t>(ns));
}

void CpuBackend::run_attention(Tensor* kq, const Tensor* soft_max, Tensor* kqv, AttentionTimes& parts) {
  run_job(pool_.size(), false, std::nullopt, [&](const ComputeParams& p) { fused_attention(p, kq, soft_max, kqv, parts); });
}

void CpuBackend::run_group(const std::vector<Tensor*>& nodes, size_t i) {
  group_products_.clear();
  size_t weight_bytes = 0;
  for (size_t m : schedule_.groups[i]) {
    group_products_.push_back({nodes[m], is_packed(nodes[m]->src[0])});
    weight_bytes += nodes[m]->src[0]->nbytes();
  }
  const Tensor* first = nodes[i]->src[0];  // the group takes its first weight's way
  run_column_job(first->type, first->ne[0], weight_bytes, false,
                 [&](const ComputeParams& p) { mul_mat_column_group(p, group_products_); });
}

void CpuBackend::share_group_time(const std::vector<Tensor*>& nodes, size_t i, uint64_t ns) {
  const std::vector<size_t>& members = schedule_.groups[i];
  const auto weight_bytes = [&](size_t m) { return static_cast<double>(nodes[m]->src[0]->nbytes()); };
  double bytes = 0;
  for (size_t m : members) bytes += weight_bytes(m);
  uint64_t given = 0;
  for (size_t m = 1; m < members.size(); ++m) {
    group_ns_[members[m]] = static_cast<uint64_t>(static_cast<double>(ns) * weight_bytes(members[m]) / bytes);
    given += group_ns_[members[m]];
  }
  group_ns_[i] = ns - std::min(ns, given);
}

void CpuBackend::run_node(Tensor* node) {
  const KernelFn kernel = kernel_for(node->op);
  const auto job = [&](const ComputeParams& p) { kernel(p, node); };
  const Tensor* weight = node->src[0];
  if (node->op == Op::MUL_MAT && weight->has(kWeight) && mul_mat_is_column_product(node))
    return run_column_job(weight->type, weight->ne[0], weight->nbytes(), is_packed(weight), job);
  run_job(node_threads(node, pool_.size()), is_mat_mul(node->op) && is_packed(weight), std::nullopt, job);
}

}  // namespace engine::cpu

namespace engine {

std::unique_ptr<Backend> make_cpu_backend(int n_threads) {
  if (n_threads < 0) throw Error("cpu backend: thread count must be >= 0, got " + std::to_string(n_threads));
  return std::make_unique<cpu::CpuBackend>(cpu::cpu_thread_count(n_threads));
}

}  // namespace engine
