#pragma once
// The SPIR-V of every shader variant, compiled from shaders/*.comp when the library was built
// (kernels/vulkan/CMakeLists.txt writes the table).
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace engine::vulkan {

struct Spirv {
  std::string_view name;  // "mul_mat_q4_0": the source's name and its variant
  const uint32_t* code;
  size_t words;
};

// The shader `name`, or nullptr when the build has none of that name.
const Spirv* find_shader(std::string_view name);

}  // namespace engine::vulkan
