#include "vulkan/pipelines.h"

#include <string>

#include "engine/error.h"
#include "vulkan/shaders.h"

namespace engine::vulkan {

Pipelines::Pipelines(const Device& device) : device_(device.handle()) {
  VkDescriptorSetLayoutBinding bindings[kBindings];
  for (uint32_t b = 0; b < kBindings; ++b)
    bindings[b] = {b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_info.bindingCount = kBindings;
  set_info.pBindings = bindings;
  check(vkCreateDescriptorSetLayout(device_, &set_info, nullptr, &set_layout_), "vkCreateDescriptorSetLayout");
  const VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, 4 * sizeof(uint32_t)};  // shaders/common.glsl's Push
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &set_layout_;
  layout_info.pushConstantRangeCount = 1;
  layout_info.pPushConstantRanges = &push;
  check(vkCreatePipelineLayout(device_, &layout_info, nullptr, &layout_), "vkCreatePipelineLayout");
}

Pipelines::~Pipelines() {
  for (auto& [name, pipeline] : made_) vkDestroyPipeline(device_, pipeline, nullptr);
  vkDestroyPipelineLayout(device_, layout_, nullptr);
  vkDestroyDescriptorSetLayout(device_, set_layout_, nullptr);
}

VkPipeline Pipelines::get(std::string_view name) {
  if (auto it = made_.find(name); it != made_.end()) return it->second;
  const Spirv* spirv = find_shader(name);
  if (!spirv) throw Error("vulkan: no shader '" + std::string(name) + "' in this build");
  VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  module_info.codeSize = spirv->words * sizeof(uint32_t);
  module_info.pCode = spirv->code;
  VkShaderModule module = VK_NULL_HANDLE;
  check(vkCreateShaderModule(device_, &module_info, nullptr, &module), "vkCreateShaderModule");
  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module;
  info.stage.pName = "main";
  info.layout = layout_;
  VkPipeline pipeline = VK_NULL_HANDLE;
  const VkResult made = vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline);
  vkDestroyShaderModule(device_, module, nullptr);
  check(made, "vkCreateComputePipelines");
  return made_.emplace(std::string(name), pipeline).first->second;
}

}  // namespace engine::vulkan
