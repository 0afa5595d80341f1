#pragma once
// GPT-2's byte-level alphabet: byte-level BPE vocabularies spell every byte as a printable
// code point (the printable Latin-1 bytes as themselves, the rest as U+0100 upwards).
#include <string>
#include <string_view>

namespace engine {

// `bytes` spelled in the byte-level alphabet (UTF-8), one code point per byte.
std::string byte_level_encode(std::string_view bytes);

// The bytes that `text`, spelled in the byte-level alphabet, stands for. A character outside
// the alphabet (a vocab token not made of it) is kept as its UTF-8 bytes.
std::string byte_level_decode(std::string_view text);

}  // namespace engine
