#include "engine/synth.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <random>
#include <vector>

#include "byte_level.h"
#include "engine/arch.h"
#include "engine/error.h"
#include "engine/gguf.h"
#include "engine/quants.h"
#include "engine/tokenizer.h"

namespace engine {
namespace {

const char* const kWords[] = {"once", "upon", "a", "time", "there", "was", "little", "girl", "boy", "named", "she",
                              "he", "loved", "to", "play", "with", "her", "his", "friend", "the", "and", "in",
                              "park", "day", "one", "big", "red", "ball", "saw", "went", "happy", "sun", "tree",
                              "dog", "cat", "said"};

// SentencePiece pieces: control tokens, the 256 byte tokens, then word pieces with every
// prefix present so that merges can reach each word; `specials` last, as control tokens.
void add_spm_vocab(GGUFWriter& w, int64_t n_vocab, const std::vector<std::string>& specials, bool add_space_prefix) {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types = {2, 3, 3};
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "<0x%02X>", b);
    tokens.push_back(hex);
    types.push_back(6);
  }
  const std::string space = "\xE2\x96\x81";  // U+2581, SentencePiece's space
  std::vector<std::string> pieces = {space};
  for (char c = 'a'; c <= 'z'; ++c) pieces.push_back(std::string(1, c));
  for (char c = 'A'; c <= 'Z'; ++c) pieces.push_back(std::string(1, c));
  for (const char* p : {".", ",", "!", "?", "'", "\"", "-", ":"}) pieces.push_back(p);
  for (const char* word : kWords)
    for (size_t len = 1; len <= std::string(word).size(); ++len) pieces.push_back(space + std::string(word, len));
  std::vector<float> scores(tokens.size(), 0.0f);
  for (const auto& p : pieces) {
    if (static_cast<int64_t>(tokens.size()) >= n_vocab) break;
    bool dup = false;
    for (const auto& t : tokens) dup = dup || t == p;
    if (dup) continue;
    tokens.push_back(p);
    types.push_back(1);
    scores.push_back(-static_cast<float>(tokens.size()));
  }
  const size_t pieces_end = std::min<size_t>(tokens.size(), static_cast<size_t>(n_vocab) - specials.size());
  tokens.resize(pieces_end);
  types.resize(pieces_end);
  scores.resize(pieces_end);
  while (static_cast<int64_t>(tokens.size() + specials.size()) < n_vocab) {  // filler pieces
    tokens.push_back("<extra_" + std::to_string(tokens.size()) + ">");
    types.push_back(5);
    scores.push_back(-1e6f);
  }
  for (const std::string& s : specials) {
    tokens.push_back(s);
    types.push_back(3);
    scores.push_back(0.0f);
  }
  w.set_string("tokenizer.ggml.model", "llama");
  w.set_array_strings("tokenizer.ggml.tokens", tokens);
  w.set_array_f32("tokenizer.ggml.scores", scores);
  w.set_array_i32("tokenizer.ggml.token_type", types);
  w.set_u32("tokenizer.ggml.unknown_token_id", 0);
  w.set_u32("tokenizer.ggml.bos_token_id", 1);
  w.set_u32("tokenizer.ggml.eos_token_id", 2);
  if (!add_space_prefix) w.set_bool("tokenizer.ggml.add_space_prefix", false);
}

// The control tokens an architecture's SentencePiece vocabulary ends with: Phi-3's chat and
// end-of-text tokens, Gemma's turn tokens.
const std::vector<std::string>& spm_specials(const std::string& arch) {
  static const std::vector<std::string> phi3 = {"<|endoftext|>", "<|assistant|>", "<|end|>", "<|user|>", "<|system|>"};
  static const std::vector<std::string> gemma3 = {"<start_of_turn>", "<end_of_turn>"};
  static const std::vector<std::string> none;
  return arch == "phi3" ? phi3 : arch == "gemma3" ? gemma3 : none;
}

bool printable_latin1(int c) { return (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174 && c <= 255); }

// Byte b as GPT-2's byte-level alphabet writes it.
std::string byte_symbol(int b) { return byte_level_encode(std::string(1, static_cast<char>(b))); }

// Pieces whose merges cross where pre-tokenizers differ: digit runs (Llama 3 keeps up to three
// digits a piece, Qwen2 one), space and line-break runs, contractions in either case.
const char* const kBoundaryPieces[] = {"12", "123", "00", "  ", "   ", "\n\n", " \n", "'s", "'S", "'ll", "!!", " ("};

