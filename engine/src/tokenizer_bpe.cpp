// Byte-level BPE as llama.cpp's llm_tokenizer_bpe does it: the text is split by the
// vocab's pre-tokenizer, each piece is spelled in GPT-2's byte-level alphabet and cut into
// characters, and within the piece the adjacent pair with the lowest merge rank is merged
// until no pair has a merge.
#include <queue>
#include <unordered_map>

#include "bpe_pre_tokenizer.h"
#include "byte_level.h"
#include "engine/error.h"
#include "engine/gguf.h"
#include "tokenizer_models.h"
#include "utf8.h"
#include "vocab.h"

namespace engine {
namespace {

constexpr std::string_view kMerges = "tokenizer.ggml.merges";
constexpr std::string_view kPre = "tokenizer.ggml.pre";

// Merge rank of each token pair, keyed by pair_key(left, right).
using MergeRanks = std::unordered_map<uint64_t, int32_t>;

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

// A piece of the spelled text with its token id (-1 when it is no token); merged-away
// symbols keep length 0.
struct Symbol {
  size_t begin = 0;
  size_t length = 0;
  int32_t id = -1;
  int prev = -1;
  int next = -1;
};

// A candidate merge of symbol `left` and its successor; `length` is the merged length,
// which tells a stale candidate (one side changed since) from a live one.
struct Candidate {
  int32_t rank = 0;
  int left = 0;
  size_t length = 0;
};

// Lowest rank first; equal ranks (the same pair twice) merge the leftmost first.
struct LaterMerge {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

PreTokenizer pre_tokenizer_named(const GGUFFile& file) {
  const std::string name = file.get_string(kPre, "gpt2");
  if (name == "gpt2" || name == "gpt-2") return PreTokenizer::kGpt2;
  if (name == "llama-bpe" || name == "llama3" || name == "llama-v3") return PreTokenizer::kLlama3;
  if (name == "qwen2" || name == "deepseek-r1-qwen") return PreTokenizer::kQwen2;
  throw Error(file.path() + ": " + std::string(kPre) + " '" + name +
              "' is not supported (supported: gpt2, gpt-2, llama-bpe, llama3, llama-v3, qwen2, deepseek-r1-qwen)");
}

MergeRanks read_merges(const GGUFFile& file, const Vocab& vocab) {
  const GGUFValue* merges = file.find_array(kMerges);
  if (merges == nullptr) throw Error(file.path() + ": " + std::string(kMerges) + " is missing");
  if (merges->array_type != GGUFType::STRING) {
    throw Error(file.path() + ": " + std::string(kMerges) + " has elements of type " +
                std::string(gguf_type_name(merges->array_type)) + ", expected strings");
  }
  MergeRanks ranks;
  ranks.reserve(merges->strings.size());
  for (size_t i = 0; i < merges->strings.size(); ++i) {
    const std::string& merge = merges->strings[i];
    auto fail = [&](const std::string& what) {
      throw Error(file.path() + ": " + std::string(kMerges) + "[" + std::to_string(i) + "] = '" + merge + "' " + what);
    };
    // Split at the first space after the first byte, as llama.cpp does.
    const size_t space = merge.empty() ? std::string::npos : merge.find(' ', 1);
    if (space == std::string::npos) fail("is not two tokens separated by a space");
    const std::string_view left = std::string_view(merge).substr(0, space);
    const std::string_view right = std::string_view(merge).substr(space + 1);
    const int32_t left_id = vocab.find_text(left);
    const int32_t right_id = vocab.find_text(right);
    if (left_id < 0) fail("names '" + std::string(left) + "', which is not a token");
    if (right_id < 0) fail("names '" + std::string(right) + "', which is not a token");
    ranks.emplace(pair_key(left_id, right_id), static_cast<int32_t>(i));  // a repeated merge keeps its first rank
  }
  return ranks;
}

class BpeTokenizer final : public Tokenizer {
 public:
  BpeTokenizer(std::unique_ptr<const Vocab> vocab, PreTokenizer pre, MergeRanks ranks)
      : Tokenizer(std::move(vocab)), pre_(pre), ranks_(std::move(ranks)) {}

 protected:
  void encode_text(std::string_view text, bool starts_segment, std::vector<int32_t>& out) const override;
  std::string piece(int32_t id) const override;

