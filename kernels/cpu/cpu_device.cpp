#include "cpu/cpu_device.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>

#include "cpu/cpu_features.h"
#include "engine/host_memory.h"

namespace engine::cpu {
namespace {

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      return line.substr(line.find_first_not_of(" \t", line.find(':') + 1));
  return "CPU";
}

const char* kernel_set_name(SimdLevel level) {
  switch (level) {
    case SimdLevel::kScalar: return "scalar";
    case SimdLevel::kAvx2: return "avx2";
    case SimdLevel::kAvx512: return "avx512";
    case SimdLevel::kAvx512Bf16: return "avx512-bf16";
  }
  return "?";
}

}  // namespace

int cpu_thread_count(int requested) {
  return requested > 0 ? requested : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

DeviceInfo cpu_device() {
  std::string kernels = kernel_set_name(simd_level());
  if (amx_in_use()) kernels += "+amx";
  return DeviceInfo{"cpu", 0, cpu_model_name(), total_host_memory(), available_host_memory(), kernels, "cpu"};
}

}  // namespace engine::cpu
