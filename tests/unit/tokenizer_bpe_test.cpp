#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include "bpe_pre_tokenizer.h"
#include "byte_level.h"
#include "engine/error.h"
#include "engine/gguf.h"
#include "engine/synth.h"
#include "engine/tokenizer.h"
#include "test_models.h"
#include "tokenizer_test_helpers.h"
#include "unicode_categories.h"
#include "utf8.h"

using namespace engine;
using namespace engine::tokenizer_test;

namespace {

const std::string kGpt2Vocab = std::string(ENGINE_SHARED_DIR) + "/vocab/ggml-vocab-gpt-2.gguf";

using Pieces = std::vector<std::string_view>;
using Ids = std::vector<int32_t>;

// A byte-level BPE vocab file the test writes itself: token b (0..255) is byte b's
// byte-level character, then the control "<|endoftext|>", the user-defined "<|ud|>", and
// the tokens that merges make, in the order the test adds them.
class TinyBpe {
 public:
  static constexpr int32_t kEndOfText = 256;
  static constexpr int32_t kUserDefined = 257;

  explicit TinyBpe(const std::string& pre) : path_(std::filesystem::path(testing::TempDir()) / unique_name()) {
    for (int b = 0; b < 256; ++b) add_token(byte_level_encode(std::string(1, static_cast<char>(b))), 1);
    add_token("<|endoftext|>", 3);
    add_token("<|ud|>", 4);
    writer_.set_string("tokenizer.ggml.model", "gpt2");
    if (!pre.empty()) writer_.set_string("tokenizer.ggml.pre", pre);
  }
  ~TinyBpe() { std::filesystem::remove(path_); }

  // Adds the merge "left right" (both spelled as raw bytes) and, when new, the token it makes.
  int32_t merge(const std::string& left, const std::string& right) {
    const std::string l = byte_level_encode(left), r = byte_level_encode(right);
    merges_.push_back(l + " " + r);
    return add_token(l + r, 1);
  }
  // A token (raw bytes) that no merge makes.
  int32_t add_word(const std::string& text) { return add_token(byte_level_encode(text), 1); }

  GGUFWriter& writer() { return writer_; }
  std::vector<std::string>& merges() { return merges_; }

  std::unique_ptr<Tokenizer> load() {
    writer_.set_array_strings("tokenizer.ggml.tokens", tokens_);
    writer_.set_array_i32("tokenizer.ggml.token_type", types_);
    writer_.set_array_strings("tokenizer.ggml.merges", merges_);
    writer_.write(path_.string());
    return load_tokenizer(path_.string());
  }

  static int32_t byte(unsigned char b) { return b; }
  // The ids of text that no merge touches: one per byte.
  static Ids bytes(std::string_view text) {
    Ids ids;
    for (char c : text) ids.push_back(static_cast<unsigned char>(c));
    return ids;
  }

 private:
  int32_t add_token(const std::string& text, int32_t type) {
    for (size_t i = 0; i < tokens_.size(); ++i) {
      if (tokens_[i] == text) return static_cast<int32_t>(i);
    }
    tokens_.push_back(text);
    types_.push_back(type);
    return static_cast<int32_t>(tokens_.size() - 1);
  }
  static std::string unique_name() {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    return std::string("tokenizer_bpe_") + info->name() + ".gguf";
  }

