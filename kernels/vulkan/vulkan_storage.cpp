// The Vulkan backend's memory: the weights uploaded once, the KV cache, the compute buffer and
// the staging of inputs and outputs; and the binding of a graph's tensors to them.
#include <algorithm>
#include <cstring>
#include <string>

#include "common/graph_walk.h"
#include "engine/error.h"
#include "engine/model.h"
#include "engine/plan.h"
#include "vulkan/vulkan_backend.h"

namespace engine::vulkan {
namespace {

constexpr VkDeviceSize kUploadChunk = 64ull << 20;  // weights go up through a staging buffer of this size

VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) { return (v + a - 1) / a * a; }

size_t dispatch_count(const Graph& graph) {
  return static_cast<size_t>(std::count_if(graph.nodes().begin(), graph.nodes().end(), is_dispatched));
}

}  // namespace

size_t scratch_bytes(const Graph& graph) {
  return dispatch_count(graph) * sizeof(DispatchRecord) + staged_bytes(inputs_of(graph)) + staged_bytes(outputs_of(graph));
}

void VulkanBackend::load_weights(const Model& model) {
  weight_infos_ = &model.file().tensors();
  const size_t bytes = model.weight_storage_bytes();
  weights_ = Buffer(device_, bytes, Buffer::Use::kStorage);
  Buffer staging(device_, std::min<VkDeviceSize>(bytes, kUploadChunk), Buffer::Use::kUpload);
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min<size_t>(bytes - done, staging.size());
    model.file().copy_data(staging.mapped(), done, n);
    run_now([&](VkCommandBuffer cb) {
      const VkBufferCopy region{0, done, n};
      vkCmdCopyBuffer(cb, staging.handle(), weights_.handle(), 1, &region);
    });
    done += n;
  }
}

void VulkanBackend::allocate_kv(const KVCache& kv) {
  kv_ = Buffer(device_, kv.bytes(), Buffer::Use::kStorage);
  kv_layout_ = kv;
  run_now([&](VkCommandBuffer cb) { vkCmdFillBuffer(cb, kv_.handle(), 0, VK_WHOLE_SIZE, 0); });
}

VulkanBackend::Location VulkanBackend::locate(const Tensor& t) const {
  const Placement at = placement(t, weight_infos_, kv_layout_, placed_, "vulkan");
  const Buffer* stores[] = {&weights_, &kv_, &buffer_};
  return {stores[static_cast<int>(at.store)], at.offset};
}

void VulkanBackend::bind(VkDescriptorBufferInfo& info, uint32_t& record_offset, const Tensor* t) const {
  if (!t) {
    info = {unbound_.handle(), 0, VK_WHOLE_SIZE};
    record_offset = 0;
    return;
  }
  bind_range(info, record_offset, t, 0, t->nbytes());
}

void VulkanBackend::bind_range(VkDescriptorBufferInfo& info, uint32_t& offset, const Tensor* t, VkDeviceSize from,
                               VkDeviceSize bytes) const {
  const Location at = locate(*t);
  if (at.offset + t->nbytes() > at.buffer->size())
    throw Error("vulkan backend: tensor '" + t->name + "' lies past the end of its buffer (" +
                std::to_string(at.offset + t->nbytes()) + " > " + std::to_string(at.buffer->size()) + " bytes)");
  const VkDeviceSize alignment = device_.limits().storage_offset_alignment;
  const VkDeviceSize start = (at.offset + from) / alignment * alignment;
  const VkDeviceSize range = std::min(align_up(at.offset + from - start + bytes, 4), at.buffer->size() - start);
  if (range > device_.limits().max_storage_range)
    throw Error("vulkan backend: tensor '" + t->name + "' spans " + std::to_string(range) + " bytes, more than the " +
                std::to_string(device_.limits().max_storage_range) + " one binding of " + device_.info().name +
                (t->has(kWeight) ? " reaches (a weight read whole, as experts are, must fit one binding)"
                                 : " reaches; a smaller context (-c) or prompt batch (-b) shrinks the attention tensors"));
  info = {at.buffer->handle(), start, range};
  offset = static_cast<uint32_t>(at.offset - start);  // wraps where the binding starts past the tensor's start
}

