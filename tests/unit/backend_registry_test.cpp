// The backend registry: what is built in, the devices, and the errors that name what is wrong.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/backend.h"
#include "engine/error.h"

namespace {

using namespace engine;

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string error_of(std::string_view backend, int device) {
  try {
    make_backend(backend, BackendParams{device, 1});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(BackendRegistry, TheCpuIsBuiltInWithOneDevice) {
  EXPECT_TRUE(contains(available_backends(), "cpu"));
  for (const std::string& b : available_backends()) EXPECT_TRUE(contains(known_backends(), b)) << b;
  const std::vector<DeviceInfo> devices = list_devices();
  const auto cpu = std::find_if(devices.begin(), devices.end(), [](const DeviceInfo& d) { return d.backend == "cpu"; });
  ASSERT_NE(cpu, devices.end());
  EXPECT_EQ(cpu->index, 0);
  EXPECT_FALSE(cpu->name.empty());
  EXPECT_GT(cpu->memory_bytes, size_t{1} << 28);
  EXPECT_LE(cpu->free_bytes, cpu->memory_bytes);
  EXPECT_FALSE(cpu->driver.empty());

  const auto backend = make_backend("cpu", BackendParams{0, 2});
  EXPECT_EQ(backend->name(), "cpu");
  EXPECT_EQ(backend->device().name, cpu->name);
}

TEST(BackendRegistry, ErrorsNameWhatIsWrong) {
  EXPECT_NE(error_of("tpu", 0).find("unknown backend 'tpu' (known: cpu, cuda, vulkan)"), std::string::npos)
      << error_of("tpu", 0);
  EXPECT_NE(error_of("cpu", 1).find("cpu: no device 1 (it has 1"), std::string::npos) << error_of("cpu", 1);
  EXPECT_NE(error_of("cpu", -1).find("no device -1"), std::string::npos);
  for (const std::string& b : known_backends()) {
    if (contains(available_backends(), b)) continue;
    EXPECT_NE(error_of(b, 0).find(b + ": not built into this binary (built in: cpu"), std::string::npos) << error_of(b, 0);
  }
}

}  // namespace
