// The Vulkan backend's step: one command buffer that copies the inputs up, runs every node's
// dispatch in order with a barrier between them, and copies the outputs down; with a profiler,
// a timestamp after each dispatch, read back into one OpTiming per node before compute returns.
#include "vulkan/vulkan_backend.h"

#include <string>

#include "engine/error.h"
#include "vulkan/vulkan_entry.h"

namespace engine::vulkan {
namespace {

void barrier(VkCommandBuffer cb, VkPipelineStageFlags from, VkAccessFlags written, VkPipelineStageFlags to, VkAccessFlags read) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = written;
  b.dstAccessMask = read;
  vkCmdPipelineBarrier(cb, from, to, 0, 1, &b, 0, nullptr, 0, nullptr);
}

constexpr VkAccessFlags kShaderAccess = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
constexpr VkPipelineStageFlags kCompute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
constexpr VkPipelineStageFlags kTransfer = VK_PIPELINE_STAGE_TRANSFER_BIT;

}  // namespace

VulkanBackend::VulkanBackend(int device) : device_(device), pipelines_(device_), kernels_(kernel_choice(device_.info(), device_.limits().subgroup_arithmetic)) {
  VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = device_.queue_family();
  check(vkCreateCommandPool(device_.handle(), &pool, nullptr, &command_pool_), "vkCreateCommandPool");
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = command_pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  check(vkAllocateCommandBuffers(device_.handle(), &alloc, &commands_), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check(vkCreateFence(device_.handle(), &fence, nullptr, &step_done_), "vkCreateFence");
  unbound_ = Buffer(device_, 16, Buffer::Use::kStorage);
}

VulkanBackend::~VulkanBackend() {
  vkDeviceWaitIdle(device_.handle());
  if (timestamps_) vkDestroyQueryPool(device_.handle(), timestamps_, nullptr);
  if (descriptor_pool_) vkDestroyDescriptorPool(device_.handle(), descriptor_pool_, nullptr);
  vkDestroyFence(device_.handle(), step_done_, nullptr);
  vkDestroyCommandPool(device_.handle(), command_pool_, nullptr);
}

void VulkanBackend::begin_commands() {
  check(vkResetCommandBuffer(commands_, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(commands_, &begin), "vkBeginCommandBuffer");
}

void VulkanBackend::submit_commands() {
  check(vkEndCommandBuffer(commands_), "vkEndCommandBuffer");
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &commands_;
  check(vkQueueSubmit(device_.queue(), 1, &submit, step_done_), "vkQueueSubmit");
  step_in_flight_ = true;
}

void VulkanBackend::run_now(const std::function<void(VkCommandBuffer)>& record) {
  wait_for_step();
  begin_commands();
  record(commands_);
  submit_commands();
  wait_for_step();
}

void VulkanBackend::wait_for_step() {
  if (!step_in_flight_) return;
  check(vkWaitForFences(device_.handle(), 1, &step_done_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  check(vkResetFences(device_.handle(), 1, &step_done_), "vkResetFences");
  step_in_flight_ = false;
}

void VulkanBackend::synchronize() { wait_for_step(); }

void VulkanBackend::compute(const Graph& graph, Profiler* profiler) {
  if (&graph != allocated_) throw Error("vulkan backend: compute of a graph other than the one last allocated");
  wait_for_step();
  const bool timed = profiler && device_.limits().timestamps;
  if (timed && timestamp_count_ < steps_.size() + 1) {
    if (timestamps_) vkDestroyQueryPool(device_.handle(), timestamps_, nullptr);
    timestamp_count_ = steps_.size() + 1;
    VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = static_cast<uint32_t>(timestamp_count_);
    check(vkCreateQueryPool(device_.handle(), &info, nullptr, &timestamps_), "vkCreateQueryPool");
  }

  begin_commands();
  for (const Copy& in : inputs_) {
    const VkBufferCopy region{in.staging, in.device.offset, in.tensor->nbytes()};
    vkCmdCopyBuffer(commands_, upload_.handle(), in.device.buffer->handle(), 1, &region);
  }
  barrier(commands_, kTransfer | VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT, kCompute,
          kShaderAccess);
  if (timed) {
    vkCmdResetQueryPool(commands_, timestamps_, 0, static_cast<uint32_t>(steps_.size() + 1));
    vkCmdWriteTimestamp(commands_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, timestamps_, 0);
  }
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& step = steps_[i];
    vkCmdBindPipeline(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, step.pipeline);
    vkCmdBindDescriptorSets(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines_.layout(), 0, 1, &step.set, 0, nullptr);
    const uint32_t push[4] = {step.record, step.src0_offset, step.rows.first_row, step.rows.row_end};
    vkCmdPushConstants(commands_, pipelines_.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, push);
    vkCmdDispatch(commands_, step.rows.groups[0], step.rows.groups[1], step.rows.groups[2]);
    barrier(commands_, kCompute, VK_ACCESS_SHADER_WRITE_BIT, kCompute | kTransfer, kShaderAccess | VK_ACCESS_TRANSFER_READ_BIT);
    if (timed) vkCmdWriteTimestamp(commands_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps_, static_cast<uint32_t>(i + 1));
  }
  for (const Copy& out : outputs_) {
    const VkBufferCopy region{out.device.offset, out.staging, out.tensor->nbytes()};
    vkCmdCopyBuffer(commands_, out.device.buffer->handle(), readback_.handle(), 1, &region);
  }
  barrier(commands_, kTransfer, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  submit_commands();
  if (!profiler) return;

  wait_for_step();
  std::vector<uint64_t> ticks(steps_.size() + 1, 0);
  if (timed)
    check(vkGetQueryPoolResults(device_.handle(), timestamps_, 0, static_cast<uint32_t>(ticks.size()),
                                ticks.size() * sizeof(uint64_t), ticks.data(), sizeof(uint64_t),
                                VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
  // Views and the CPY results that alias their destination took no dispatch: zero time.
  size_t step = 0;
  const auto& nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Tensor* node = nodes[i];
    uint64_t ns = 0;
    for (; step < steps_.size() && steps_[step].node == node; ++step)  // a node split in chunks takes several
      ns += static_cast<uint64_t>(static_cast<double>(ticks[step + 1] - ticks[step]) * device_.limits().timestamp_ns);
    profiler->record({static_cast<int>(i), node->op, node->name, node->layer, "vulkan", ns});
  }
}

std::unique_ptr<Backend> make_backend(int device) { return std::make_unique<VulkanBackend>(device); }

}  // namespace engine::vulkan