  std::filesystem::path path_;
  GGUFWriter writer_;
  std::vector<std::string> tokens_;
  std::vector<int32_t> types_;
  std::vector<std::string> merges_;
};

Ids concat(std::initializer_list<Ids> parts) {
  Ids out;
  for (const Ids& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

}  // namespace

TEST(TokenizerBpe, ClassifiesCodePoints) {
  EXPECT_EQ(classify_code_point('a'), CodepointClass::kLetter);
  EXPECT_EQ(classify_code_point(0xE9), CodepointClass::kLetter);    // é
  EXPECT_EQ(classify_code_point(0x4E2D), CodepointClass::kLetter);  // 中
  EXPECT_EQ(classify_code_point('7'), CodepointClass::kNumber);
  EXPECT_EQ(classify_code_point(0xB2), CodepointClass::kNumber);    // superscript two (No)
  EXPECT_EQ(classify_code_point(0x663), CodepointClass::kNumber);   // Arabic-Indic three
  EXPECT_EQ(classify_code_point(0x2167), CodepointClass::kNumber);  // Roman numeral eight (Nl)
  EXPECT_EQ(classify_code_point('\n'), CodepointClass::kWhitespace);
  EXPECT_EQ(classify_code_point(0x3000), CodepointClass::kWhitespace);
  EXPECT_EQ(classify_code_point('!'), CodepointClass::kOther);
  EXPECT_EQ(classify_code_point(0x1F600), CodepointClass::kOther);  // emoji (So)
  EXPECT_EQ(classify_code_point(0xFFFD), CodepointClass::kOther);
  EXPECT_EQ(classify_code_point(0x10FFFF), CodepointClass::kOther);
}

TEST(TokenizerBpe, ByteLevelAlphabet) {
  EXPECT_EQ(byte_level_encode("a!~"), "a!~");
  EXPECT_EQ(byte_level_encode(" "), "\xC4\xA0");   // Ġ, U+0120
  EXPECT_EQ(byte_level_encode("\n"), "\xC4\x8A");  // Ċ, U+010A
  EXPECT_EQ(byte_level_encode(std::string(1, '\0')), "\xC4\x80");
  EXPECT_EQ(byte_level_encode("\xAD"), "\xC5\x83");  // soft hyphen, the last unprintable: U+0143
  EXPECT_EQ(byte_level_encode("\xE9"), "\xC3\xA9");  // printable Latin-1 keeps its code point
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  const std::string spelled = byte_level_encode(all);
  EXPECT_EQ(byte_level_decode(spelled), all);
  EXPECT_EQ(byte_level_decode("<|x|>\xE4\xB8\xAD"), "<|x|>\xE4\xB8\xAD");  // outside the alphabet: kept
}

TEST(TokenizerBpe, Gpt2PreTokenizer) {
  auto split = [](std::string_view s) { return pre_tokenize(s, PreTokenizer::kGpt2); };
  EXPECT_EQ(split("Hello world"), (Pieces{"Hello", " world"}));
  EXPECT_EQ(split("it's  x1234 !!?  \n"), (Pieces{"it", "'s", " ", " x", "1234", " !!?", "  \n"}));
  EXPECT_EQ(split("IT'S"), (Pieces{"IT", "'", "S"}));  // contractions are case-sensitive
  EXPECT_EQ(split("we'll've 'x"), (Pieces{"we", "'ll", "'ve", " '", "x"}));
  EXPECT_EQ(split("a\n\nb"), (Pieces{"a", "\n", "\n", "b"}));
  EXPECT_EQ(split("\tword"), (Pieces{"\t", "word"}));
  EXPECT_EQ(split("caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87"), (Pieces{"caf\xC3\xA9", " \xE4\xB8\xAD\xE6\x96\x87"}));
  EXPECT_TRUE(split("").empty());
}

TEST(TokenizerBpe, Llama3PreTokenizer) {
  auto split = [](std::string_view s) { return pre_tokenize(s, PreTokenizer::kLlama3); };
  EXPECT_EQ(split("12345 1234567"), (Pieces{"123", "45", " ", "123", "456", "7"}));  // digits in threes
  EXPECT_EQ(split("IT'S we'LL 'Ve"), (Pieces{"IT", "'S", " we", "'LL", " '", "Ve"}));
  EXPECT_EQ(split("a\n\nb"), (Pieces{"a", "\n\n", "b"}));
  EXPECT_EQ(split("a  \n  b"), (Pieces{"a", "  \n", " ", " b"}));
  EXPECT_EQ(split("(hello) world!\n\nok"), (Pieces{"(hello", ")", " world", "!\n\n", "ok"}));
  EXPECT_EQ(split("\tword"), (Pieces{"\tword"}));
  EXPECT_EQ(split("x   "), (Pieces{"x", "   "}));
  EXPECT_EQ(split("abc123def"), (Pieces{"abc", "123", "def"}));
  EXPECT_EQ(split("\r\n\r\nx"), (Pieces{"\r\n\r\n", "x"}));
}

TEST(TokenizerBpe, Qwen2PreTokenizer) {
  auto split = [](std::string_view s) { return pre_tokenize(s, PreTokenizer::kQwen2); };
  EXPECT_EQ(split("12345 67"), (Pieces{"1", "2", "3", "4", "5", " ", "6", "7"}));  // one digit a piece
  EXPECT_EQ(split("abc123def"), (Pieces{"abc", "1", "2", "3", "def"}));
  EXPECT_EQ(split("IT'S we'LL"), (Pieces{"IT", "'S", " we", "'LL"}));  // otherwise Llama 3's
  EXPECT_EQ(split("a\n\nb"), (Pieces{"a", "\n\n", "b"}));
}

TEST(TokenizerBpe, InvalidUtf8PreTokenizesAsPunctuation) {
  // A lone continuation byte and a cut-short sequence: each byte is a character of no class.
  for (PreTokenizer kind : {PreTokenizer::kGpt2, PreTokenizer::kLlama3, PreTokenizer::kQwen2}) {
    const Pieces pieces = pre_tokenize("ab\x80\xE2\x96 cd", kind);
    EXPECT_EQ(pieces, (Pieces{"ab", "\x80\xE2\x96", " cd"}));
  }
}

TEST(TokenizerBpe, LowestRankMergesFirst) {
  {
    TinyBpe v("gpt2");
    const int32_t bc = v.merge("b", "c");
    v.merge("a", "b");
    auto tok = v.load();
    EXPECT_EQ(tok->encode("abc", false), (Ids{TinyBpe::byte('a'), bc}));
  }
  {
    TinyBpe v("gpt2");
    const int32_t ab = v.merge("a", "b");
    v.merge("b", "c");
    const int32_t abc = v.merge("ab", "c");
    auto tok = v.load();
    EXPECT_EQ(tok->encode("abc", false), (Ids{abc}));
    EXPECT_EQ(tok->encode("abab", false), (Ids{ab, ab}));
    EXPECT_EQ(tok->decode_token(abc), "abc");
  }
}

TEST(TokenizerBpe, RepeatedPairMergesLeftmostFirst) {
  TinyBpe v("gpt2");
  const int32_t aa = v.merge("a", "a");
  auto tok = v.load();
  EXPECT_EQ(tok->encode("aaa", false), (Ids{aa, TinyBpe::byte('a')}));
  EXPECT_EQ(tok->encode("aaaa", false), (Ids{aa, aa}));
}

TEST(TokenizerBpe, MergesWorkOnTheByteLevelSpelling) {
  TinyBpe v("gpt2");
  const int32_t space_h = v.merge(" ", "h");
  const int32_t space_hi = v.merge(" h", "i");
  const int32_t e_acute = v.merge("\xC3", "\xA9");  // é's two bytes
  auto tok = v.load();
  EXPECT_EQ(tok->encode("hi hi", false), (Ids{TinyBpe::byte('h'), TinyBpe::byte('i'), space_hi}));
  EXPECT_EQ(tok->encode(" h\xC3\xA9", false), (Ids{space_h, e_acute}));
  EXPECT_EQ(tok->decode_token(space_hi), " hi");
  EXPECT_EQ(tok->decode_token(TinyBpe::byte('\n')), "\n");
  EXPECT_EQ(tok->decode({space_h, e_acute}), " h\xC3\xA9");
}

TEST(TokenizerBpe, MergesStayWithinPreTokens) {
  auto build = [](const std::string& pre, int32_t& n34, int32_t& n45) {
    auto v = std::make_unique<TinyBpe>(pre);
    n34 = v->merge("3", "4");
    n45 = v->merge("4", "5");
    return v;
  };
  int32_t n34 = 0, n45 = 0;
  auto gpt2 = build("gpt2", n34, n45);
  EXPECT_EQ(gpt2->load()->encode("12345", false), (Ids{'1', '2', n34, '5'}));
  auto llama3 = build("llama-bpe", n34, n45);
  EXPECT_EQ(llama3->load()->encode("12345", false), (Ids{'1', '2', '3', n45}));  // "123" | "45"
  // Across a pre-token boundary no merge applies: "a" | " b" under both.
  for (const std::string pre : {"gpt2", "llama-bpe"}) {
    TinyBpe v(pre);
    v.merge("a", " ");
    auto tok = v.load();
    EXPECT_EQ(tok->encode("a b", false), TinyBpe::bytes("a b")) << pre;
  }
}

TEST(TokenizerBpe, Llama3TakesWholeTokensWithoutMerges) {
  for (const std::string pre : {"gpt2", "llama-bpe"}) {
    TinyBpe v(pre);
    const int32_t xyz = v.add_word("xyz");
    auto tok = v.load();
    const Ids expected = pre == "gpt2" ? TinyBpe::bytes("xyz") : Ids{xyz};
    EXPECT_EQ(tok->encode("xyz", false), expected) << pre;
  }
}

TEST(TokenizerBpe, PreTokenizerKeyDefaultsToGpt2AndRejectsUnknown) {
  {
    TinyBpe v("");
    const int32_t n34 = v.merge("3", "4");
    EXPECT_EQ(v.load()->encode("12345", false), (Ids{'1', '2', n34, '5'}));
  }
  {
    TinyBpe v("gpt-2");
    EXPECT_EQ(v.load()->encode("Hi", false), TinyBpe::bytes("Hi"));
  }
  TinyBpe v("chatglm-bpe");
  expect_error_mentions([&] { v.load(); }, "tokenizer.ggml.pre 'chatglm-bpe' is not supported");
  TinyBpe w("chatglm-bpe");
  expect_error_mentions([&] { w.load(); }, "llama-bpe, llama3, llama-v3, qwen2");
}

TEST(TokenizerBpe, SpecialTokens) {
  TinyBpe v("gpt2");
  const int32_t ab = v.merge("a", "b");
  v.writer().set_u32("tokenizer.ggml.bos_token_id", TinyBpe::kEndOfText);
  v.writer().set_u32("tokenizer.ggml.eos_token_id", TinyBpe::kEndOfText);
  auto tok = v.load();
  EXPECT_FALSE(tok->add_bos_default());
  EXPECT_EQ(tok->bos(), TinyBpe::kEndOfText);
  EXPECT_TRUE(tok->is_eog(TinyBpe::kEndOfText));
  // Control tokens are matched only on request; user-defined ones always.
  EXPECT_EQ(tok->encode("ab<|endoftext|>ab", false, true), (Ids{ab, TinyBpe::kEndOfText, ab}));
  const Ids plain = tok->encode("ab<|endoftext|>", false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), TinyBpe::kEndOfText), 0);
  EXPECT_EQ(tok->decode(plain), "ab<|endoftext|>");
  EXPECT_EQ(tok->encode("ab<|ud|>ab", true), (Ids{TinyBpe::kEndOfText, ab, TinyBpe::kUserDefined, ab}));
  EXPECT_EQ(tok->decode_token(TinyBpe::kUserDefined), "<|ud|>");
  EXPECT_EQ(tok->decode_token(TinyBpe::kEndOfText), "");
}

