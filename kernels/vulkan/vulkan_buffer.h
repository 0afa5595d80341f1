#pragma once
// A Vulkan buffer with its own memory: device-local storage the shaders read and write, or
// host-visible memory (mapped) that data goes up and comes down through.
#include <vulkan/vulkan.h>

#include <cstddef>

#include "vulkan/vulkan_device.h"

namespace engine::vulkan {

class Buffer {
 public:
  enum class Use {
    kStorage,   // device-local; shaders bind it, copies go in and out
    kUpload,    // host-visible, written by the host, copied from
    kReadback,  // host-visible and cached, copied into, read by the host
  };
  Buffer() = default;
  Buffer(const Device& device, VkDeviceSize bytes, Use use);
  ~Buffer() { release(); }
  Buffer(Buffer&& other) noexcept { *this = std::move(other); }
  Buffer& operator=(Buffer&& other) noexcept;

  VkBuffer handle() const { return buffer_; }
  VkDeviceSize size() const { return size_; }
  // The host's view of an upload or readback buffer.
  void* mapped() const { return mapped_; }

 private:
  void release();

  VkDevice device_ = VK_NULL_HANDLE;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  VkDeviceSize size_ = 0;
  void* mapped_ = nullptr;
};

}  // namespace engine::vulkan
