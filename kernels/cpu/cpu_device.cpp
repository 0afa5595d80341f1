#include "cpu/cpu_device.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>

#include "cpu/cpu_features.h"
#include "cpu/repack.h"
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

std::string cpu_model_key() {
  std::string key = cpu_model_name();
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
    const unsigned base_family = (eax >> 8) & 0xF, base_model = (eax >> 4) & 0xF;
    const unsigned family = base_family == 0xF ? base_family + ((eax >> 20) & 0xFF) : base_family;
    const unsigned model = base_family == 0x6 || base_family == 0xF ? base_model + (((eax >> 16) & 0xF) << 4) : base_model;
    key += ", family " + std::to_string(family) + " model " + std::to_string(model) + " stepping " + std::to_string(eax & 0xF);
  }
#endif
  return key + ", L1d " + std::to_string(long_group_bytes() / 1024) + " KiB";
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
