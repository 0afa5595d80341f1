// Writes malformed variants of a small synthetic model into a folder, one file per defect,
// for the bad-input test to feed to engine-run.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/gguf.h"
#include "engine/synth.h"
#include "model_damage.h"

namespace fs = std::filesystem;
using namespace engine;

namespace {

std::vector<char> read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_all(const fs::path& p, const char* data, size_t n) {
  std::ofstream out(p, std::ios::binary);
  out.write(data, static_cast<std::streamsize>(n));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make-bad-models OUTDIR\n");
    return 2;
  }
  const fs::path dir = argv[1];
  fs::create_directories(dir);
  SynthSpec spec;
  spec.n_embd = 64, spec.n_layer = 2, spec.n_head = 4, spec.n_head_kv = 2, spec.n_ff = 128, spec.n_ctx_train = 64;
  const fs::path good = dir / "good.gguf";
  write_synthetic_model(spec, good.string());
  const std::vector<char> bytes = read_all(good);

  // Cuts at every tenth of the file, and at every tenth of its header (metadata and tensor infos).
  const size_t header = GGUFFile::open(good.string())->data_offset();
  for (int tenth = 0; tenth < 10; ++tenth) {
    write_all(dir / ("truncated_" + std::to_string(tenth) + "0pct.gguf"), bytes.data(), bytes.size() * tenth / 10);
    write_all(dir / ("truncated_header_" + std::to_string(tenth) + "0pct.gguf"), bytes.data(), header * tenth / 10);
  }
  write_all(dir / "data_past_end.gguf", bytes.data(), bytes.size() - 1);
  const std::string text = "this is a text file, not a model\n";
  write_all(dir / "not_gguf.gguf", text.data(), text.size());
  std::vector<char> patched = bytes;
  patch_dtype(patched, "blk.0.attn_q.weight", 99);
  write_all(dir / "unknown_dtype.gguf", patched.data(), patched.size());
  const auto file = GGUFFile::open(good.string());
  rewritten(*file, "blk.1.ffn_down.weight", "").write((dir / "missing_tensor.gguf").string());
  rewritten(*file, "", "blk.0.attn_k.weight").write((dir / "wrong_shape.gguf").string());
  return 0;
}
