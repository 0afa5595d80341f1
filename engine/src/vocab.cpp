#include "vocab.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "engine/error.h"
#include "engine/gguf.h"

namespace engine {
namespace {

constexpr std::string_view kTokens = "tokenizer.ggml.tokens";
constexpr std::string_view kScores = "tokenizer.ggml.scores";
constexpr std::string_view kTokenTypes = "tokenizer.ggml.token_type";

[[noreturn]] void fail(const GGUFFile& file, std::string_view subject, std::string_view what) {
  std::string message = file.path();
  message.append(": ").append(subject).append(" ").append(what);
  throw Error(message);
}

// "key[i]", naming one array element in messages.
std::string element(std::string_view key, size_t i) {
  std::string name(key);
  return name.append("[").append(std::to_string(i)).append("]");
}

// The array at `key` with `n` elements (n < 0: any count), or nullptr when absent.
const GGUFValue* find_array(const GGUFFile& file, std::string_view key, bool (*element_ok)(GGUFType), int64_t n) {
  const GGUFValue* v = file.find_array(key);
  if (v == nullptr) return nullptr;
  if (!element_ok(v->array_type)) {
    fail(file, key, "has elements of type " + std::string(gguf_type_name(v->array_type)));
  }
  if (n >= 0 && v->array_size != static_cast<uint64_t>(n)) {
    fail(file, key,
         "has " + std::to_string(v->array_size) + " elements, expected " + std::to_string(n) + " (one per token)");
  }
  return v;
}

bool is_string_type(GGUFType t) { return t == GGUFType::STRING; }
bool is_float_type(GGUFType t) { return t == GGUFType::FLOAT32 || t == GGUFType::FLOAT64; }
bool is_int_type(GGUFType t) {
  return t != GGUFType::STRING && t != GGUFType::ARRAY && t != GGUFType::BOOL && !is_float_type(t);
}

// A special token id: absent gives `fallback` (when the vocab is that large); -1 and 0xFFFFFFFF (how GGUF writers spell
// "none") give -1; anything else must name a token.
int32_t read_token_id(const GGUFFile& file, std::string_view key, int32_t fallback, int32_t n_vocab) {
  if (file.find(key) == nullptr) return fallback < n_vocab ? fallback : -1;
  const int64_t id = file.get_int(key, fallback);
  if (id == -1 || id == 0xFFFFFFFFll) return -1;
  if (id < 0 || id >= n_vocab) {
    fail(file, key, "= " + std::to_string(id) + " is out of range for " + std::to_string(n_vocab) + " tokens");
  }
  return static_cast<int32_t>(id);
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The byte a byte token `<0xNN>` stands for, or -1 when the text is not of that form.
int parse_byte_token(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return -1;
  const int hi = hex_digit(text[3]);
  const int lo = hex_digit(text[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

TokenType to_token_type(const GGUFFile& file, int64_t raw, size_t index) {
  if (raw == 0) return TokenType::kNormal;  // llama.cpp's "undefined" type behaves as normal
  if (raw < static_cast<int64_t>(TokenType::kNormal) || raw > static_cast<int64_t>(TokenType::kByte)) {
    fail(file, element(kTokenTypes, index), "= " + std::to_string(raw) + " is not a token type");
  }
  return static_cast<TokenType>(raw);
}

}  // namespace

int32_t Vocab::find_text(std::string_view text) const {
  const auto it = text_to_id.find(text);
  return it == text_to_id.end() ? -1 : it->second;
}

std::string Vocab::byte_piece(int32_t id) const {
  for (int b = 0; b < 256; ++b) {
    if (byte_to_id[b] == id) return std::string(1, static_cast<char>(b));
  }
  return {};
}

Vocab read_vocab(const GGUFFile& file, const VocabDefaults& defaults) {
  const GGUFValue* tokens = find_array(file, kTokens, is_string_type, -1);
  if (tokens == nullptr) fail(file, kTokens, "is missing");
  if (tokens->strings.empty()) fail(file, kTokens, "is empty");
  if (tokens->strings.size() > static_cast<size_t>(INT32_MAX)) fail(file, kTokens, "has too many tokens");

  Vocab v;
  v.tokens = tokens->strings;
  const int32_t n = v.size();

  v.scores.assign(n, 0.0f);
  if (const GGUFValue* scores = find_array(file, kScores, is_float_type, n)) {
    for (int32_t i = 0; i < n; ++i) {
      const double s = scores->floats[i];
      if (std::isnan(s)) fail(file, element(kScores, i), "is NaN");
      v.scores[i] = static_cast<float>(s);
    }
  }

  v.types.assign(n, TokenType::kNormal);
  if (const GGUFValue* types = find_array(file, kTokenTypes, is_int_type, n)) {
    for (int32_t i = 0; i < n; ++i) v.types[i] = to_token_type(file, types->ints[i], i);
  }

  v.byte_to_id.fill(-1);
  for (int32_t i = 0; i < n; ++i) {
    const std::string& text = v.tokens[i];
    switch (v.types[i]) {
      case TokenType::kByte: {
        const int byte = parse_byte_token(text);
        if (byte < 0) fail(file, element(kTokens, i), "= '" + text + "' is a byte token not of the form <0xNN>");
        v.byte_to_id[byte] = i;
        break;
      }
      case TokenType::kUserDefined:
        if (!text.empty()) v.specials.push_back(i);
        v.text_to_id[text] = i;
        break;
      case TokenType::kControl:
        if (!text.empty()) v.specials.push_back(i);
        break;
      case TokenType::kNormal:
        v.text_to_id[text] = i;  // a later duplicate wins, as in llama.cpp
        break;
      default:
        break;
    }
  }
  std::stable_sort(v.specials.begin(), v.specials.end(),
                   [&](int32_t a, int32_t b) { return v.tokens[a].size() > v.tokens[b].size(); });

  v.bos = read_token_id(file, "tokenizer.ggml.bos_token_id", defaults.bos, n);
  v.eos = read_token_id(file, "tokenizer.ggml.eos_token_id", defaults.eos, n);
  v.unk = read_token_id(file, "tokenizer.ggml.unknown_token_id", defaults.unk, n);
  v.eot = read_token_id(file, "tokenizer.ggml.eot_token_id", -1, n);
  for (const int32_t id : {v.eos, v.eot, read_token_id(file, "tokenizer.ggml.eom_token_id", -1, n)})
    if (id >= 0) v.eog.push_back(id);
  // The tokens that end a turn in the chat templates of these families, EOG whatever the file's keys say.
  static const std::array<std::string_view, 12> kEndOfTurn = {
      "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<end_of_turn>",
      "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>", "<|end_of_text|>", "<end_of_utterance>"};
  for (int32_t i = 0; i < n; ++i)
    if (std::find(kEndOfTurn.begin(), kEndOfTurn.end(), v.tokens[i]) != kEndOfTurn.end()) v.eog.push_back(i);
  std::sort(v.eog.begin(), v.eog.end());
  v.eog.erase(std::unique(v.eog.begin(), v.eog.end()), v.eog.end());
  v.add_bos = file.get_bool("tokenizer.ggml.add_bos_token", defaults.add_bos);
  v.add_space_prefix = file.get_bool("tokenizer.ggml.add_space_prefix", defaults.add_space_prefix);
  return v;
}

}  // namespace engine
