// Fuzz target: the SentencePiece and byte-level BPE tokenizers. The first byte picks a vocabulary
// and the flags; the rest is text to encode (any bytes, invalid UTF-8 included) and, read as 16-bit
// numbers, token ids to decode. Encoding never fails; decoding fails with engine::Error exactly on
// ids outside the vocabulary; decode(encode(text)) gives the text back as tokenizer.h says: as it
// was (SentencePiece, a space perhaps as U+2581), or with malformed UTF-8 made U+FFFD (BPE).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/error.h"
#include "engine/gguf.h"
#include "engine/model.h"
#include "engine/synth.h"
#include "engine/tokenizer.h"
#include "utf8.h"

namespace {

struct Vocabulary {
  std::unique_ptr<engine::GGUFFile> file;
  std::unique_ptr<engine::Tokenizer> tokenizer;
  bool spm = false;
};

Vocabulary synthesized(const char* arch, bool spm) {
  engine::SynthSpec spec;
  spec.arch = arch, spec.n_embd = 32, spec.n_layer = 1, spec.n_head = 4, spec.n_head_kv = 2, spec.n_ff = 64;
  Vocabulary v;
  v.file = engine::GGUFFile::from_bytes(arch, engine::synthetic_model(spec, true).to_bytes(true),
                                        engine::GGUFLoad::kHeaderOnly);
  v.tokenizer = engine::Tokenizer::from_gguf(*v.file);
  v.spm = spm;
  return v;
}

// The built-in model's trained SentencePiece vocabulary, and the synthesized ones of each pre-tokenizer.
const std::vector<Vocabulary>& vocabularies() {
  static const std::vector<Vocabulary> all = [] {
    std::vector<Vocabulary> v;
    auto builtin = engine::Model::load_builtin();
    v.push_back({nullptr, engine::Tokenizer::from_gguf(builtin->file()), true});
    v.push_back(synthesized("gemma3", true));
    v.push_back(synthesized("phi3", true));
    v.push_back(synthesized("qwen2", false));
    v.push_back(synthesized("gpt2", false));
    return v;
  }();
  return all;
}

// A decoded text as it compares with the input: SentencePiece gives a space back as U+2581 where the
// vocabulary spells it in byte tokens.
std::string as_read(const Vocabulary& vocab, std::string decoded) {
  if (!vocab.spm) return decoded;
  for (size_t at; (at = decoded.find("\xe2\x96\x81")) != std::string::npos;) decoded.replace(at, 3, " ");
  return decoded;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Vocabulary& vocab = vocabularies()[(data[0] & 0x0f) % vocabularies().size()];
  const engine::Tokenizer& tok = *vocab.tokenizer;
  const bool add_bos = data[0] & 0x10, parse_special = data[0] & 0x20;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);

  const std::vector<int32_t> ids = tok.encode(text, add_bos, parse_special);
  for (int32_t id : ids)
    if (id < 0 || id >= tok.n_vocab()) __builtin_trap();
  const bool reads_back = !parse_special && !(vocab.spm && text.find("\xe2\x96\x81") != std::string_view::npos);
  if (reads_back && as_read(vocab, tok.decode(ids)) != (vocab.spm ? std::string(text) : engine::utf8_as_llama_reads(text))) {
    std::fprintf(stderr, "decode(encode(text)) differs: '%s'\n", tok.decode(ids).c_str());
    for (int32_t id : ids) std::fprintf(stderr, "  %d '%s'\n", id, tok.decode_token(id).c_str());
    __builtin_trap();
  }

  std::vector<int32_t> any_ids;
  for (size_t i = 0; i + 1 < text.size(); i += 2) {
    int16_t id;
    std::memcpy(&id, text.data() + i, 2);
    any_ids.push_back(id);
  }
  bool all_valid = true;
  for (int32_t id : any_ids) {
    const bool valid = id >= 0 && id < tok.n_vocab();
    all_valid = all_valid && valid;
    try {
      (void)tok.decode_token(id);
      (void)tok.token_type(id);
      if (!valid) __builtin_trap();
    } catch (const engine::Error&) {
      if (valid) __builtin_trap();
    }
  }
  try {
    (void)tok.decode(any_ids);
    if (!all_valid) __builtin_trap();
  } catch (const engine::Error&) {
    if (all_valid) __builtin_trap();
  }
  return 0;
}