TEST(TokenizerBpe, AddBosDefaultsFollowThePreTokenizer) {
  {
    TinyBpe v("llama-bpe");
    v.writer().set_u32("tokenizer.ggml.bos_token_id", TinyBpe::kEndOfText);
    EXPECT_TRUE(v.load()->add_bos_default());
  }
  {
    TinyBpe v("llama-bpe");
    v.writer().set_bool("tokenizer.ggml.add_bos_token", false);
    EXPECT_FALSE(v.load()->add_bos_default());
  }
  {
    TinyBpe v("gpt2");
    v.writer().set_bool("tokenizer.ggml.add_bos_token", true);
    EXPECT_TRUE(v.load()->add_bos_default());
  }
  TinyBpe v("gpt2");
  auto tok = v.load();
  EXPECT_EQ(tok->bos(), -1);
  EXPECT_EQ(tok->encode("a", true), (Ids{'a'}));
}

// Ill-formed UTF-8 reads as llama.cpp reads it: a byte that starts no character is U+FFFD, an
// overlong form is the character it spells; well-formed characters stay as they are.
TEST(TokenizerBpe, InvalidUtf8ReadsAsLlamaCppReadsIt) {
  for (const std::string pre : {"gpt2", "llama-bpe", "qwen2"}) {
    TinyBpe v(pre);
    const int32_t e_acute = v.merge("\xC3", "\xA9");
    auto tok = v.load();
    const std::string text =
        "\x80"
        "a\xC3"
        "a\xE2\x96\xC3\xA9\xFF\xC0\xAF";
    const Ids replacement = TinyBpe::bytes("\xEF\xBF\xBD");
    const Ids ids = tok->encode(text, false);
    EXPECT_EQ(ids, concat({replacement, TinyBpe::bytes("a"), replacement, TinyBpe::bytes("a"), replacement, replacement,
                           {e_acute}, replacement, TinyBpe::bytes("/")}))
        << pre;
    EXPECT_EQ(tok->decode(ids), "\uFFFDa\uFFFDa\uFFFD\uFFFD\u00E9\uFFFD/") << pre;
  }
  EXPECT_EQ(utf8_as_llama_reads("\xF4\x90\x80\x80x"), "\uFFFD\uFFFD\uFFFD\uFFFDx") << "past U+10FFFF";
  EXPECT_EQ(utf8_as_llama_reads("ok \xF0\x9F\x98\x80"), "ok \xF0\x9F\x98\x80");
}

