#include "utf8.h"

namespace engine {

size_t utf8_char_length(std::string_view s, size_t pos) {
  const auto lead = static_cast<unsigned char>(s[pos]);
  size_t len = 1;
  if ((lead & 0xE0) == 0xC0) {
    len = 2;
  } else if ((lead & 0xF0) == 0xE0) {
    len = 3;
  } else if ((lead & 0xF8) == 0xF0) {
    len = 4;
  }
  if (len == 1 || pos + len > s.size()) return 1;
  for (size_t i = 1; i < len; ++i) {
    if ((static_cast<unsigned char>(s[pos + i]) & 0xC0) != 0x80) return 1;
  }
  return len;
}

uint32_t utf8_code_point(std::string_view s, size_t pos, size_t length) {
  const auto lead = static_cast<unsigned char>(s[pos]);
  if (length == 1) return lead < 0x80 ? lead : 0xFFFD;
  uint32_t cp = lead & (0x7F >> length);
  for (size_t i = 1; i < length; ++i) cp = (cp << 6) | (static_cast<unsigned char>(s[pos + i]) & 0x3F);
  return cp;
}

}  // namespace engine
