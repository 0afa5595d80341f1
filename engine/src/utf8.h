#pragma once
// UTF-8 helpers for tokenizers, which must accept any bytes without failing.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace engine {

// Length in bytes of the UTF-8 character starting at `s[pos]` (pos < s.size()); 1 when the
// bytes there are not a well-formed sequence, so a bad byte stands alone.
size_t utf8_char_length(std::string_view s, size_t pos);

// Length of the character at `s[pos]` as llama.cpp's SentencePiece tokenizer splits text: by
// the high bits of its lead byte alone (0xC-0xD: 2, 0xE: 3, 0xF: 4, else 1), whatever the bytes
// after it are, cut at the end of `s`.
size_t utf8_lead_length(std::string_view s, size_t pos);

// Code point of the `length`-byte character at `s[pos]`, `length` as utf8_char_length gives it;
// U+FFFD for a byte that stands alone because it is not well-formed UTF-8.
uint32_t utf8_code_point(std::string_view s, size_t pos, size_t length);

// Appends code point `cp` (at most U+10FFFF) as UTF-8.
void utf8_append(uint32_t cp, std::string& out);

// `s` as llama.cpp's byte-level BPE tokenizers read it: each character taken as
// utf8_char_length does (a lead byte and the continuation bytes it announces, overlong forms
// included) and written back as the shortest UTF-8 of its code point; each byte that starts
// no character, or one past U+10FFFF, becomes U+FFFD.
std::string utf8_as_llama_reads(std::string_view s);

}  // namespace engine
