// SentencePiece (BPE-by-score) encoding as llama.cpp's llm_tokenizer_spm does it: spaces
// become U+2581, the text is split into UTF-8 characters, and the adjacent pair whose
// concatenation is the highest-scoring token is merged until no pair forms a token.
#include <queue>

#include "engine/error.h"
#include "tokenizer_models.h"
#include "utf8.h"
#include "vocab.h"

namespace engine {
namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581, SPM's visible space

// A piece of the escaped text; merged-away symbols keep length 0.
struct Symbol {
  size_t begin = 0;
  size_t length = 0;
  int prev = -1;
  int next = -1;
};

// A candidate merge of symbols `left` and its successor; `length` is the merged length,
// which tells a stale candidate (one side changed since) from a live one.
struct Candidate {
  float score = 0;
  int left = 0;
  size_t length = 0;
};

// Highest score first; equal scores merge the leftmost pair first.
struct LowerPriority {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

class SpmTokenizer final : public Tokenizer {
 public:
  explicit SpmTokenizer(std::unique_ptr<const Vocab> vocab) : Tokenizer(std::move(vocab)) {}

 protected:
  void encode_text(std::string_view text, bool starts_segment, std::vector<int32_t>& out) const override;
  std::string piece(int32_t id) const override;

 private:
  void emit(std::string_view symbol, std::vector<int32_t>& out) const;
};

std::string escape_spaces(std::string_view text, bool add_prefix) {
  std::string escaped;
  escaped.reserve(text.size() + text.size() / 2 + kSpaceMark.size());
  if (add_prefix) escaped += kSpaceMark;
  for (char c : text) {
    if (c == ' ') {
      escaped += kSpaceMark;
    } else {
      escaped += c;
    }
  }
  return escaped;
}

void SpmTokenizer::encode_text(std::string_view text, bool starts_segment, std::vector<int32_t>& out) const {
  const Vocab& v = vocab();
  const std::string escaped = escape_spaces(text, v.add_space_prefix && starts_segment);
  const std::string_view s = escaped;

  std::vector<Symbol> symbols;
  for (size_t pos = 0; pos < s.size();) {
    const size_t len = utf8_lead_length(s, pos);
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({pos, len, index - 1, pos + len < s.size() ? index + 1 : -1});
    pos += len;
  }

  std::priority_queue<Candidate, std::vector<Candidate>, LowerPriority> queue;
  auto consider = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const size_t length = symbols[left].length + symbols[right].length;
    const int32_t id = v.find_text(s.substr(symbols[left].begin, length));
    if (id >= 0) queue.push({v.scores[id], left, length});
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
    right.length = 0;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = c.left;
    consider(left.prev, c.left);
    consider(c.left, left.next);
  }

  for (int i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) {
    emit(s.substr(symbols[i].begin, symbols[i].length), out);
  }
}

// A final symbol: its token, or one byte token per byte when it is not a token.
void SpmTokenizer::emit(std::string_view symbol, std::vector<int32_t>& out) const {
  const Vocab& v = vocab();
  const int32_t id = v.find_text(symbol);
  if (id >= 0) {
    out.push_back(id);
    return;
  }
  for (char c : symbol) {
    const int32_t byte_id = v.byte_to_id[static_cast<unsigned char>(c)];
    const int32_t fallback = byte_id >= 0 ? byte_id : v.unk;
    if (fallback < 0) {
      throw Error("SPM tokenizer: the vocab has neither a byte token for byte " +
                  std::to_string(static_cast<unsigned char>(c)) + " nor an unknown token");
    }
    out.push_back(fallback);
  }
}

std::string SpmTokenizer::piece(int32_t id) const {
  const Vocab& v = vocab();
  const std::string& text = v.tokens[id];
  switch (v.types[id]) {
    case TokenType::kNormal: {
      std::string out;
      for (size_t pos = 0; pos < text.size();) {
        if (text.compare(pos, kSpaceMark.size(), kSpaceMark) == 0) {
          out += ' ';
          pos += kSpaceMark.size();
        } else {
          out += text[pos++];
        }
      }
      return out;
    }
    case TokenType::kByte:
      return v.byte_piece(id);
    case TokenType::kUserDefined:
      return text;
    case TokenType::kUnknown:
      return "\xE2\x96\x85";  // U+2585, as llama.cpp renders an unknown token
    case TokenType::kControl:
    case TokenType::kUnused:
      return {};
  }
  return {};
}

}  // namespace

std::unique_ptr<Tokenizer> make_spm_tokenizer(const GGUFFile& file) {
  VocabDefaults defaults;
  defaults.bos = 1;
  defaults.eos = 2;
  defaults.unk = 0;
  defaults.add_bos = true;
  defaults.add_space_prefix = true;
  return std::make_unique<SpmTokenizer>(std::make_unique<const Vocab>(read_vocab(file, defaults)));
}

}  // namespace engine
