// Writes malformed variants of a small synthetic model into a folder, one file per defect,
// for the bad-input test to feed to engine-run.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/gguf.h"
#include "engine/synth.h"

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

// Rewrites `src` with tensor `drop` left out and tensor `transpose` given swapped dimensions.
void rewrite(const fs::path& src, const fs::path& dst, const std::string& drop, const std::string& transpose) {
  auto file = GGUFFile::open(src.string());
  GGUFWriter w;
  for (const auto& [key, value] : file->metadata()) w.set_value(key, value);
  for (const auto& t : file->tensors()) {
    if (t.name == drop) continue;
    std::vector<int64_t> ne(t.ne, t.ne + t.n_dims);
    if (t.name == transpose) std::swap(ne[0], ne[1]);
    const auto* bytes = static_cast<const uint8_t*>(file->tensor_data(t));
    w.add_tensor(t.name, t.type, ne, std::vector<uint8_t>(bytes, bytes + t.nbytes));
  }
  w.write(dst.string());
}

// Sets the dtype id of tensor `name` in its tensor-info record to `id`.
void patch_dtype(std::vector<char>& bytes, const std::string& name, uint32_t id) {
  std::string record(8, '\0');
  const uint64_t len = name.size();
  std::memcpy(record.data(), &len, 8);
  record += name;
  const size_t at = std::string_view(bytes.data(), bytes.size()).find(record);
  uint32_t n_dims;
  std::memcpy(&n_dims, bytes.data() + at + record.size(), 4);
  std::memcpy(bytes.data() + at + record.size() + 4 + 8 * n_dims, &id, 4);
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
  rewrite(good, dir / "missing_tensor.gguf", "blk.1.ffn_down.weight", "");
  rewrite(good, dir / "wrong_shape.gguf", "", "blk.0.attn_k.weight");
  return 0;
}
