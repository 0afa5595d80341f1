#include "byte_level.h"

#include <array>
#include <cstdint>

#include "utf8.h"

namespace engine {
namespace {

// The alphabet's code points never exceed U+0143 (256 + 67 unprintable bytes).
constexpr uint32_t kAlphabetEnd = 0x144;

struct ByteAlphabet {
  std::array<uint32_t, 256> code_point{};  // byte -> code point
  std::array<int, kAlphabetEnd> byte{};    // code point -> byte, -1 outside the alphabet

  ByteAlphabet() {
    byte.fill(-1);
    uint32_t next_unprintable = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      code_point[b] = printable ? static_cast<uint32_t>(b) : next_unprintable++;
      byte[code_point[b]] = b;
    }
  }
};

const ByteAlphabet& alphabet() {
  static const ByteAlphabet instance;
  return instance;
}

}  // namespace

std::string byte_level_encode(std::string_view bytes) {
  const ByteAlphabet& a = alphabet();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) utf8_append(a.code_point[static_cast<unsigned char>(c)], out);
  return out;
}

std::string byte_level_decode(std::string_view text) {
  const ByteAlphabet& a = alphabet();
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t length = utf8_char_length(text, pos);
    const uint32_t cp = utf8_code_point(text, pos, length);
    if (cp < kAlphabetEnd && a.byte[cp] >= 0) {
      out += static_cast<char>(a.byte[cp]);
    } else {
      out.append(text.substr(pos, length));
    }
    pos += length;
  }
  return out;
}

}  // namespace engine
