#include "bpe_pre_tokenizer.h"

#include <algorithm>
#include <cstdint>

#include "unicode_categories.h"
#include "utf8.h"

namespace engine {
namespace {

// The text as code points, with the classes the patterns test. Positions past the end
// answer "no" to every test, as a regex does at the end of input.
class CodePoints {
 public:
  explicit CodePoints(std::string_view text) {
    for (size_t pos = 0; pos < text.size();) {
      const size_t length = utf8_char_length(text, pos);
      const uint32_t cp = utf8_code_point(text, pos, length);
      cps_.push_back(cp);
      classes_.push_back(classify_code_point(cp));
      offsets_.push_back(pos);
      pos += length;
    }
    offsets_.push_back(text.size());
  }

  size_t size() const { return cps_.size(); }
  size_t offset(size_t i) const { return offsets_[i]; }
  bool is(size_t i, uint32_t cp) const { return i < size() && cps_[i] == cp; }
  bool is(size_t i, CodepointClass c) const { return i < size() && classes_[i] == c; }
  bool is_line_break(size_t i) const { return is(i, '\r') || is(i, '\n'); }
  // `cp` (ASCII) with its case ignored.
  bool is_ignoring_case(size_t i, char lower) const {
    return i < size() && (cps_[i] == static_cast<uint32_t>(lower) || cps_[i] + 32 == static_cast<uint32_t>(lower));
  }
  // End of the run of code points of class `c` starting at `i`.
  size_t run_end(size_t i, CodepointClass c) const {
    while (is(i, c)) ++i;
    return i;
  }

 private:
  std::vector<uint32_t> cps_;
  std::vector<CodepointClass> classes_;
  std::vector<size_t> offsets_;
};

// 's|'t|'re|'ve|'m|'ll|'d at `i`, optionally ignoring case: the match length, or 0.
size_t match_contraction(const CodePoints& s, size_t i, bool ignore_case) {
  if (!s.is(i, '\'')) return 0;
  auto is = [&](size_t at, char lower) { return ignore_case ? s.is_ignoring_case(at, lower) : s.is(at, lower); };
  if (is(i + 1, 's') || is(i + 1, 't') || is(i + 1, 'm') || is(i + 1, 'd')) return 2;
  if ((is(i + 1, 'r') && is(i + 2, 'e')) || (is(i + 1, 'v') && is(i + 2, 'e')) || (is(i + 1, 'l') && is(i + 2, 'l'))) {
    return 3;
  }
  return 0;
}

// \s+(?!\S)|\s+ at whitespace `i`: a run of whitespace, less its last character when a
// non-space follows, so that character can lead the next piece.
size_t match_trailing_whitespace(const CodePoints& s, size_t i) {
  const size_t end = s.run_end(i, CodepointClass::kWhitespace);
  return end == s.size() || end - i == 1 ? end - i : end - i - 1;
}

size_t match_gpt2(const CodePoints& s, size_t i) {
  if (const size_t m = match_contraction(s, i, false)) return m;
  // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+'
  const size_t start = s.is(i, ' ') ? i + 1 : i;
  for (CodepointClass c : {CodepointClass::kLetter, CodepointClass::kNumber, CodepointClass::kOther}) {
    if (s.is(start, c)) return s.run_end(start, c) - i;
  }
  return match_trailing_whitespace(s, i);
}

// Llama 3's pattern, whose numbers are pieces of up to `max_digits` digits.
size_t match_llama3(const CodePoints& s, size_t i, size_t max_digits) {
  if (const size_t m = match_contraction(s, i, true)) return m;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (s.is(i, CodepointClass::kLetter)) return s.run_end(i, CodepointClass::kLetter) - i;
  if (!s.is_line_break(i) && !s.is(i, CodepointClass::kNumber) && s.is(i + 1, CodepointClass::kLetter)) {
    return s.run_end(i + 1, CodepointClass::kLetter) - i;
  }
  // \p{N}{1,max_digits}
  if (s.is(i, CodepointClass::kNumber)) return std::min(max_digits, s.run_end(i, CodepointClass::kNumber) - i);
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  const size_t start = s.is(i, ' ') ? i + 1 : i;
  if (s.is(start, CodepointClass::kOther)) {
    size_t end = s.run_end(start, CodepointClass::kOther);
    while (s.is_line_break(end)) ++end;
    return end - i;
  }
  // \s*[\r\n]+: the whitespace up to and including its last line break.
  const size_t end = s.run_end(i, CodepointClass::kWhitespace);
  for (size_t last = end; last > i; --last) {
    if (s.is_line_break(last - 1)) return last - i;
  }
  return match_trailing_whitespace(s, i);
}

}  // namespace

std::vector<std::string_view> pre_tokenize(std::string_view text, PreTokenizer kind) {
  const CodePoints s(text);
  std::vector<std::string_view> pieces;
  for (size_t i = 0; i < s.size();) {
    const size_t length = kind == PreTokenizer::kGpt2     ? match_gpt2(s, i)
                          : kind == PreTokenizer::kLlama3 ? match_llama3(s, i, 3)
                                                          : match_llama3(s, i, 1);
    pieces.push_back(text.substr(s.offset(i), s.offset(i + length) - s.offset(i)));
    i += length;
  }
  return pieces;
}

}  // namespace engine