TEST(TokenizerBpe, ArbitraryBytesComeBackAsLlamaCppReadsThem) {
  for (const std::string pre : {"gpt2", "llama-bpe"}) {
    TinyBpe v(pre);
    v.merge(" ", "a");
    v.merge("a", "b");
    v.merge("1", "2");
    v.merge("\n", "\n");
    auto tok = v.load();
    const std::vector<std::string> pieces = {
        "a",    "b",    " ",        "1",    "2",  "'s", "\n", "\r", "<|ud|>", "<|endoftext|>",
        "\xC3", "\xA9", "\xE2\x96", "\xFF", "\t", "!"};
    std::mt19937 rng(5);
    for (int n = 0; n < 300; ++n) {
      std::string text;
      for (unsigned i = rng() % 14; i > 0; --i) text += pieces[rng() % pieces.size()];
      EXPECT_EQ(tok->decode(tok->encode(text, false)), utf8_as_llama_reads(text)) << pre;
    }
    for (int n = 0; n < 200; ++n) {  // any bytes: back as llama.cpp reads them
      std::string bytes(rng() % 40, '\0');
      for (char& c : bytes) c = static_cast<char>(rng() % 256);
      EXPECT_EQ(tok->decode(tok->encode(bytes, false)), utf8_as_llama_reads(bytes)) << pre;
    }
  }
}

