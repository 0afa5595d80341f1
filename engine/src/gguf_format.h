#pragma once
// GGUF format facts shared by the reader and the writer.
#include <cstddef>
#include <string_view>

#include "engine/gguf.h"

namespace engine {

constexpr std::string_view kGGUFMagic = "GGUF";
constexpr std::string_view kGGUFAlignmentKey = "general.alignment";

// Bytes of a scalar of type `t`; for strings and arrays the fixed part (length, element
// type and count) that any value of that type needs at least.
size_t gguf_min_value_bytes(GGUFType t);

}  // namespace engine
