#pragma once
// A Vulkan device: the process's one instance, the physical devices it reports (as DeviceInfo),
// and, for the device a backend runs on, its logical device, compute queue and the limits the
// backend's buffers and dispatches must keep to.
#include <vulkan/vulkan.h>

#include <cstdint>
#include <vector>

#include "engine/backend.h"
#include "vulkan/vulkan_entry.h"

namespace engine::vulkan {

// Throws Error naming `what` and the result unless `result` is VK_SUCCESS.
void check(VkResult result, const char* what);

struct Limits {
  VkDeviceSize storage_offset_alignment;  // a storage buffer binding's offset is a multiple of it
  VkDeviceSize max_storage_range;         // the most bytes one storage buffer binding spans
  uint32_t max_workgroups[3];
  uint32_t max_shared_bytes;              // a workgroup's shared memory
  uint32_t subgroup_size;
  bool subgroup_arithmetic;               // compute shaders have subgroupAdd and the like
  bool timestamps;                        // the compute queue writes timestamps
  double timestamp_ns;                    // nanoseconds per timestamp tick
};

class Device {
 public:
  explicit Device(int index);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  VkDevice handle() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  const DeviceInfo& info() const { return info_; }
  const Limits& limits() const { return limits_; }
  // A memory type among `allowed` (a VkMemoryRequirements mask) with every flag of `required`,
  // the first also having `preferred`; throws Error when none has `required`.
  uint32_t memory_type(uint32_t allowed, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) const;

 private:
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkPhysicalDeviceMemoryProperties memory_{};
  DeviceInfo info_;
  Limits limits_{};
};

}  // namespace engine::vulkan