// Byte-level BPE: the 256 byte symbols in GPT-2's order (printable bytes first), words and
// space-led words ("Ġword") merged one letter at a time, then (for pre-tokenizers other than
// GPT-2's) kBoundaryPieces, unused fillers, `specials` as control tokens, and <|endoftext|>
// last as BOS and EOS.
void add_bpe_vocab(GGUFWriter& w, int64_t n_vocab, const std::string& pre, const std::vector<std::string>& specials) {
  std::vector<std::string> tokens;
  for (bool printable : {true, false})
    for (int b = 0; b < 256; ++b)
      if (printable_latin1(b) == printable) tokens.push_back(byte_symbol(b));
  std::vector<int32_t> types(tokens.size(), static_cast<int32_t>(TokenType::kNormal));
  std::vector<std::string> merges;
  const int64_t room = n_vocab - 1 - static_cast<int64_t>(specials.size());  // the last ids are control tokens
  // Merges `text` (bytes) one byte at a time from the left, adding what the vocabulary lacks.
  const auto add_merged = [&](const std::string& text) {
    std::string piece = byte_symbol(static_cast<uint8_t>(text[0]));
    for (size_t i = 1; i < text.size(); ++i) {
      const std::string next = byte_symbol(static_cast<uint8_t>(text[i])), merged = piece + next;
      if (static_cast<int64_t>(tokens.size()) >= room) return;
      if (std::find(tokens.begin(), tokens.end(), merged) == tokens.end()) {
        merges.push_back(piece + " " + next);
        tokens.push_back(merged);
        types.push_back(static_cast<int32_t>(TokenType::kNormal));
      }
      piece = merged;
    }
  };
  for (const char* word : kWords) {
    add_merged(std::string(" ") + word);
    add_merged(word);
  }
  if (pre != "gpt-2")
    for (const char* piece : kBoundaryPieces) add_merged(piece);
  while (static_cast<int64_t>(tokens.size()) < room) {
    tokens.push_back("<extra_" + std::to_string(tokens.size()) + ">");
    types.push_back(static_cast<int32_t>(TokenType::kUnused));
  }
  for (const std::string& special : specials) {
    tokens.push_back(special);
    types.push_back(static_cast<int32_t>(TokenType::kControl));
  }
  tokens.push_back("<|endoftext|>");
  types.push_back(static_cast<int32_t>(TokenType::kControl));
  w.set_string("tokenizer.ggml.model", "gpt2");
  w.set_string("tokenizer.ggml.pre", pre);
  w.set_array_strings("tokenizer.ggml.tokens", tokens);
  w.set_array_i32("tokenizer.ggml.token_type", types);
  w.set_array_strings("tokenizer.ggml.merges", merges);
  w.set_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(n_vocab - 1));
  w.set_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(n_vocab - 1));
}

// Adds tensors with random values, or declares them without data.
class WeightMaker {
 public:
  WeightMaker(GGUFWriter& w, uint64_t seed, bool with_data, int64_t distinct_rows)
      : w_(w), rng_(seed), with_data_(with_data), distinct_rows_(distinct_rows) {}

  void matrix(const std::string& name, DType type, int64_t ne0, int64_t ne1, float stddev) {
    matrices(name, type, ne0, ne1, 1, stddev);
  }

  // n matrices of [ne0, ne1] in one tensor [ne0, ne1, n] (experts); n = 1: a 2-d matrix.
  void matrices(const std::string& name, DType type, int64_t ne0, int64_t ne1_each, int64_t n, float stddev) {
    const std::vector<int64_t> shape = n == 1 ? std::vector<int64_t>{ne0, ne1_each} : std::vector<int64_t>{ne0, ne1_each, n};
    if (!with_data_) return w_.add_tensor(name, type, shape, {});
    const int64_t ne1 = ne1_each * n;
    const int64_t drawn = distinct_rows_ > 0 ? std::min(distinct_rows_, ne1) : ne1;
    std::vector<float> values(static_cast<size_t>(ne0 * drawn));
    std::normal_distribution<float> dist(0.0f, stddev);
    for (float& v : values) v = dist(rng_);
    const size_t row = row_bytes(type, ne0);
    std::vector<uint8_t> bytes(row * static_cast<size_t>(ne1));
    for (int64_t r = 0; r < drawn; ++r) quantize_row(type, values.data() + r * ne0, bytes.data() + static_cast<size_t>(r) * row, ne0);
    for (int64_t r = drawn; r < ne1; ++r)
      std::memcpy(bytes.data() + static_cast<size_t>(r) * row, bytes.data() + static_cast<size_t>(r % drawn) * row, row);
    w_.add_tensor(name, type, shape, std::move(bytes));
  }

