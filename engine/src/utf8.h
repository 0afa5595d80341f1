#pragma once
// UTF-8 helpers for tokenizers, which must accept any bytes without failing.
#include <cstddef>
#include <string_view>

namespace engine {

// Length in bytes of the UTF-8 character starting at `s[pos]` (pos < s.size()); 1 when the
// bytes there are not a well-formed sequence, so a bad byte stands alone.
size_t utf8_char_length(std::string_view s, size_t pos);

}  // namespace engine
