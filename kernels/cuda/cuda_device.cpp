// The devices the CUDA driver reports, as DeviceInfo; and the check of runtime calls.
#include <string>

#include "cuda/cuda_check.h"
#include "cuda/cuda_entry.h"
#include "engine/error.h"

namespace engine::cuda {

void check(cudaError_t result, const char* what) {
  if (result != cudaSuccess) throw Error(std::string("cuda: ") + what + " failed: " + cudaGetErrorString(result));
}

std::vector<DeviceInfo> devices() {
  int count = 0;
  // No driver, no device, or a driver older than the runtime: no devices, as the registry reports it.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  int driver_version = 0;
  cudaDriverGetVersion(&driver_version);
  std::vector<DeviceInfo> all;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp props{};
    check(cudaGetDeviceProperties(&props, i), "cudaGetDeviceProperties");
    DeviceInfo d;
    d.backend = "cuda";
    d.index = i;
    d.name = props.name;
    d.type = props.integrated ? "integrated-gpu" : "discrete-gpu";
    d.subgroup_size = props.warpSize;
    d.driver = "CUDA " + std::to_string(driver_version / 1000) + "." + std::to_string(driver_version % 1000 / 10) +
               ", compute capability " + std::to_string(props.major) + "." + std::to_string(props.minor);
    d.memory_bytes = props.totalGlobalMem;
    d.free_bytes = props.totalGlobalMem;
    int current = 0;
    size_t free = 0, total = 0;
    if (cudaGetDevice(&current) == cudaSuccess && cudaSetDevice(i) == cudaSuccess && cudaMemGetInfo(&free, &total) == cudaSuccess)
      d.free_bytes = free;
    cudaGetLastError();
    cudaSetDevice(current);
    all.push_back(std::move(d));
  }
  return all;
}

}  // namespace engine::cuda
