#pragma once
// Pre-tokenizers of byte-level BPE vocabularies (`tokenizer.ggml.pre`): each splits text
// into the pieces its model's regex matches, and BPE merges stay within one piece. The
// regexes are matched by hand, since no regex library here knows Unicode classes.
#include <string_view>
#include <vector>

namespace engine {

enum class PreTokenizer {
  // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  kGpt2,
  // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
  // \s*[\r\n]+|\s+(?!\S)|\s+
  kLlama3,
  // Llama 3's with one digit a piece: ...|\p{N}|...
  kQwen2,
};

// The pieces of `text`, in order; together they are exactly `text`. Bytes that are not
// well-formed UTF-8 count as code points of no class (like punctuation).
std::vector<std::string_view> pre_tokenize(std::string_view text, PreTokenizer kind);

}  // namespace engine
