#pragma once
// What the backend registry needs of the Vulkan backend, without the Vulkan headers.
#include <memory>
#include <vector>

#include "engine/backend.h"

namespace engine::vulkan {

// Every device the Vulkan loader reports, numbered as BackendParams::device takes them; empty
// when no driver reports one (vulkan_device.cpp).
std::vector<DeviceInfo> devices();
// The backend on device `device` (vulkan_backend.cpp).
std::unique_ptr<Backend> make_backend(int device);
// Host-visible bytes the backend keeps for `graph` beside the plan's buffer (vulkan_storage.cpp).
size_t scratch_bytes(const Graph& graph);

}  // namespace engine::vulkan
