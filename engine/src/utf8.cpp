#include "utf8.h"

#include <algorithm>
#include <string>

namespace engine {

size_t utf8_lead_length(std::string_view s, size_t pos) {
  static constexpr size_t kByHighBits[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return std::min(kByHighBits[static_cast<unsigned char>(s[pos]) >> 4], s.size() - pos);
}

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

void utf8_append(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string utf8_as_llama_reads(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t pos = 0; pos < s.size();) {
    size_t length = utf8_char_length(s, pos);
    uint32_t cp = utf8_code_point(s, pos, length);
    if (cp > 0x10FFFF) cp = 0xFFFD, length = 1;
    utf8_append(cp, out);
    pos += length;
  }
  return out;
}

}  // namespace engine
