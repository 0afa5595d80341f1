#include "vulkan/vulkan_buffer.h"

#include <string>
#include <utility>

#include "engine/error.h"

namespace engine::vulkan {

Buffer::Buffer(const Device& device, VkDeviceSize bytes, Use use) : device_(device.handle()), size_(bytes) {
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = bytes > 0 ? bytes : 4;  // Vulkan has no empty buffers
  info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
               (use == Use::kStorage ? VK_BUFFER_USAGE_STORAGE_BUFFER_BIT : 0);
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vkCreateBuffer(device_, &info, nullptr, &buffer_), "vkCreateBuffer");
  VkMemoryRequirements needs;
  vkGetBufferMemoryRequirements(device_, buffer_, &needs);
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = needs.size;
  switch (use) {
    case Use::kStorage:
      alloc.memoryTypeIndex = device.memory_type(needs.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
      break;
    case Use::kUpload:
      alloc.memoryTypeIndex = device.memory_type(
          needs.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0);
      break;
    case Use::kReadback:
      alloc.memoryTypeIndex = device.memory_type(
          needs.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
          VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
      break;
  }
  const VkResult allocated = vkAllocateMemory(device_, &alloc, nullptr, &memory_);
  if (allocated != VK_SUCCESS) {
    release();
    throw Error("vulkan: cannot allocate " + std::to_string(bytes) + " bytes on " + device.info().name + " (VkResult " +
                std::to_string(allocated) + ")");
  }
  check(vkBindBufferMemory(device_, buffer_, memory_, 0), "vkBindBufferMemory");
  if (use != Use::kStorage) check(vkMapMemory(device_, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_), "vkMapMemory");
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    device_ = std::exchange(other.device_, VK_NULL_HANDLE);
    buffer_ = std::exchange(other.buffer_, VK_NULL_HANDLE);
    memory_ = std::exchange(other.memory_, VK_NULL_HANDLE);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, nullptr);
  }
  return *this;
}

void Buffer::release() {
  if (buffer_) vkDestroyBuffer(device_, buffer_, nullptr);
  if (memory_) vkFreeMemory(device_, memory_, nullptr);
  buffer_ = VK_NULL_HANDLE;
  memory_ = VK_NULL_HANDLE;
  mapped_ = nullptr;
  size_ = 0;
}

}  // namespace engine::vulkan
