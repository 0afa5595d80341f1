#pragma once
// The parsed and validated `tokenizer.ggml.*` keys of a GGUF file, shared by every
// tokenizer implementation.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/tokenizer.h"

namespace engine {

class GGUFFile;

// Values a tokenizer model assumes when the file leaves a key out.
struct VocabDefaults {
  int32_t bos = -1;
  int32_t eos = -1;
  int32_t unk = -1;
  bool add_bos = false;
  bool add_space_prefix = false;
};

struct Vocab {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<TokenType> types;
  std::array<int32_t, 256> byte_to_id{};  // id of byte token `<0xNN>`, -1 when absent
  std::vector<int32_t> specials;          // user-defined and control token ids, longest text first
  int32_t bos = -1;
  int32_t eos = -1;
  int32_t eot = -1;
  int32_t unk = -1;
  std::vector<int32_t> eog;  // sorted: EOS, EOT, EOM and the end-of-turn tokens llama.cpp knows by text
  bool add_bos = false;
  bool add_space_prefix = false;

  int32_t size() const { return static_cast<int32_t>(tokens.size()); }
  // Id of the normal or user-defined token spelled `text` (the only kinds plain text may
  // become), or -1.
  int32_t find_text(std::string_view text) const;
  // The one-byte text of byte token `id` (`<0xNN>`), or "" when `id` is no byte token.
  std::string byte_piece(int32_t id) const;

  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int32_t, TextHash, std::equal_to<>> text_to_id;
};

// Reads the vocabulary keys of `file`. Throws Error naming the key when an array is missing,
// has the wrong element type or length, or a special token id is out of range.
Vocab read_vocab(const GGUFFile& file, const VocabDefaults& defaults);

}  // namespace engine
