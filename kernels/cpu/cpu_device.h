#pragma once
// The CPU as a device: its model name, the system's memory, the kernel set in use.
#include <string>

#include "engine/backend.h"

namespace engine::cpu {

DeviceInfo cpu_device();
// The CPU's model name as /proc/cpuinfo gives it ("CPU" where it gives none).
std::string cpu_model_name();
// The model name with what a name may hide (virtual machines often show one name for several
// generations): CPUID's family, model and stepping, and the L1 data cache the packed layout is
// sized by. Decode forms timed on one such CPU are kept for it alone.
std::string cpu_model_key();
// The worker threads a CPU backend asked for `requested` threads runs (0: all hardware threads).
int cpu_thread_count(int requested);

}  // namespace engine::cpu
