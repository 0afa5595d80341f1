// Writes the model-file seeds of the fuzzers' corpus (tests/fuzz/corpus/gguf and corpus/model): small
// synthesized models of every architecture, whole and header-only, and the defects of the bad-input
// test written into them. The text seeds (tokenizer, reference, hardware_profile) are kept as written.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/gguf.h"
#include "engine/synth.h"
#include "model_damage.h"

namespace fs = std::filesystem;
using namespace engine;

namespace {

void write_all(const fs::path& p, const std::vector<uint8_t>& bytes, size_t n) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(n));
}
void write_all(const fs::path& p, const std::vector<uint8_t>& bytes) { write_all(p, bytes, bytes.size()); }

SynthSpec tiny(const std::string& arch) {
  SynthSpec s;
  s.arch = arch, s.n_embd = 32, s.n_layer = 2, s.n_head = 4, s.n_head_kv = 2, s.n_ff = 64, s.n_ctx_train = 64;
  s.n_vocab = 264;  // room for every architecture's control tokens beside the 256 bytes
  if (arch == "qwen3moe") s.n_expert = 4, s.n_expert_used = 2;
  if (arch == "phi3") s.n_ctx_orig = 32;
  if (arch == "gemma3") s.n_swa = 16;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make-fuzz-seeds CORPUS_DIR\n");
    return 2;
  }
  const fs::path gguf = fs::path(argv[1]) / "gguf", model = fs::path(argv[1]) / "model";
  fs::create_directories(gguf);
  fs::create_directories(model);
  for (const std::string arch : {"llama", "qwen2", "qwen3", "qwen3moe", "gemma3", "phi3", "gpt2"})
    write_all(model / (arch + ".gguf"), synthetic_model(tiny(arch), true).to_bytes(true));
  SynthSpec mixtral = tiny("llama");
  mixtral.n_expert = 4, mixtral.n_expert_used = 2;
  write_all(model / "llama-experts.gguf", synthetic_model(mixtral, true).to_bytes(true));

  // A whole file, the one the defects go into, as small as a SentencePiece vocabulary allows, and a K-quant
  // header (a K-quant block spans 256 values).
  SynthSpec f32 = tiny("llama");
  f32.n_embd = 16, f32.n_head = 2, f32.n_head_kv = 1, f32.n_ff = 32, f32.tied_embeddings = true;
  const std::vector<uint8_t> good = synthetic_model(f32, true).to_bytes();
  write_all(gguf / "llama-f32.gguf", good);
  SynthSpec k = tiny("gpt2");
  k.n_embd = 256, k.n_layer = 1, k.n_ff = 256, k.type = DType::Q4_K;
  write_all(gguf / "gpt2-q4_k-header.gguf", synthetic_model(k, true).to_bytes(true));

  const auto file = GGUFFile::from_bytes("good", good);
  for (int tenth = 1; tenth < 10; ++tenth)
    write_all(gguf / ("truncated_header_" + std::to_string(tenth) + "0pct.gguf"), good, file->data_offset() * tenth / 10);
  write_all(gguf / "data_past_end.gguf", good, good.size() - 1);
  std::vector<uint8_t> patched = good;
  patch_dtype(patched, "blk.0.attn_q.weight", 99);
  write_all(gguf / "unknown_dtype.gguf", patched);
  write_all(model / "missing_tensor.gguf", rewritten(*file, "blk.1.ffn_down.weight", "").to_bytes(true));
  write_all(model / "wrong_shape.gguf", rewritten(*file, "", "blk.0.attn_k.weight").to_bytes(true));
  return 0;
}
