// The CPU backend: holds a copy of the weights (the SIMD kernels' weights regrouped in it,
// repack.h), the KV cache and the compute buffer in host memory; validates every node against
// the kernels' (op, dtype) support, then runs the nodes in order on a persistent thread pool,
// timing each with steady_clock when profiling. A causal prefill attention (kq, its softmax,
// kqv) runs as one fused pass (attention.h).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <new>
#include <string>
#include <thread>

#include "cpu/attention.h"
#include "cpu/cpu_device.h"
#include "cpu/cpu_features.h"
#include "cpu/kernels.h"
#include "cpu/repack.h"
#include "cpu/row_split.h"
#include "cpu/scratch.h"
#include "cpu/thread_pool.h"
#include "cpu/vec_dot.h"
#include "engine/op_params.h"
#include "engine/backend.h"
#include "engine/error.h"
#include "engine/host_memory.h"

namespace engine {
namespace {

using cpu::ComputeParams;
using KernelFn = void (*)(const ComputeParams&, Tensor*);

// Below this many elements a non-matmul node runs on one thread: waking workers costs more.
constexpr int64_t kMinParallelElements = 4096;

KernelFn kernel_for(Op op) {
  switch (op) {
    case Op::GET_ROWS: return cpu::get_rows;
    case Op::ADD: return cpu::add;
    case Op::MUL: return cpu::mul;
    case Op::SCALE: return cpu::scale;
    case Op::RMS_NORM: return cpu::rms_norm;
    case Op::NORM: return cpu::norm;
    case Op::MUL_MAT: return cpu::mul_mat;
    case Op::ROPE: return cpu::rope;
    case Op::SOFT_MAX: return cpu::soft_max;
    case Op::CONT:
    case Op::CPY: return cpu::cont;
    case Op::SILU: return cpu::silu;
    case Op::GELU: return cpu::gelu;
    default: return nullptr;
  }
}

bool is_f32(const Tensor* t) { return t && t->type == DType::F32; }

// 64-byte aligned bytes that only ever grow.
class HostBuffer {
 public:
  void reserve(size_t bytes) {
    if (bytes <= size_) return;
    data_.reset(static_cast<std::byte*>(::operator new(bytes, std::align_val_t{Plan::kAlignment})));
    size_ = bytes;
  }
  void* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(std::byte* p) const { ::operator delete(p, std::align_val_t{Plan::kAlignment}); }
  };
  std::unique_ptr<std::byte, Free> data_;
  size_t size_ = 0;
};

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int n_threads) : pool_(n_threads), device_(cpu::cpu_device()) {}

  std::string_view name() const override { return "cpu"; }
  const DeviceInfo& device() const override { return device_; }

  bool supports(const Tensor& node) const override {
    const Tensor* a = node.src[0];
    const Tensor* b = node.src[1];
    const Tensor* c = node.src[2];
    if (op_info(node.op).is_view || node.op == Op::NONE) return true;
    if (!a || (node.op != Op::CPY && node.op != Op::CONT && node.type != DType::F32)) return false;
    switch (node.op) {
      case Op::GET_ROWS: return cpu::get_rows_supports(a->type) && b && b->type == DType::I32;
      case Op::ADD:
      case Op::MUL: return is_f32(a) && is_f32(b);
      case Op::SCALE:
      case Op::RMS_NORM:
      case Op::NORM:
      case Op::SILU:
      case Op::GELU: return is_f32(a);
      case Op::MUL_MAT: return cpu::mul_mat_supports(a->type) && is_f32(b);
      case Op::ROPE:
        return is_f32(a) && b && b->type == DType::I32 && (!c || is_f32(c)) &&
               (rope_params(node).mode == kRopeNormal || rope_params(node).mode == kRopeNeox);
      case Op::SOFT_MAX: return is_f32(a) && (!b || is_f32(b));
      case Op::CONT: return cpu::copy_supports(a->type, node.type);
      case Op::CPY: return b && cpu::copy_supports(a->type, b->type);
      default: return false;
    }
  }

  void load_weights(const Model& model) override {
    weight_infos_ = &model.file().tensors();
    weights_ = HostMemory(model.weight_storage_bytes());
    model.file().copy_data(weights_.data(), weights_.size());
    packed_.assign(weight_infos_->size(), false);
  }

  void allocate_kv(const KVCache& kv) override {
    kv_ = HostMemory(kv.bytes());
    kv_layout_ = kv;
  }

  void allocate(Graph& graph, const Plan& plan) override {
    bind_leaves(graph);
    if (cpu::simd_active()) pack_weights(graph);
    buffer_.reserve(plan.buffer_size);
    plan.bind(graph, buffer_.data());
    scratch_.reserve(cpu::scratch_bytes(graph, plan, pool_.size()));
    fused_.assign(graph.nodes().size(), false);
    for (size_t i = 0; i < graph.nodes().size(); ++i) fused_[i] = cpu::fuses_attention(graph.nodes(), i, plan);
  }

  void set_input(const Tensor& input, const void* data, size_t bytes) override {
    if (!input.has(kInput) || !input.data || bytes != input.nbytes())
      throw Error("cpu backend: cannot set input '" + input.name + "' from " + std::to_string(bytes) + " bytes");
    std::memcpy(input.data, data, bytes);
  }

  void get_output(const Tensor& output, void* data, size_t bytes) override {
    if (!output.has(kOutput) || !output.data || bytes != output.nbytes())
      throw Error("cpu backend: cannot read output '" + output.name + "' into " + std::to_string(bytes) + " bytes");
    std::memcpy(data, output.data, bytes);
  }

  void synchronize() override {}  // compute returns when its work is done

  void compute(const Graph& graph, Profiler* profiler) override {
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
      if (i < fused_.size() && fused_[i]) {
        cpu::AttentionTimes parts;
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
  }

  size_t weights_bytes() const override { return weights_.size(); }
  size_t kv_cache_bytes() const override { return kv_.size(); }
  size_t compute_buffer_bytes() const override { return buffer_.size(); }
  size_t scratch_bytes() const override { return scratch_.size(); }

  bool prefill_float_activations(DType weight) const override { return weight == DType::Q8_0 && cpu::amx_in_use(); }

 private:
  void validate(const Tensor& node) const {
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
    for (int i = node.op == Op::MUL_MAT ? 1 : 0; i < kMaxSrc; ++i)
      if (node.src[i] && is_packed(node.src[i]))
        throw Error("cpu backend: '" + node.src[i]->name + "' is packed for MUL_MAT and cannot be read here" + where());
  }

  // Points the weight and KV leaves the nodes read (directly or through views) at this
  // backend's copies of them.
  void bind_leaves(Graph& graph) {
    for (Tensor* node : graph.nodes())
      for (Tensor* leaf : {node->src[0], node->src[1], node->src[2], node->view_src})
        if (leaf) bind_leaf(*leaf);
  }

  void bind_leaf(Tensor& leaf) {
    if (leaf.has(kWeight)) {
      if (!weight_infos_ || leaf.storage_index < 0 || static_cast<size_t>(leaf.storage_index) >= weight_infos_->size())
        throw Error("cpu backend: weight '" + leaf.name + "' is not among the loaded weights");
      leaf.data = weights_.data() + (*weight_infos_)[leaf.storage_index].offset;
    } else if (leaf.has(kKV)) {
      if (!kv_layout_ || leaf.storage_index < 0 || kv_layout_->offset(leaf.storage_index) + leaf.nbytes() > kv_.size())
        throw Error("cpu backend: KV tensor '" + leaf.name + "' lies outside the allocated KV cache");
      leaf.data = kv_.data() + kv_layout_->offset(leaf.storage_index);
    }
  }

  // Whether `t` is a weight this backend holds regrouped for MUL_MAT.
  bool is_packed(const Tensor* t) const { return t->has(kWeight) && packed_[t->storage_index]; }

  // Regroups, once, the weights the SIMD kernels read packed (repack.h), every thread taking
  // an even share of each weight's row groups.
  void pack_weights(const Graph& graph) {
    for (Tensor* w : cpu::weights_to_pack(graph, [&](const Tensor& t) { return is_packed(&t); })) {
      const int64_t groups = w->ne[1] / cpu::kPackRows;
      const size_t group_bytes = cpu::kPackRows * w->nb[1];
      pool_.run(pool_.size(), [&](int ith) {
        const cpu::WorkRange mine = cpu::split_work(groups, ith, pool_.size());
        if (mine.begin < mine.end)
          cpu::pack_rows(w->type, w->ne[0], (mine.end - mine.begin) * cpu::kPackRows,
                         static_cast<char*>(w->data) + mine.begin * group_bytes);
      });
      packed_[w->storage_index] = true;
    }
  }

  int threads_for(const Tensor* node) const {
    if (node->op == Op::MUL_MAT) return pool_.size();
    // Many one-element rows (a transposed V store) cost a cache miss each, not their size.
    const bool scattered = node->ne[0] == 1 && node->nrows() >= kMinParallelElements / 16;
    if (node->nelements() < kMinParallelElements && !scattered) return 1;
    return static_cast<int>(std::min<int64_t>(pool_.size(), node->nrows()));
  }

  void run_attention(Tensor* kq, const Tensor* soft_max, Tensor* kqv, cpu::AttentionTimes& parts) {
    ComputeParams params;
    params.nth = pool_.size();
    scratch_.reserve(cpu::fused_attention_work_size(kq));
    params.wdata = scratch_.data();
    params.wsize = scratch_.size();
    barrier_.reset(params.nth);
    params.barrier = &barrier_;
    pool_.run(params.nth, [&](int ith) {
      ComputeParams mine = params;
      mine.ith = ith;
      cpu::fused_attention(mine, kq, soft_max, kqv, parts);
    });
  }

  void run_node(Tensor* node) {
    const int nth = threads_for(node);
    ComputeParams params;
    params.nth = nth;
    if (node->op == Op::MUL_MAT) {
      scratch_.reserve(cpu::mul_mat_work_size(node, nth));
      params.wdata = scratch_.data();
      params.wsize = scratch_.size();
      params.weight_packed = is_packed(node->src[0]);
    }
    barrier_.reset(nth);
    params.barrier = &barrier_;
    const KernelFn kernel = kernel_for(node->op);
    pool_.run(nth, [&](int ith) {
      ComputeParams mine = params;
      mine.ith = ith;
      kernel(mine, node);
    });
  }

  cpu::ThreadPool pool_;
  cpu::Barrier barrier_;
  HostBuffer buffer_;
  HostBuffer scratch_;
  std::vector<bool> fused_;  // by node of the graph last allocated: a fused attention starts here
  DeviceInfo device_;
  const std::vector<GGUFTensorInfo>* weight_infos_ = nullptr;  // where each weight lies in weights_
  HostMemory weights_;
  std::vector<bool> packed_;  // by weight: regrouped for the SIMD kernels
  HostMemory kv_;
  std::optional<KVCache> kv_layout_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int n_threads) {
  if (n_threads < 0) throw Error("cpu backend: thread count must be >= 0, got " + std::to_string(n_threads));
  return std::make_unique<CpuBackend>(cpu::cpu_thread_count(n_threads));
}

}  // namespace engine
