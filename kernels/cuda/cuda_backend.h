#pragma once
// The CUDA backend: the weights, the KV cache and the plan's compute buffer in device memory,
// each node a kernel launch on one stream (launch.h), the inputs and outputs staged through
// pinned host memory; with a profiler, an event after each launch.
#include <cuda_runtime_api.h>

#include <optional>
#include <unordered_map>
#include <vector>

#include "common/device_ops.h"
#include "cuda/cuda_entry.h"
#include "cuda/cuda_memory.h"
#include "cuda/launch.h"
#include "engine/backend.h"

namespace engine::cuda {

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device);
  ~CudaBackend() override;

  std::string_view name() const override { return "cuda"; }
  const DeviceInfo& device() const override { return info_; }
  bool supports(const Tensor& node) const override { return device_supports(node); }

  void load_weights(const Model& model) override;
  void allocate_kv(const KVCache& kv) override;
  void allocate(Graph& graph, const Plan& plan) override;
  void set_input(const Tensor& input, const void* data, size_t bytes) override;
  void get_output(const Tensor& output, void* data, size_t bytes) override;
  void synchronize() override;
  void compute(const Graph& graph, Profiler* profiler) override;

  size_t weights_bytes() const override { return weights_.size(); }
  size_t kv_cache_bytes() const override { return kv_.size(); }
  size_t compute_buffer_bytes() const override { return buffer_.size(); }
  size_t scratch_bytes() const override { return upload_.size() + readback_.size(); }
  // The kernels multiply in f32: no activation is rounded to a weight's dot format.
  bool prefill_float_activations(DType weight) const override { return dtype_info(weight).quantized; }

 private:
  struct Step {
    const Tensor* node;  // the node the launch writes: the last of a fused attention's three
    Launch launch;
  };
  struct Copy {
    const Tensor* tensor;
    char* device;
    size_t staging;  // offset in upload_ or readback_
  };

  char* address(const Tensor& t) const;
  TensorArg arg(const Tensor* t) const;
  void make_current() const;

  int device_index_;
  DeviceInfo info_;
  cudaStream_t stream_ = nullptr;
  std::vector<cudaEvent_t> events_;  // the profiler's: one before the first launch, one after each
  int64_t attention_max_kv_ = 0;

  Memory weights_;
  const std::vector<GGUFTensorInfo>* weight_infos_ = nullptr;
  Memory kv_;
  std::optional<KVCache> kv_layout_;
  Memory buffer_;    // the plan's compute buffer
  Memory upload_;    // the inputs, staged (pinned)
  Memory readback_;  // the outputs, staged (pinned)

  const Graph* allocated_ = nullptr;
  std::unordered_map<const Tensor*, size_t> placed_;  // the plan's offsets
  std::vector<Step> steps_;
  std::vector<Copy> inputs_, outputs_;
};

}  // namespace engine::cuda
