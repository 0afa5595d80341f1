#pragma once
// UTF-8 helpers for tokenizers, which must accept any bytes without failing.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace engine {

// Length in bytes of the UTF-8 character starting at `s[pos]` (pos < s.size()); 1 when the
// bytes there are not a well-formed sequence, so a bad byte stands alone.
size_t utf8_char_length(std::string_view s, size_t pos);

// Code point of the `length`-byte character at `s[pos]`, `length` as utf8_char_length gives it;
// U+FFFD for a byte that stands alone because it is not well-formed UTF-8.
uint32_t utf8_code_point(std::string_view s, size_t pos, size_t length);

}  // namespace engine
