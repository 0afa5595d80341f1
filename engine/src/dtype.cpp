#include "engine/dtype.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "engine/error.h"

namespace engine {
namespace {

constexpr std::array<DTypeInfo, 16> kTable{{
    {DType::F32, "f32", 1, 4, false},
    {DType::F16, "f16", 1, 2, false},
    {DType::Q4_0, "q4_0", 32, 18, true},
    {DType::Q4_1, "q4_1", 32, 20, true},
    {DType::Q5_0, "q5_0", 32, 22, true},
    {DType::Q5_1, "q5_1", 32, 24, true},
    {DType::Q8_0, "q8_0", 32, 34, true},
    {DType::Q8_1, "q8_1", 32, 36, true},
    {DType::Q2_K, "q2_K", 256, 84, true},
    {DType::Q3_K, "q3_K", 256, 110, true},
    {DType::Q4_K, "q4_K", 256, 144, true},
    {DType::Q5_K, "q5_K", 256, 176, true},
    {DType::Q6_K, "q6_K", 256, 210, true},
    {DType::Q8_K, "q8_K", 256, 292, true},
    {DType::I32, "i32", 1, 4, false},
    {DType::BF16, "bf16", 1, 2, false},
}};

}  // namespace

const DTypeInfo& dtype_info(DType t) {
  for (const auto& info : kTable)
    if (info.type == t) return info;
  throw Error("unknown dtype id " + std::to_string(static_cast<uint32_t>(t)));
}

std::optional<DType> dtype_from_gguf(uint32_t id) {
  for (const auto& info : kTable)
    if (static_cast<uint32_t>(info.type) == id) return info.type;
  return std::nullopt;
}

std::optional<DType> dtype_from_name(std::string_view name) {
  auto lower = [](std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
  };
  for (const auto& info : kTable)
    if (lower(info.name) == lower(name)) return info.type;
  return std::nullopt;
}

size_t row_bytes(DType t, int64_t n) {
  const auto& info = dtype_info(t);
  if (n < 0 || n % info.block_size != 0)
    throw Error(std::to_string(n) + " elements is not a whole number of " + std::string(info.name) + " blocks of " +
                std::to_string(info.block_size));
  return static_cast<size_t>(n / info.block_size) * info.block_bytes;
}

}  // namespace engine
