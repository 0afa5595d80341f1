#pragma once
// What the backend registry needs of the CUDA backend, without the CUDA headers.
#include <memory>
#include <vector>

#include "engine/backend.h"

namespace engine::cuda {

// Every device the CUDA driver reports, numbered as BackendParams::device takes them; empty
// when there is no driver or no device (cuda_device.cpp).
std::vector<DeviceInfo> devices();
// The backend on device `device` (cuda_backend.cpp).
std::unique_ptr<Backend> make_backend(int device);
// Host bytes the backend keeps for `graph` beside the plan's buffer: the pinned staging of
// the step's inputs and outputs (cuda_backend.cpp).
size_t scratch_bytes(const Graph& graph);

}  // namespace engine::cuda
