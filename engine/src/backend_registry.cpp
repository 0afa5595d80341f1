// The backends this product has, which of them this binary was built with, and their devices.
#include <algorithm>
#include <string>

#include "cpu/cpu_device.h"
#include "cpu/scratch.h"
#include "engine/backend.h"
#include "engine/error.h"
#ifdef ENGINE_WITH_CUDA
#include "cuda/cuda_entry.h"
#endif
#ifdef ENGINE_WITH_VULKAN
#include "vulkan/vulkan_entry.h"
#endif

namespace engine {
namespace {

struct BackendEntry {
  std::string_view name;
  std::vector<DeviceInfo> (*devices)();  // nullptr: not built into this binary
  std::unique_ptr<Backend> (*make)(const BackendParams& params);
  size_t (*scratch)(const Graph& graph, const Plan& plan, int n_threads);
  std::string_view how_to_build;  // what a build needs to have it
};

std::vector<DeviceInfo> cpu_devices() { return {cpu::cpu_device()}; }
std::unique_ptr<Backend> make_cpu(const BackendParams& params) { return make_cpu_backend(params.n_threads); }
size_t cpu_scratch(const Graph& graph, const Plan& plan, int n_threads) {
  return cpu::scratch_bytes(graph, plan, cpu::cpu_thread_count(n_threads));
}

constexpr std::string_view kVulkanNeeds = "the Vulkan loader and glslang (tools/setup.sh installs them), then cmake -DENGINE_VULKAN=ON";
#ifdef ENGINE_WITH_VULKAN
std::unique_ptr<Backend> make_vulkan(const BackendParams& params) { return vulkan::make_backend(params.device); }
size_t vulkan_scratch(const Graph& graph, const Plan&, int) { return vulkan::scratch_bytes(graph); }
constexpr BackendEntry kVulkan{"vulkan", vulkan::devices, make_vulkan, vulkan_scratch, kVulkanNeeds};
#else
constexpr BackendEntry kVulkan{"vulkan", nullptr, nullptr, nullptr, kVulkanNeeds};
#endif

constexpr std::string_view kCudaNeeds = "a CUDA toolkit (nvcc on PATH or in /usr/local/cuda), then cmake -DENGINE_CUDA=ON";
#ifdef ENGINE_WITH_CUDA
std::unique_ptr<Backend> make_cuda(const BackendParams& params) { return cuda::make_backend(params.device); }
size_t cuda_scratch(const Graph& graph, const Plan&, int) { return cuda::scratch_bytes(graph); }
constexpr BackendEntry kCuda{"cuda", cuda::devices, make_cuda, cuda_scratch, kCudaNeeds};
#else
constexpr BackendEntry kCuda{"cuda", nullptr, nullptr, nullptr, kCudaNeeds};
#endif

// In name order; a backend this binary was built without has no functions.
constexpr BackendEntry kBackends[] = {
    {"cpu", cpu_devices, make_cpu, cpu_scratch, ""},
    kCuda,
    kVulkan,
};

const BackendEntry& entry(std::string_view name) {
  for (const BackendEntry& b : kBackends)
    if (b.name == name) {
      if (!b.devices) {
        std::string built;
        for (const std::string& a : available_backends()) built += (built.empty() ? "" : ", ") + a;
        throw Error(std::string(name) + ": not built into this binary (built in: " + built + "); building it needs " +
                    std::string(b.how_to_build));
      }
      return b;
    }
  std::string known;
  for (const std::string& k : known_backends()) known += (known.empty() ? "" : ", ") + k;
  throw Error("unknown backend '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace

std::vector<std::string> known_backends() {
  std::vector<std::string> names;
  for (const BackendEntry& b : kBackends) names.emplace_back(b.name);
  return names;
}

std::vector<std::string> available_backends() {
  std::vector<std::string> names;
  for (const BackendEntry& b : kBackends)
    if (b.devices) names.emplace_back(b.name);
  return names;
}

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> all;
  for (const BackendEntry& b : kBackends)
    if (b.devices)
      for (DeviceInfo& d : b.devices()) all.push_back(std::move(d));
  return all;
}

DeviceInfo device_info(std::string_view name, int device) {
  std::vector<DeviceInfo> devices = entry(name).devices();
  if (devices.empty()) throw Error(std::string(name) + ": no device found (no driver reports one)");
  if (device < 0 || static_cast<size_t>(device) >= devices.size())
    throw Error(std::string(name) + ": no device " + std::to_string(device) + " (it has " +
                std::to_string(devices.size()) + ", numbered from 0)");
  return std::move(devices[static_cast<size_t>(device)]);
}

void check_backend(std::string_view name, int device) { device_info(name, device); }

std::unique_ptr<Backend> make_backend(std::string_view name, const BackendParams& params) {
  check_backend(name, params.device);
  return entry(name).make(params);
}

size_t backend_scratch_bytes(std::string_view name, const Graph& graph, const Plan& plan, int n_threads) {
  return entry(name).scratch(graph, plan, n_threads);
}

}  // namespace engine
