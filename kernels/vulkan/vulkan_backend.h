#pragma once
// The Vulkan backend: the weights, KV cache and compute buffer in device memory, each node one
// compute dispatch (dispatch.h) recorded into one command buffer per step, with the step's
// inputs copied up at its start and its outputs copied down at its end. Profiled steps write
// a timestamp after every dispatch; compute reads them back before it returns.
#include <vulkan/vulkan.h>

#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "common/device_ops.h"
#include "engine/backend.h"
#include "vulkan/dispatch.h"
#include "vulkan/pipelines.h"
#include "vulkan/vulkan_buffer.h"
#include "vulkan/vulkan_device.h"
#include "vulkan/vulkan_entry.h"

namespace engine::vulkan {

class VulkanBackend final : public Backend {
 public:
  explicit VulkanBackend(int device);
  ~VulkanBackend() override;

  std::string_view name() const override { return "vulkan"; }
  const DeviceInfo& device() const override { return device_.info(); }
  bool supports(const Tensor& node) const override { return device_supports(node); }

  // vulkan_storage.cpp
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
  size_t scratch_bytes() const override { return records_.size() + upload_.size() + readback_.size(); }
  // The shaders multiply in f32: no activation is rounded to a weight's dot format.
  bool prefill_float_activations(DType weight) const override { return dtype_info(weight).quantized; }

 private:
  // Where a tensor's bytes lie: a buffer of this backend and the offset in it.
  struct Location {
    const Buffer* buffer;
    VkDeviceSize offset;
  };
  struct Step {
    const Tensor* node;   // the node the dispatch writes: the last of a fused attention's three
    DispatchPlan plan;
    VkPipeline pipeline;  // made at allocate, so that no step pays for compiling a shader
    uint32_t record;      // its record's index (the chunks of one node share one)
    RowChunk rows;        // the src0 rows it covers
    bool chunked;         // src0 is bound from its first row, not as a whole
    uint32_t src0_offset = 0;  // the push constant's (shaders/common.glsl), set when binding
    VkDescriptorSet set = VK_NULL_HANDLE;
  };
  struct Copy {
    const Tensor* tensor;
    Location device;
    VkDeviceSize staging;  // offset in upload_ or readback_
  };

  Location locate(const Tensor& t) const;
  // Points a descriptor at the tensor's bytes, the binding's offset aligned down as the device
  // requires and the remainder left in the record.
  void bind(VkDescriptorBufferInfo& info, uint32_t& record_offset, const Tensor* t) const;
  // The same for bytes [from, from + bytes) of the tensor; `offset` is the tensor's start
  // inside the binding, mod 2^32 (it precedes the binding where `from` is past the alignment).
  void bind_range(VkDescriptorBufferInfo& info, uint32_t& offset, const Tensor* t, VkDeviceSize from, VkDeviceSize bytes) const;
  void write_descriptors();
  // Runs `record` in a one-off command buffer and waits for it.
  void run_now(const std::function<void(VkCommandBuffer)>& record);
  // Resets and begins the command buffer; ends it and submits it, signalling step_done_.
  void begin_commands();
  void submit_commands();
  void wait_for_step();

  Device device_;
  Pipelines pipelines_;
  KernelChoice kernels_;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  VkFence step_done_ = VK_NULL_HANDLE;
  bool step_in_flight_ = false;
  VkDescriptorPool descriptor_pool_ = VK_NULL_HANDLE;
  size_t descriptor_sets_ = 0;  // what the pool holds
  VkQueryPool timestamps_ = VK_NULL_HANDLE;
  size_t timestamp_count_ = 0;

  Buffer weights_;
  const std::vector<GGUFTensorInfo>* weight_infos_ = nullptr;
  Buffer kv_;
  std::optional<KVCache> kv_layout_;
  Buffer buffer_;    // the plan's compute buffer
  Buffer records_;   // one DispatchRecord per step
  Buffer upload_;    // the inputs, staged
  Buffer readback_;  // the outputs, staged
  Buffer unbound_;   // what a dispatch's absent sources bind

  const Graph* allocated_ = nullptr;
  std::unordered_map<const Tensor*, size_t> placed_;  // the plan's offsets
  std::vector<Step> steps_;
  std::vector<Copy> inputs_, outputs_;
};

}  // namespace engine::vulkan
