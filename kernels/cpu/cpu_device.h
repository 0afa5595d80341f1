#pragma once
// The CPU as a device: its model name, the system's memory, the kernel set in use.
#include "engine/backend.h"

namespace engine::cpu {

DeviceInfo cpu_device();

}  // namespace engine::cpu