TEST(TokenizerBpe, RejectsBadMerges) {
  {
    TinyBpe v("gpt2");
    v.merge("a", "b");
    v.merges().push_back("ab zz");
    expect_error_mentions([&] { v.load(); }, "tokenizer.ggml.merges[1] = 'ab zz' names 'zz', which is not a token");
  }
  {
    TinyBpe v("gpt2");
    v.merges().push_back("ab");
    expect_error_mentions([&] { v.load(); }, "tokenizer.ggml.merges[0] = 'ab'");
  }
  {
    GGUFWriter w;
    w.set_string("tokenizer.ggml.model", "gpt2");
    w.set_array_strings("tokenizer.ggml.tokens", {"a"});
    const std::string path = (std::filesystem::path(testing::TempDir()) / "tokenizer_bpe_no_merges.gguf").string();
    w.write(path);
    expect_error_mentions([&] { load_tokenizer(path); }, "tokenizer.ggml.merges is missing");
    std::filesystem::remove(path);
  }
}

TEST(TokenizerBpe, DecodeRejectsOutOfRangeIds) {
  TinyBpe v("gpt2");
  auto tok = v.load();
  expect_error_mentions([&] { tok->decode_token(tok->n_vocab()); }, std::to_string(tok->n_vocab()));
  expect_error_mentions([&] { tok->decode({'a', -3}); }, "-3");
}

TEST(TokenizerBpe, Gpt2VocabMatchesLlamaCppVectors) {
  if (!std::filesystem::exists(kGpt2Vocab)) GTEST_SKIP() << kGpt2Vocab << " not found";
  const auto texts = read_vocab_inputs(kGpt2Vocab + ".inp");
  const auto expected = read_vocab_outputs(kGpt2Vocab + ".out");
  ASSERT_EQ(texts.size(), expected.size());
  ASSERT_GE(texts.size(), 40u);
  auto tok = load_tokenizer(kGpt2Vocab);
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(tok->encode(texts[i], false), expected[i]) << "vector " << i << ": '" << texts[i] << "'";
  }
}