  // Norm weights: near 1.
  void norm(const std::string& name, int64_t n) { uniform(name, n, 0.8f, 1.2f); }
  void uniform(const std::string& name, int64_t n, float lo, float hi) {
    vector(name, n, std::uniform_real_distribution<float>(lo, hi));
  }
  // Biases: near 0.
  void bias(const std::string& name, int64_t n) { vector(name, n, std::normal_distribution<float>(0.0f, 0.02f)); }

 private:
  template <typename Dist>
  void vector(const std::string& name, int64_t n, Dist dist) {
    if (!with_data_) return w_.add_tensor(name, DType::F32, {n}, {});
    std::vector<float> values(static_cast<size_t>(n));
    for (float& v : values) v = dist(rng_);
    std::vector<uint8_t> bytes(values.size() * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    w_.add_tensor(name, DType::F32, {n}, std::move(bytes));
  }

  GGUFWriter& w_;
  std::mt19937_64 rng_;
  bool with_data_;
  int64_t distinct_rows_;
};

// Llama and the architectures built like it (Qwen2: Q, K, V biases; Qwen3: Q and K head norms
// and heads of their own size; Gemma 3: those head norms and norms after attention and the
// feed-forward; Phi-3: fused QKV and gate-up matrices, long-context RoPE factors), with the
// vocabulary their files carry.
void write_llama_like(GGUFWriter& w, const SynthSpec& s, bool weights) {
  const std::string a = s.arch + ".";
  const int64_t head = s.head_size(), n_embd_q = head * s.n_head, n_embd_kv = head * s.n_head_kv;
  w.set_u32(a + "context_length", static_cast<uint32_t>(s.n_ctx_train));
  w.set_u32(a + "embedding_length", static_cast<uint32_t>(s.n_embd));
  w.set_u32(a + "feed_forward_length", static_cast<uint32_t>(s.n_ff));
  w.set_u32(a + "block_count", static_cast<uint32_t>(s.n_layer));
  w.set_u32(a + "attention.head_count", static_cast<uint32_t>(s.n_head));
  w.set_u32(a + "attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
  if (s.n_embd_head > 0) {
    w.set_u32(a + "attention.key_length", static_cast<uint32_t>(head));
    w.set_u32(a + "attention.value_length", static_cast<uint32_t>(head));
  }
  w.set_u32(a + "rope.dimension_count", static_cast<uint32_t>(head));
  w.set_f32(a + "rope.freq_base", s.rope_freq_base);
  if (s.rope_scaling_factor > 0) {
    w.set_string(a + "rope.scaling.type", "linear");
    w.set_f32(a + "rope.scaling.factor", s.rope_scaling_factor);
  }
  const bool long_rope = s.n_ctx_orig > 0;
  if (long_rope) {  // Phi-3's long-context RoPE, its attention factor as convert_hf_to_gguf.py computes it
    const double scale = static_cast<double>(s.n_ctx_train) / static_cast<double>(s.n_ctx_orig);
    w.set_u32(a + "rope.scaling.original_context_length", static_cast<uint32_t>(s.n_ctx_orig));
    w.set_f32(a + "rope.scaling.attn_factor",
              static_cast<float>(std::sqrt(1.0 + std::log(scale) / std::log(static_cast<double>(s.n_ctx_orig)))));
  }
  if (s.n_swa > 0) w.set_u32(a + "attention.sliding_window", static_cast<uint32_t>(s.n_swa));
  const int64_t n_ff_exp = s.n_ff_exp > 0 ? s.n_ff_exp : s.n_ff;
  if (s.n_expert > 0) {
    w.set_u32(a + "expert_count", static_cast<uint32_t>(s.n_expert));
    w.set_u32(a + "expert_used_count", static_cast<uint32_t>(s.n_expert_used));
    if (s.n_ff_exp > 0) w.set_u32(a + "expert_feed_forward_length", static_cast<uint32_t>(s.n_ff_exp));
  }
  w.set_f32(a + "attention.layer_norm_rms_epsilon", s.norm_eps);
  const bool qwen = s.arch == "qwen2" || s.arch == "qwen3" || s.arch == "qwen3moe";
  if (weights && !qwen) add_spm_vocab(w, s.n_vocab, spm_specials(s.arch), s.arch != "gemma3");  // Gemma: no space prefix
  if (weights && qwen) add_bpe_vocab(w, s.n_vocab, "qwen2", {"<|im_start|>", "<|im_end|>"});

  WeightMaker m(w, s.seed, weights, s.distinct_rows);
  const float stddev = 1.0f / std::sqrt(static_cast<float>(s.n_embd));
  const bool phi3 = s.arch == "phi3";
  m.matrix("token_embd.weight", s.type, s.n_embd, s.n_vocab, 1.0f);
  if (long_rope) {
    m.uniform("rope_factors_long.weight", head / 2, 1.0f, 24.0f);
    m.uniform("rope_factors_short.weight", head / 2, 1.0f, 1.3f);
  }
  for (int64_t il = 0; il < s.n_layer; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    m.norm(p + "attn_norm.weight", s.n_embd);
    if (phi3)  // Q, K and V rows in one matrix
      m.matrix(p + "attn_qkv.weight", s.type, s.n_embd, n_embd_q + 2 * n_embd_kv, stddev);
    else
      for (const auto& [name, rows] : {std::pair{"attn_q", n_embd_q}, {"attn_k", n_embd_kv}, {"attn_v", n_embd_kv}}) {
        m.matrix(p + name + ".weight", s.type, s.n_embd, rows, stddev);
        if (s.arch == "qwen2") m.bias(p + name + ".bias", rows);
      }
    if (s.arch == "qwen3" || s.arch == "qwen3moe" || s.arch == "gemma3") {
      m.norm(p + "attn_q_norm.weight", head);
      m.norm(p + "attn_k_norm.weight", head);
    }
    m.matrix(p + "attn_output.weight", s.type, n_embd_q, s.n_embd, 1.0f / std::sqrt(static_cast<float>(n_embd_q)));
    if (s.arch == "gemma3") m.norm(p + "post_attention_norm.weight", s.n_embd);
    m.norm(p + "ffn_norm.weight", s.n_embd);
    if (s.n_expert > 0) {  // the router stays f32, as llama-quantize leaves it
      m.matrix(p + "ffn_gate_inp.weight", DType::F32, s.n_embd, s.n_expert, stddev);
      m.matrices(p + "ffn_gate_exps.weight", s.type, s.n_embd, n_ff_exp, s.n_expert, stddev);
      m.matrices(p + "ffn_up_exps.weight", s.type, s.n_embd, n_ff_exp, s.n_expert, stddev);
      m.matrices(p + "ffn_down_exps.weight", s.type, n_ff_exp, s.n_embd, s.n_expert,
                 1.0f / std::sqrt(static_cast<float>(n_ff_exp)));
    } else {
      if (!phi3) m.matrix(p + "ffn_gate.weight", s.type, s.n_embd, s.n_ff, stddev);
      m.matrix(p + "ffn_up.weight", s.type, s.n_embd, phi3 ? 2 * s.n_ff : s.n_ff, stddev);  // Phi-3: gate rows, then up
      m.matrix(p + "ffn_down.weight", s.type, s.n_ff, s.n_embd, 1.0f / std::sqrt(static_cast<float>(s.n_ff)));
    }
    if (s.arch == "gemma3") m.norm(p + "post_ffw_norm.weight", s.n_embd);
  }
  m.norm("output_norm.weight", s.n_embd);
  if (!s.tied_embeddings) m.matrix("output.weight", s.type, s.n_embd, s.n_vocab, stddev);
}

void write_gpt2(GGUFWriter& w, const SynthSpec& s, bool weights) {
  const int64_t n_qkv = s.n_embd + 2 * (s.n_embd / s.n_head) * s.n_head_kv;
  w.set_u32("gpt2.context_length", static_cast<uint32_t>(s.n_ctx_train));
  w.set_u32("gpt2.embedding_length", static_cast<uint32_t>(s.n_embd));
  w.set_u32("gpt2.feed_forward_length", static_cast<uint32_t>(s.n_ff));
  w.set_u32("gpt2.block_count", static_cast<uint32_t>(s.n_layer));
  w.set_u32("gpt2.attention.head_count", static_cast<uint32_t>(s.n_head));
  w.set_u32("gpt2.attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
  w.set_f32("gpt2.attention.layer_norm_epsilon", s.norm_eps);
  if (weights) add_bpe_vocab(w, s.n_vocab, "gpt-2", {});

  WeightMaker m(w, s.seed, weights, s.distinct_rows);
  const float stddev = 1.0f / std::sqrt(static_cast<float>(s.n_embd));
  m.matrix("token_embd.weight", s.type, s.n_embd, s.n_vocab, 1.0f);
  m.matrix("position_embd.weight", s.type, s.n_embd, s.n_ctx_train, 0.1f);
  for (int64_t il = 0; il < s.n_layer; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    m.norm(p + "attn_norm.weight", s.n_embd);
    m.bias(p + "attn_norm.bias", s.n_embd);
    m.matrix(p + "attn_qkv.weight", s.type, s.n_embd, n_qkv, stddev);
    m.bias(p + "attn_qkv.bias", n_qkv);
    m.matrix(p + "attn_output.weight", s.type, s.n_embd, s.n_embd, stddev);
    m.bias(p + "attn_output.bias", s.n_embd);
    m.norm(p + "ffn_norm.weight", s.n_embd);
    m.bias(p + "ffn_norm.bias", s.n_embd);
    m.matrix(p + "ffn_up.weight", s.type, s.n_embd, s.n_ff, stddev);
    m.bias(p + "ffn_up.bias", s.n_ff);
    m.matrix(p + "ffn_down.weight", s.type, s.n_ff, s.n_embd, 1.0f / std::sqrt(static_cast<float>(s.n_ff)));
    m.bias(p + "ffn_down.bias", s.n_embd);
  }
  m.norm("output_norm.weight", s.n_embd);
  m.bias("output_norm.bias", s.n_embd);
  if (!s.tied_embeddings) m.matrix("output.weight", s.type, s.n_embd, s.n_vocab, stddev);
}

}  // namespace

GGUFWriter synthetic_model(const SynthSpec& s, bool weights) {
  if (!arch_supported(s.arch))
    throw Error("synth: unsupported architecture '" + s.arch + "' (supported: " + supported_archs_text() + ")");
  if (s.n_swa < 0 || s.rope_scaling_factor < 0) throw Error("synth: sliding window and RoPE scaling must not be negative");
  if (s.n_expert < 0 || s.n_ff_exp < 0 || s.n_expert_used < 0 || s.n_expert_used > s.n_expert ||
      (s.n_expert > 0) != (s.n_expert_used > 0))
    throw Error("synth: experts need 1 to the expert count used experts");
  if ((s.n_expert > 0 && s.arch != "llama" && s.arch != "qwen3moe") || (s.arch == "qwen3moe" && s.n_expert == 0))
    throw Error("synth: experts are written for qwen3moe, which needs them, and llama (as Mixtral)");
  if (s.n_ctx_orig != 0 && (s.arch != "phi3" || s.n_ctx_orig < 2 || s.n_ctx_orig >= s.n_ctx_train))
    throw Error("synth: an original context (long-context RoPE, phi3 only) must be between 2 and the context length");
  if (s.n_embd <= 0 || s.n_layer <= 0 || s.n_head <= 0 || s.n_head_kv <= 0 || s.n_ff <= 0 || s.n_ctx_train <= 0 ||
      s.n_embd_head < 0)
    throw Error("synth: every dimension must be positive");
  if (s.distinct_rows < 0) throw Error("synth: distinct rows must be 0 (every row) or positive");
  if ((s.n_embd_head == 0 && s.n_embd % s.n_head != 0) || s.n_head % s.n_head_kv != 0)
    throw Error("synth: heads must divide the embedding (or have a head size) and KV heads must divide heads");
  if (s.n_embd_head > 0 && s.arch == "gpt2") throw Error("synth: gpt2 heads span the embedding; they take no head size");
  // the byte tokens and the control tokens
  const int64_t min_vocab = s.arch == "gpt2" ? 257 : 259 + static_cast<int64_t>(spm_specials(s.arch).size());
  if (s.n_vocab < min_vocab)
    throw Error("synth: a " + s.arch + " vocabulary needs at least " + std::to_string(min_vocab) + " tokens");
  const int64_t block = dtype_info(s.type).block_size;
  if (s.n_embd % block != 0 || s.n_ff % block != 0 || s.head_size() * s.n_head % block != 0 || s.n_ff_exp % block != 0)
    throw Error("synth: embedding " + std::to_string(s.n_embd) + ", heads x head size " +
                std::to_string(s.head_size() * s.n_head) + " and feed-forward " + std::to_string(s.n_ff) +
                " must be multiples of " + std::string(dtype_name(s.type)) + "'s block of " + std::to_string(block));

  GGUFWriter w;
  w.set_string("general.architecture", s.arch);
  w.set_string("general.name", "synthetic-" + s.arch + "-" + std::string(dtype_name(s.type)));
  if (s.arch == "gpt2")
    write_gpt2(w, s, weights);
  else
    write_llama_like(w, s, weights);
  return w;
}

void write_synthetic_model(const SynthSpec& spec, const std::string& path) { synthetic_model(spec, true).write(path); }

}  // namespace engine
