#pragma once
// The CPU backend: holds a copy of the weights (the SIMD kernels' weights regrouped in it,
// repack.h), the KV cache and the compute buffer in host memory (cpu_storage.cpp); validates
// every node against the kernels' (op, dtype) support, then runs the nodes in order on a
// persistent thread pool, timing each with steady_clock when profiling (cpu_backend.cpp). A
// causal attention (kq, its softmax, kqv) runs as one fused pass, and decode's products of one
// column as one job (schedule.h), requesting their weight ahead as the steps' times teach
// (requests_learner.h).
#include <optional>
#include <vector>

#include "cpu/attention.h"
#include "cpu/cpu_device.h"
#include "cpu/decode_tuning.h"
#include "cpu/host_buffer.h"
#include "cpu/kernels.h"
#include "cpu/requests_learner.h"
#include "cpu/schedule.h"
#include "cpu/thread_pool.h"
#include "engine/backend.h"
#include "engine/host_memory.h"

namespace engine::cpu {

class CpuBackend final : public Backend {
 public:
  // Chooses the decode forms (decode_tuning.h) while the new workers sleep.
  explicit CpuBackend(int n_threads) : pool_(n_threads), device_(cpu_device()), learner_(decode_choice_measured(), keep_learned_requests) {
    ensure_decode_tuning();
  }

  std::string_view name() const override { return "cpu"; }
  const DeviceInfo& device() const override { return device_; }
  bool supports(const Tensor& node) const override;

  // cpu_storage.cpp
  void load_weights(const Model& model) override;
  void allocate_kv(const KVCache& kv) override;
  void allocate(Graph& graph, const Plan& plan) override;
  // Only the views move: the schedule and scratch (~75 us a decode step to derive) stand.
  void rebind(Graph& graph, const Plan& plan) override;
  void set_input(const Tensor& input, const void* data, size_t bytes) override;
  void get_output(const Tensor& output, void* data, size_t bytes) override;
  void synchronize() override {}  // compute returns when its work is done

  void compute(const Graph& graph, Profiler* profiler) override;

  size_t weights_bytes() const override { return weights_.size(); }
  size_t kv_cache_bytes() const override { return kv_.size(); }
  size_t compute_buffer_bytes() const override { return buffer_.size(); }
  size_t scratch_bytes() const override { return scratch_.size(); }
  bool prefill_float_activations(DType weight) const override;
  bool skips_masked_attention() const override { return true; }  // mul_mat.cpp causal_tiles, soft_max.cpp

 private:
  void validate(const Tensor& node) const;
  // Points the weight and KV leaves the nodes read (directly or through views) at this
  // backend's copies of them.
  void bind_leaves(Graph& graph);
  void bind_leaf(Tensor& leaf);
  // Whether `t` is a weight this backend holds regrouped for MUL_MAT.
  bool is_packed(const Tensor* t) const { return t->has(kWeight) && packed_[t->storage_index]; }
  // Regroups, once, the weights the SIMD kernels read packed (repack.h), every thread taking
  // an even share of each weight's row groups.
  void pack_weights(const Graph& graph);
  // Runs kernel(params) on nth of the pool's threads, each with its ith, the scratch, and the
  // barrier and row claims set for nth (cpu_backend.cpp, its only user).
  template <typename Kernel>
  void run_job(int nth, bool weight_packed, std::optional<StreamRequests> column_requests, const Kernel& kernel);
  // Runs a job of decode products of `weight` on rows of `row_elements` (`weight_bytes` in all) on
  // the requests the learner gives for this step, and tells it the job's time.
  template <typename Kernel>
  void run_column_job(DType weight, int64_t row_elements, size_t weight_bytes, bool weight_packed, const Kernel& kernel);
  void run_attention(Tensor* kq, const Tensor* soft_max, Tensor* kqv, AttentionTimes& parts);
  void run_node(Tensor* node);
  // Runs the product group starting at node i (schedule.h) in one job; with a profiler,
  // leaves each member's share of the job's `ns` in group_ns_, as its weight's share of the bytes.
  void run_group(const std::vector<Tensor*>& nodes, size_t i);
  void share_group_time(const std::vector<Tensor*>& nodes, size_t i, uint64_t ns);

  ThreadPool pool_;
  Barrier barrier_;
  RowClaims claims_;
  HostBuffer buffer_;
  HostBuffer scratch_;  // scratch_bytes of each graph allocated (scratch.h); compute never grows it
  const Graph* allocated_ = nullptr;  // the graph last allocated: the one compute may run
  const Plan* allocated_plan_ = nullptr;  // the plan it was allocated with
  Schedule schedule_;                 // of that graph: the nodes run together
  std::vector<uint64_t> group_ns_;    // by node of it: its share of its product group's time
  std::vector<ColumnProduct> group_products_;  // the product group running now
  DeviceInfo device_;
  RequestsLearner learner_;  // decode products' stream requests, from this backend's steps
  const std::vector<GGUFTensorInfo>* weight_infos_ = nullptr;  // where each weight lies in weights_
  HostMemory weights_;
  std::vector<bool> packed_;  // by weight: regrouped for the SIMD kernels
  HostMemory kv_;
  std::optional<KVCache> kv_layout_;
};

}  // namespace engine::cpu
