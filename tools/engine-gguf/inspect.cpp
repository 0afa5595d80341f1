// engine-gguf inspect FILE: version, alignment, metadata and tensor table of a GGUF file.
#include <fmt/core.h>

#include <algorithm>
#include <memory>
#include <string>

#include "commands.h"
#include "engine/gguf.h"

namespace {

using engine::GGUFType;
using engine::GGUFValue;

constexpr size_t kMaxArrayShown = 8;    // array elements printed before the count
constexpr size_t kMaxStringShown = 80;  // bytes of a string printed before it is cut

// Quotes `s` on one line: control and non-ASCII bytes escaped, long strings cut.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (size_t k = 0; k < s.size() && k < kMaxStringShown; ++k) {
    const auto c = static_cast<unsigned char>(s[k]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  if (s.size() > kMaxStringShown) out += fmt::format("... ({} bytes)", s.size());
  return out;
}

std::string scalar_text(const GGUFValue& v) {
  switch (v.type) {
    case GGUFType::BOOL: return v.u ? "true" : "false";
    case GGUFType::FLOAT32: return fmt::format("{}", static_cast<float>(v.f));  // shortest text of the stored float
    case GGUFType::FLOAT64: return fmt::format("{}", v.f);
    case GGUFType::STRING: return quoted(v.s);
    case GGUFType::UINT8:
    case GGUFType::UINT16:
    case GGUFType::UINT32:
    case GGUFType::UINT64: return fmt::format("{}", v.u);
    default: return fmt::format("{}", v.i);
  }
}

std::string array_element_text(const GGUFValue& v, size_t k) {
  switch (v.array_type) {
    case GGUFType::STRING: return quoted(v.strings[k]);
    case GGUFType::FLOAT32: return fmt::format("{}", static_cast<float>(v.floats[k]));
    case GGUFType::FLOAT64: return fmt::format("{}", v.floats[k]);
    case GGUFType::BOOL: return v.ints[k] ? "true" : "false";
    case GGUFType::UINT64: return fmt::format("{}", static_cast<uint64_t>(v.ints[k]));
    default: return fmt::format("{}", v.ints[k]);
  }
}

std::string value_text(const GGUFValue& v) {
  if (v.type != GGUFType::ARRAY) return scalar_text(v);
  if (v.array_type == GGUFType::ARRAY) return fmt::format("[{} nested arrays]", v.array_size);
  std::string out = "[";
  const size_t shown = std::min<size_t>(v.array_size, kMaxArrayShown);
  for (size_t k = 0; k < shown; ++k) out += (k ? ", " : "") + array_element_text(v, k);
  if (v.array_size > shown) out += fmt::format(", ... ({} elements)", v.array_size);
  return out + "]";
}

std::string type_text(const GGUFValue& v) {
  if (v.type != GGUFType::ARRAY) return std::string(engine::gguf_type_name(v.type));
  return fmt::format("{}[{}]", engine::gguf_type_name(v.array_type), v.array_size);
}

std::string shape_text(const engine::GGUFTensorInfo& t) {
  std::string out = "[";
  for (int d = 0; d < t.n_dims; ++d) out += fmt::format("{}{}", d ? ", " : "", t.ne[d]);
  return out + "]";
}

void inspect(const std::string& path) {
  const auto file = engine::GGUFFile::open(path, engine::GGUFLoad::kHeaderOnly);
  fmt::print("file:        {}\n", path);
  fmt::print("version:     {}\n", file->version());
  fmt::print("alignment:   {}\n", file->alignment());
  fmt::print("data offset: {}\n", file->data_offset());
  fmt::print("file size:   {} (tensor data {})\n", file->file_size(), file->has_data() ? "present" : "absent");

  size_t key_width = 0;
  size_t type_width = 0;
  for (const auto& [key, value] : file->metadata()) {
    key_width = std::max(key_width, key.size());
    type_width = std::max(type_width, type_text(value).size());
  }
  fmt::print("\nmetadata: {} keys\n", file->metadata().size());
  for (const auto& [key, value] : file->metadata())
    fmt::print("  {:<{}}  {:<{}}  {}\n", key, key_width, type_text(value), type_width, value_text(value));

  size_t name_width = 4;
  size_t total = 0;
  for (const auto& t : file->tensors()) {
    name_width = std::max(name_width, t.name.size());
    total += t.nbytes;
  }
  fmt::print("\ntensors: {} ({} bytes)\n", file->tensors().size(), total);
  fmt::print("  {:<{}}  {:<5}  {:<22}  {:>12}  {:>12}\n", "name", name_width, "dtype", "shape", "bytes", "offset");
  for (const auto& t : file->tensors())
    fmt::print("  {:<{}}  {:<5}  {:<22}  {:>12}  {:>12}\n", t.name, name_width, engine::dtype_name(t.type),
               shape_text(t), t.nbytes, t.offset);
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("inspect", "print version, alignment, metadata and tensor table of a GGUF file");
  auto path = std::make_shared<std::string>();
  cmd->add_option("file", *path, "GGUF file (header-only files too)")->required();
  cmd->callback([path] { inspect(*path); });
}