// The vocabulary engine-gguf synth writes for qwen2 and qwen3 models (Qwen2's pre-tokenizer,
// merges across digit runs, whitespace runs and contractions) tokenizes texts as llama.cpp
// does: tests/data/vocab/synth-qwen2.out is llama.cpp's tokenization of the .inp texts.
TEST(TokenizerBpe, SynthQwen2VocabMatchesLlamaCppVectors) {
  const std::string path = test_models::synthetic_qwen2_model();
  const std::string vectors = std::string(ENGINE_TEST_DATA_DIR) + "/vocab/synth-qwen2";
  const auto texts = read_vocab_inputs(vectors + ".inp");
  const auto expected = read_vocab_outputs(vectors + ".out");
  ASSERT_EQ(texts.size(), expected.size());
  ASSERT_GE(texts.size(), 50u);
  auto tok = load_tokenizer(path);
  EXPECT_FALSE(tok->add_bos_default());
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(tok->encode(texts[i], false), expected[i]) << "vector " << i << ": '" << texts[i] << "'";
    EXPECT_EQ(tok->decode(expected[i]), utf8_as_llama_reads(texts[i])) << "vector " << i;
  }
}

// Qwen's chat turns end with <|im_end|>, which ends generation though the file names only
// <|endoftext|> (EOS); <|im_start|> does not. Both are control tokens, matched with parse_special.
TEST(TokenizerBpe, EndOfTurnTokensEndGeneration) {
  auto tok = load_tokenizer(test_models::synthetic_qwen2_model());
  const std::vector<int32_t> ids = tok->encode("<|im_start|>user\nhi<|im_end|>", false, true);
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(tok->decode_token(ids.front()), "") << "a control token";
  EXPECT_FALSE(tok->is_eog(ids.front())) << "<|im_start|>";
  EXPECT_TRUE(tok->is_eog(ids.back())) << "<|im_end|>";
  EXPECT_TRUE(tok->is_eog(tok->eos()));
  EXPECT_FALSE(tok->is_eog(ids[1]));
}

TEST(TokenizerBpe, Gpt2VocabRoundTrips) {
  if (!std::filesystem::exists(kGpt2Vocab)) GTEST_SKIP() << kGpt2Vocab << " not found";
  auto tok = load_tokenizer(kGpt2Vocab);
  for (const std::string& text : read_vocab_inputs(kGpt2Vocab + ".inp")) {
    EXPECT_EQ(tok->decode(tok->encode(text, false)), text);
  }
  std::mt19937 rng(13);
  for (int n = 0; n < 200; ++n) {
    std::string bytes(rng() % 40, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() % 256);
    EXPECT_EQ(tok->decode(tok->encode(bytes, false)), utf8_as_llama_reads(bytes));
  }
}

TEST(TokenizerBpe, Gpt2VocabSpecialTokens) {
  if (!std::filesystem::exists(kGpt2Vocab)) GTEST_SKIP() << kGpt2Vocab << " not found";
  auto tok = load_tokenizer(kGpt2Vocab);
  EXPECT_EQ(tok->n_vocab(), 50257);
  EXPECT_EQ(tok->bos(), 50256);
  EXPECT_EQ(tok->eos(), 50256);
  EXPECT_FALSE(tok->add_bos_default());
  EXPECT_TRUE(tok->is_eog(50256));
  EXPECT_EQ(tok->token_type(50256), TokenType::kControl);
  EXPECT_EQ(tok->encode("Hello world", false), (Ids{15496, 995}));
  EXPECT_EQ(tok->decode_token(995), " world");
  EXPECT_EQ(tok->decode_token(50256), "");
  EXPECT_EQ(tok->encode("Hello<|endoftext|>", false, true), (Ids{15496, 50256}));
  expect_error_mentions([&] { tok->decode_token(50257); }, "50257");
}

TEST(TokenizerBpe, Gpt2ModelMatchesReference) {
  const std::string model = std::string(ENGINE_SHARED_DIR) + "/models/synth-gpt2-f32.gguf";
  const std::string reference = std::string(ENGINE_SHARED_DIR) + "/reference/synth-gpt2-f32.jsonl";
  if (!std::filesystem::exists(model) || !std::filesystem::exists(reference)) {
    GTEST_SKIP() << "synth-gpt2-f32 model or reference not found";
  }
  auto tok = load_tokenizer(model);
  std::ifstream in(reference);
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const std::string prompt = reference_text(line, "prompt");
    EXPECT_EQ(tok->encode(prompt, tok->add_bos_default()), reference_ids(line, "prompt_tokens")) << prompt;
    EXPECT_EQ(tok->decode(reference_ids(line, "generated")), reference_text(line, "text")) << prompt;
  }
  EXPECT_GE(lines, 1);
}
