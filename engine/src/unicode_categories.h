#pragma once
// The Unicode classes that BPE pre-tokenizer patterns test: \p{L}, \p{N} and \s.
#include <cstddef>
#include <cstdint>

namespace engine {

enum class CodepointClass : uint8_t { kOther, kLetter, kNumber, kWhitespace };

// Class of code point `cp`: letters are general category L*, numbers N*, whitespace the
// White_Space property (as regex \s); everything else, invalid code points included, is kOther.
CodepointClass classify_code_point(uint32_t cp);

// A run of code points of one class; the generated table lists the letter and number runs.
struct CodepointRange {
  uint32_t first;
  uint32_t last;
  CodepointClass kind;
};

// Sorted, non-overlapping; in unicode_categories_table.cpp (generated).
extern const CodepointRange kCodepointRanges[];
extern const size_t kCodepointRangeCount;

}  // namespace engine
