#include "cpu/cpu_device.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>

#include "cpu/cpu_features.h"
#include "engine/host_memory.h"

namespace engine::cpu {

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      return line.substr(line.find_first_not_of(" \t", line.find(':') + 1));
  return "CPU";
}

int cpu_thread_count(int requested) {
  return requested > 0 ? requested : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

DeviceInfo cpu_device() {
  std::string kernels = simd_level_name(simd_level());
  if (amx_in_use()) kernels += "+amx";
  return DeviceInfo{"cpu", 0, cpu_model_name(), total_host_memory(), available_host_memory(), kernels, "cpu"};
}

}  // namespace engine::cpu