void VulkanBackend::allocate(Graph& graph, const Plan& plan) {
  wait_for_step();  // the records, descriptors and staging of the step before are rewritten
  if (plan.buffer_size > buffer_.size()) buffer_ = Buffer(device_, plan.buffer_size, Buffer::Use::kStorage);
  placed_.clear();
  for (const auto& [t, offset] : plan.offsets) placed_.emplace(t, offset);

  steps_.clear();
  uint32_t records = 0;
  const std::vector<Tensor*>& nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Tensor* node = nodes[i];
    if (fuses_attention(nodes, i, plan, device_.limits().max_shared_bytes)) {
      DispatchPlan attention = plan_attention(*node, *nodes[i + 1], *nodes[i + 2]);
      const VkPipeline pipeline = pipelines_.get(attention.shader);
      const RowChunk all{0, 0, {attention.groups[0], attention.groups[1], attention.groups[2]}};
      steps_.push_back({nodes[i + 2], std::move(attention), pipeline, records++, all, false});
      i += 2;
      continue;
    }
    if (!is_dispatched(node)) continue;
    if (!supports(*node)) throw unsupported_node(*node, "vulkan");
    const DispatchPlan dispatch = plan_dispatch(*node, kernels_);
    const VkPipeline pipeline = pipelines_.get(dispatch.shader);
    const std::vector<RowChunk> chunks =
        row_chunks(*node, dispatch, device_.limits().max_storage_range, device_.limits().storage_offset_alignment);
    for (const RowChunk& rows : chunks) steps_.push_back({node, dispatch, pipeline, records, rows, chunks.size() > 1});
    ++records;
  }
  const std::vector<const Tensor*> inputs = inputs_of(graph), outputs = outputs_of(graph);
  // a record for every dispatched node, fused or not: the figure scratch_bytes reports
  const VkDeviceSize record_bytes = dispatch_count(graph) * sizeof(DispatchRecord);
  if (record_bytes > records_.size()) records_ = Buffer(device_, record_bytes, Buffer::Use::kUpload);
  if (staged_bytes(inputs) > upload_.size()) upload_ = Buffer(device_, staged_bytes(inputs), Buffer::Use::kUpload);
  if (staged_bytes(outputs) > readback_.size()) readback_ = Buffer(device_, staged_bytes(outputs), Buffer::Use::kReadback);

  inputs_.clear();
  outputs_.clear();
  VkDeviceSize staged = 0;
  for (const Tensor* t : inputs) {
    inputs_.push_back({t, locate(*t), staged});
    staged += staged_size(*t);
  }
  staged = 0;
  for (const Tensor* t : outputs) {
    outputs_.push_back({t, locate(*t), staged});
    staged += staged_size(*t);
  }
  write_descriptors();
  allocated_ = &graph;
}

void VulkanBackend::write_descriptors() {
  if (steps_.size() > descriptor_sets_) {
    if (descriptor_pool_) vkDestroyDescriptorPool(device_.handle(), descriptor_pool_, nullptr);
    descriptor_sets_ = std::max<size_t>(steps_.size(), 2 * descriptor_sets_);
    const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, static_cast<uint32_t>(descriptor_sets_ * kBindings)};
    VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    info.maxSets = static_cast<uint32_t>(descriptor_sets_);
    info.poolSizeCount = 1;
    info.pPoolSizes = &size;
    check(vkCreateDescriptorPool(device_.handle(), &info, nullptr, &descriptor_pool_), "vkCreateDescriptorPool");
  } else {
    check(vkResetDescriptorPool(device_.handle(), descriptor_pool_, 0), "vkResetDescriptorPool");
  }
  const std::vector<VkDescriptorSetLayout> layouts(steps_.size(), pipelines_.set_layout());
  std::vector<VkDescriptorSet> sets(steps_.size());
  if (!steps_.empty()) {
    VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    alloc.descriptorPool = descriptor_pool_;
    alloc.descriptorSetCount = static_cast<uint32_t>(sets.size());
    alloc.pSetLayouts = layouts.data();
    check(vkAllocateDescriptorSets(device_.handle(), &alloc, sets.data()), "vkAllocateDescriptorSets");
  }
  auto* records = static_cast<DispatchRecord*>(records_.mapped());
  std::vector<VkDescriptorBufferInfo> infos(steps_.size() * kBindings);
  std::vector<VkWriteDescriptorSet> writes(steps_.size());
  for (size_t i = 0; i < steps_.size(); ++i) {
    Step& step = steps_[i];
    step.set = sets[i];
    DispatchRecord& record = step.plan.record;
    VkDescriptorBufferInfo* info = &infos[i * kBindings];
    const Tensor* src0 = step.plan.tensors[0];
    if (step.chunked)
      bind_range(info[0], step.src0_offset, src0, step.rows.first_row * src0->nb[1],
                 (step.rows.row_end - step.rows.first_row) * src0->nb[1]);
    else
      bind(info[0], step.src0_offset, src0);
    for (int s = 1; s < 4; ++s) bind(info[s], record.offset[s], step.plan.tensors[s]);
    info[kRecordBinding] = {records_.handle(), 0, VK_WHOLE_SIZE};
    bind(info[kRecordBinding + 1], record.src3[0], step.plan.tensors[4]);
    records[step.record] = record;
    VkWriteDescriptorSet& w = writes[i];
    w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstSet = step.set;
    w.dstBinding = 0;
    w.descriptorCount = kBindings;
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = info;
  }
  vkUpdateDescriptorSets(device_.handle(), static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
}

void VulkanBackend::set_input(const Tensor& input, const void* data, size_t bytes) {
  for (const Copy& c : inputs_)
    if (c.tensor == &input && bytes == input.nbytes()) {
      wait_for_step();
      std::memcpy(static_cast<char*>(upload_.mapped()) + c.staging, data, bytes);
      return;
    }
  throw Error("vulkan backend: cannot set input '" + input.name + "' from " + std::to_string(bytes) + " bytes");
}

void VulkanBackend::get_output(const Tensor& output, void* data, size_t bytes) {
  for (const Copy& c : outputs_)
    if (c.tensor == &output && bytes == output.nbytes()) {
      wait_for_step();
      std::memcpy(data, static_cast<const char*>(readback_.mapped()) + c.staging, bytes);
      return;
    }
  throw Error("vulkan backend: cannot read output '" + output.name + "' into " + std::to_string(bytes) + " bytes");
}

}  // namespace engine::vulkan
