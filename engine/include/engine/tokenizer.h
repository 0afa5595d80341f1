#pragma once
// Text <-> token ids for a model's vocabulary, read from the GGUF `tokenizer.ggml.*` keys.
// One implementation per `tokenizer.ggml.model` sits behind this interface: "llama"
// (SentencePiece) and "gpt2" (byte-level BPE), both encoded as llama.cpp does.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace engine {

class GGUFFile;
struct Vocab;  // the parsed `tokenizer.ggml.*` keys (engine/src/vocab.h)

// Token kinds, as stored in `tokenizer.ggml.token_type`.
enum class TokenType : int32_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

class Tokenizer {
 public:
  // Reads the vocabulary of `file`. Throws Error when `tokenizer.ggml.model` is missing or
  // unsupported, or when a tokenizer key is malformed (the message names the key).
  static std::unique_ptr<Tokenizer> from_gguf(const GGUFFile& file);

  virtual ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Token ids of `text`, with bos() first when `add_bos` (and the vocab has a BOS); never
  // appends EOS. User-defined tokens written in the text are matched literally; control
  // tokens (e.g. "<|endoftext|>") only when `parse_special`, as llama.cpp's flag of that
  // name. Invalid UTF-8 never fails: SPM encodes it byte by byte, byte-level BPE reads each
  // malformed byte as U+FFFD (as llama.cpp does).
  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special = false) const;

  // The text of one token: byte tokens `<0xNN>` give that raw byte, SPM's U+2581 gives a
  // space, BPE's byte-level characters give their bytes, control and unused tokens give "".
  // Throws Error when `id` is out of range.
  std::string decode_token(int32_t id) const;

  // The text of a sequence: its tokens' pieces concatenated, without the space that encode
  // prefixes: decode(encode(x, b)) == x, except that SPM reads a literal U+2581 in x as a
  // space and gives a space back as U+2581 where the vocabulary spells it in byte tokens, and
  // BPE gives malformed UTF-8 back as U+FFFD (with parse_special, control tokens in x decode
  // to ""), as llama.cpp does.
  std::string decode(const std::vector<int32_t>& ids) const;

  int32_t bos() const;  // -1 when the vocab has none
  int32_t eos() const;  // -1 when the vocab has none
  // Whether prompts start with BOS (`tokenizer.ggml.add_bos_token`).
  bool add_bos_default() const;
  // End of generation: EOS, `tokenizer.ggml.eot_token_id` and `eom_token_id` where present,
  // and the end-of-turn tokens llama.cpp knows by their text (<|im_end|>, <|end|>,
  // <end_of_turn>, <|eot_id|>, <|endoftext|>, ...).
  bool is_eog(int32_t id) const;
  int32_t n_vocab() const;
  // Throws Error when `id` is out of range.
  TokenType token_type(int32_t id) const;

 protected:
  explicit Tokenizer(std::unique_ptr<const Vocab> vocab);
  const Vocab& vocab() const { return *vocab_; }

  // Appends the ids of `text`, which holds no special token that encode matched. `starts_segment` is true
  // at the start of the input and right after a special token.
  virtual void encode_text(std::string_view text, bool starts_segment, std::vector<int32_t>& out) const = 0;
  // The text of token `id`, known to be in range.
  virtual std::string piece(int32_t id) const = 0;

 private:
  void check_id(int32_t id) const;

  std::unique_ptr<const Vocab> vocab_;
};

}  // namespace engine
