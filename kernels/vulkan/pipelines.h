#pragma once
// The compute pipelines, one per shader the build compiled (shaders/*.comp, embedded as
// SPIR-V), made on first use. Every shader has one layout: storage buffers for src0, src1,
// src2 and dst (bindings 0-3), the dispatch records (binding 4, shaders/common.glsl's
// Dispatch), a fourth source (binding 5), and a push constant naming the record a dispatch reads.
#include <vulkan/vulkan.h>

#include <map>
#include <string>
#include <string_view>

#include "vulkan/vulkan_device.h"

namespace engine::vulkan {

constexpr uint32_t kBindings = 6;
constexpr uint32_t kRecordBinding = 4;

class Pipelines {
 public:
  explicit Pipelines(const Device& device);
  ~Pipelines();
  Pipelines(const Pipelines&) = delete;
  Pipelines& operator=(const Pipelines&) = delete;

  // The pipeline of shader `name` ("mul_mat_q4_0"); throws Error when the build has none.
  VkPipeline get(std::string_view name);
  VkPipelineLayout layout() const { return layout_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_; }

 private:
  VkDevice device_;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  std::map<std::string, VkPipeline, std::less<>> made_;
};

}  // namespace engine::vulkan
