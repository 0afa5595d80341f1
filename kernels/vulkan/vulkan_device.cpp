#include "vulkan/vulkan_device.h"

#include <algorithm>
#include <string>

#include "engine/error.h"
#include "engine/host_memory.h"

namespace engine::vulkan {
namespace {

// The process's instance, created on first use; VK_NULL_HANDLE when no driver can make one.
VkInstance instance() {
  static const VkInstance made = [] {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "engine";
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.pApplicationInfo = &app;
    VkInstance created = VK_NULL_HANDLE;
    return vkCreateInstance(&info, nullptr, &created) == VK_SUCCESS ? created : VK_NULL_HANDLE;
  }();
  return made;
}

std::vector<VkPhysicalDevice> physical_devices() {
  const VkInstance vk = instance();
  if (!vk) return {};
  uint32_t count = 0;
  if (vkEnumeratePhysicalDevices(vk, &count, nullptr) != VK_SUCCESS) return {};
  std::vector<VkPhysicalDevice> found(count);
  if (vkEnumeratePhysicalDevices(vk, &count, found.data()) != VK_SUCCESS) return {};
  found.resize(count);
  return found;
}

const char* type_name(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete-gpu";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated-gpu";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual-gpu";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "software";
    default: return "other";
  }
}

bool has_extension(VkPhysicalDevice pd, std::string_view name) {
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> all(count);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &count, all.data());
  return std::any_of(all.begin(), all.end(), [&](const VkExtensionProperties& e) { return name == e.extensionName; });
}

DeviceInfo describe(VkPhysicalDevice pd, int index) {
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  subgroup.pNext = &driver;
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &subgroup;
  vkGetPhysicalDeviceProperties2(pd, &props);

  const bool budgets = has_extension(pd, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 memory{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
  if (budgets) memory.pNext = &budget;
  vkGetPhysicalDeviceMemoryProperties2(pd, &memory);

  DeviceInfo d;
  d.backend = "vulkan";
  d.index = index;
  d.name = props.properties.deviceName;
  d.type = type_name(props.properties.deviceType);
  d.subgroup_size = static_cast<int>(subgroup.subgroupSize);
  d.driver = std::string(driver.driverName) + " " + driver.driverInfo;
  // The device's memory is its largest device-local heap; a software device's is the host's.
  for (uint32_t h = 0; h < memory.memoryProperties.memoryHeapCount; ++h) {
    const VkMemoryHeap& heap = memory.memoryProperties.memoryHeaps[h];
    if (!(heap.flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) || heap.size < d.memory_bytes) continue;
    d.memory_bytes = heap.size;
    d.free_bytes = budgets ? std::min<VkDeviceSize>(heap.size, budget.heapBudget[h] - std::min(budget.heapBudget[h], budget.heapUsage[h]))
                           : heap.size;
  }
  if (props.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) {
    d.memory_bytes = total_host_memory();
    d.free_bytes = available_host_memory();
  }
  return d;
}

}  // namespace

void check(VkResult result, const char* what) {
  if (result != VK_SUCCESS) throw Error(std::string("vulkan: ") + what + " failed (VkResult " + std::to_string(result) + ")");
}

std::vector<DeviceInfo> devices() {
  std::vector<DeviceInfo> all;
  for (VkPhysicalDevice pd : physical_devices()) all.push_back(describe(pd, static_cast<int>(all.size())));
  return all;
}

Device::Device(int index) {
  const std::vector<VkPhysicalDevice> all = physical_devices();
  if (index < 0 || static_cast<size_t>(index) >= all.size())
    throw Error("vulkan: no device " + std::to_string(index) + " (it has " + std::to_string(all.size()) + ")");
  physical_ = all[static_cast<size_t>(index)];
  info_ = describe(physical_, index);

  VkPhysicalDeviceVulkan11Features features11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features features12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  features11.pNext = &features12;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &features11;
  vkGetPhysicalDeviceFeatures2(physical_, &features);
  // The shaders read quantized blocks byte by byte and store f16 KV entries one by one.
  if (!features11.storageBuffer16BitAccess || !features12.storageBuffer8BitAccess)
    throw Error("vulkan: device " + std::to_string(index) + " (" + info_.name +
                ") lacks 8- or 16-bit storage buffer access, which the shaders need");
  VkPhysicalDeviceVulkan11Features enable11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features enable12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  enable11.pNext = &enable12;
  enable11.storageBuffer16BitAccess = VK_TRUE;
  enable12.storageBuffer8BitAccess = VK_TRUE;

  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &family_count, families.data());
  // A compute queue, one without graphics where there is one (it is not shared with a display).
  int chosen = -1;
  for (uint32_t f = 0; f < family_count; ++f) {
    if (!(families[f].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    if (chosen < 0 || !(families[f].queueFlags & VK_QUEUE_GRAPHICS_BIT)) chosen = static_cast<int>(f);
  }
  if (chosen < 0) throw Error("vulkan: device " + info_.name + " has no compute queue");
  queue_family_ = static_cast<uint32_t>(chosen);

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = queue_family_;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  device_info.pNext = &enable11;
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info;
  check(vkCreateDevice(physical_, &device_info, nullptr, &device_), "vkCreateDevice");
  vkGetDeviceQueue(device_, queue_family_, 0, &queue_);

  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(physical_, &props);
  vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);
  limits_.storage_offset_alignment = props.limits.minStorageBufferOffsetAlignment;
  limits_.max_storage_range = props.limits.maxStorageBufferRange;
  limits_.max_shared_bytes = props.limits.maxComputeSharedMemorySize;
  std::copy(props.limits.maxComputeWorkGroupCount, props.limits.maxComputeWorkGroupCount + 3, limits_.max_workgroups);
  limits_.subgroup_size = static_cast<uint32_t>(info_.subgroup_size);
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props2.pNext = &subgroup;
  vkGetPhysicalDeviceProperties2(physical_, &props2);
  limits_.subgroup_arithmetic = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                                (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
  limits_.timestamps = props.limits.timestampComputeAndGraphics && families[queue_family_].timestampValidBits > 0;
  limits_.timestamp_ns = props.limits.timestampPeriod;
}

Device::~Device() {
  if (device_) {
    vkDeviceWaitIdle(device_);
    vkDestroyDevice(device_, nullptr);
  }
}

uint32_t Device::memory_type(uint32_t allowed, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) const {
  int fallback = -1;
  for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags flags = memory_.memoryTypes[i].propertyFlags;
    if (!(allowed & (1u << i)) || (flags & required) != required) continue;
    if ((flags & preferred) == preferred) return i;
    if (fallback < 0) fallback = static_cast<int>(i);
  }
  if (fallback < 0) throw Error("vulkan: device " + info_.name + " has no memory type for this buffer");
  return static_cast<uint32_t>(fallback);
}

}  // namespace engine::vulkan