 private:
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;
  void emit(std::string_view symbol, int32_t id, std::vector<int32_t>& out) const;

  PreTokenizer pre_;
  MergeRanks ranks_;
};

void BpeTokenizer::encode_text(std::string_view raw, bool, std::vector<int32_t>& out) const {
  // Ill-formed UTF-8 is read as llama.cpp reads it, so that the same bytes give the same ids.
  const std::string text = utf8_as_llama_reads(raw);
  for (std::string_view piece : pre_tokenize(text, pre_)) {
    const std::string word = byte_level_encode(piece);
    // Llama 3's tokenizer takes a piece that is a token whole, even where no merges make it.
    const int32_t whole = pre_ == PreTokenizer::kLlama3 ? vocab().find_text(word) : -1;
    if (whole >= 0) {
      out.push_back(whole);
    } else {
      encode_word(word, out);
    }
  }
}

void BpeTokenizer::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  const Vocab& v = vocab();
  std::vector<Symbol> symbols;
  for (size_t pos = 0; pos < word.size();) {
    const size_t len = utf8_char_length(word, pos);
    const int index = static_cast<int>(symbols.size());
    symbols.push_back(
        {pos, len, v.find_text(word.substr(pos, len)), index - 1, pos + len < word.size() ? index + 1 : -1});
    pos += len;
  }

  std::priority_queue<Candidate, std::vector<Candidate>, LaterMerge> queue;
  auto consider = [&](int left, int right) {
    if (left < 0 || right < 0 || symbols[left].id < 0 || symbols[right].id < 0) return;
    const auto it = ranks_.find(pair_key(symbols[left].id, symbols[right].id));
    if (it != ranks_.end()) queue.push({it->second, left, symbols[left].length + symbols[right].length});
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) consider(i - 1, i);

  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& left = symbols[c.left];
    if (left.next < 0) continue;
    Symbol& right = symbols[left.next];
    if (left.length == 0 || right.length == 0 || left.length + right.length != c.length) continue;
    left.length = c.length;
    left.id = v.find_text(word.substr(left.begin, left.length));
    right.length = 0;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = c.left;
    consider(left.prev, c.left);
    consider(c.left, left.next);
  }

  for (int i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) {
    emit(word.substr(symbols[i].begin, symbols[i].length), symbols[i].id, out);
  }
}

// A final symbol: its token, or when a merge made text that is no token, one token per
// character (byte) of it.
void BpeTokenizer::emit(std::string_view symbol, int32_t id, std::vector<int32_t>& out) const {
  if (id >= 0) {
    out.push_back(id);
    return;
  }
  const Vocab& v = vocab();
  for (size_t pos = 0; pos < symbol.size();) {
    const size_t len = utf8_char_length(symbol, pos);
    const int32_t char_id = v.find_text(symbol.substr(pos, len));
    const int32_t fallback = char_id >= 0 ? char_id : v.unk;
    if (fallback < 0) {
      throw Error("BPE tokenizer: the vocab has neither a token for the byte-level character '" +
                  std::string(symbol.substr(pos, len)) + "' nor an unknown token");
    }
    out.push_back(fallback);
    pos += len;
  }
}

std::string BpeTokenizer::piece(int32_t id) const {
  const Vocab& v = vocab();
  switch (v.types[id]) {
    case TokenType::kNormal:
      return byte_level_decode(v.tokens[id]);
    case TokenType::kUserDefined:
      return v.tokens[id];
    case TokenType::kByte:
      return v.byte_piece(id);
    case TokenType::kUnknown:
    case TokenType::kControl:
    case TokenType::kUnused:
      return {};
  }
  return {};
}

}  // namespace

std::unique_ptr<Tokenizer> make_bpe_tokenizer(const GGUFFile& file) {
  const PreTokenizer pre = pre_tokenizer_named(file);
  VocabDefaults defaults;
  defaults.add_bos = pre == PreTokenizer::kLlama3;  // llama.cpp's default for Llama 3 vocabs
  Vocab vocab = read_vocab(file, defaults);
  vocab.add_space_prefix = false;  // byte-level BPE spells spaces itself
  MergeRanks ranks = read_merges(file, vocab);
  return std::make_unique<BpeTokenizer>(std::make_unique<const Vocab>(std::move(vocab)), pre, std::move(ranks));
}

}  // namespace engine
