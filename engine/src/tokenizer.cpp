#include "engine/tokenizer.h"

#include <algorithm>

#include "engine/error.h"
#include "engine/gguf.h"
#include "tokenizer_models.h"
#include "vocab.h"

namespace engine {
namespace {

// A run of the input: either a special token (token >= 0) or plain text.
struct Fragment {
  int32_t token = -1;
  size_t begin = 0;
  size_t length = 0;
};

// Splits every plain-text fragment at each literal occurrence of `token`'s text.
std::vector<Fragment> split_at_token(std::string_view text, const std::vector<Fragment>& fragments, int32_t token,
                                     std::string_view literal) {
  std::vector<Fragment> out;
  for (const Fragment& f : fragments) {
    if (f.token >= 0) {
      out.push_back(f);
      continue;
    }
    const std::string_view part = text.substr(f.begin, f.length);
    size_t pos = 0;
    for (size_t hit = part.find(literal); hit != std::string_view::npos; hit = part.find(literal, pos)) {
      if (hit > pos) out.push_back({-1, f.begin + pos, hit - pos});
      out.push_back({token, 0, 0});
      pos = hit + literal.size();
    }
    if (pos < part.size()) out.push_back({-1, f.begin + pos, part.size() - pos});
  }
  return out;
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_gguf(const GGUFFile& file) {
  const std::string model = file.get_string("tokenizer.ggml.model", "");
  if (model.empty()) throw Error(file.path() + ": tokenizer.ggml.model is missing");
  if (model == "llama") return make_spm_tokenizer(file);
  if (model == "gpt2") return make_bpe_tokenizer(file);
  throw Error(file.path() + ": tokenizer.ggml.model '" + model + "' is not supported (supported: llama, gpt2)");
}

Tokenizer::Tokenizer(std::unique_ptr<const Vocab> vocab) : vocab_(std::move(vocab)) {}

Tokenizer::~Tokenizer() = default;

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
  std::vector<int32_t> out;
  if (add_bos && vocab_->bos >= 0) out.push_back(vocab_->bos);

  std::vector<Fragment> fragments;
  if (!text.empty()) fragments.push_back({-1, 0, text.size()});
  // Longest tokens first, so a token is never split by a shorter one inside it.
  for (int32_t id : vocab_->specials) {
    if (parse_special || vocab_->types[id] == TokenType::kUserDefined) {
      fragments = split_at_token(text, fragments, id, vocab_->tokens[id]);
    }
  }

  bool starts_segment = true;
  for (const Fragment& f : fragments) {
    if (f.token >= 0) {
      out.push_back(f.token);
      starts_segment = true;
    } else {
      encode_text(text.substr(f.begin, f.length), starts_segment, out);
      starts_segment = false;
    }
  }
  return out;
}

std::string Tokenizer::decode_token(int32_t id) const {
  check_id(id);
  return piece(id);
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string text;
  // encode prefixes a space to each segment of plain text; the first normal token of a
  // segment carries it.
  bool starts_segment = true;
  for (int32_t id : ids) {
    check_id(id);
    std::string p = piece(id);
    const TokenType type = vocab_->types[id];
    if (type == TokenType::kUserDefined) {
      starts_segment = true;
    } else if (type != TokenType::kControl) {
      if (starts_segment && vocab_->add_space_prefix && type == TokenType::kNormal && !p.empty() && p[0] == ' ') {
        p.erase(0, 1);
      }
      starts_segment = false;
    }
    text += p;
  }
  return text;
}

int32_t Tokenizer::bos() const { return vocab_->bos; }

int32_t Tokenizer::eos() const { return vocab_->eos; }

bool Tokenizer::add_bos_default() const { return vocab_->add_bos; }

bool Tokenizer::is_eog(int32_t id) const { return std::binary_search(vocab_->eog.begin(), vocab_->eog.end(), id); }

int32_t Tokenizer::n_vocab() const { return vocab_->size(); }

TokenType Tokenizer::token_type(int32_t id) const {
  check_id(id);
  return vocab_->types[id];
}

void Tokenizer::check_id(int32_t id) const {
  if (id < 0 || id >= vocab_->size()) {
    throw Error("token id " + std::to_string(id) + " is out of range (vocab has " + std::to_string(vocab_->size()) +
                " tokens)");
  }
}

}  // namespace engine
