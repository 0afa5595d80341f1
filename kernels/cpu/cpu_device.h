#pragma once
// The CPU as a device: its model name, the system's memory, the kernel set in use.
#include <string>

#include "engine/backend.h"

namespace engine::cpu {

DeviceInfo cpu_device();
// The CPU's model name as /proc/cpuinfo gives it ("CPU" where it gives none).
std::string cpu_model_name();
// The worker threads a CPU backend asked for `requested` threads runs (0: all hardware threads).
int cpu_thread_count(int requested);

}  // namespace engine::cpu
