#pragma once
// Element types and their block layouts, exactly as GGUF stores them.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace engine {

// Values are the GGUF / ggml type ids.
enum class DType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  I32 = 26,
  BF16 = 30,
};

struct DTypeInfo {
  DType type;
  std::string_view name;  // "f32", "q4_0", "q4_K", ... as ggml names them
  int64_t block_size;     // elements per block
  size_t block_bytes;     // bytes per block
  bool quantized;
};

// The one table of dtype facts.
const DTypeInfo& dtype_info(DType t);
inline std::string_view dtype_name(DType t) { return dtype_info(t).name; }
// The dtype for a GGUF type id, or nullopt when the id is unknown or unsupported.
std::optional<DType> dtype_from_gguf(uint32_t id);
// The dtype named `name` ("q4_0", "Q4_0", "f16", ...), or nullopt.
std::optional<DType> dtype_from_name(std::string_view name);
// Bytes of `n` consecutive elements; `n` must be a multiple of the block size.
size_t row_bytes(DType t, int64_t n);

}  // namespace engine
