// Fuzz target: the GGUF reader on arbitrary bytes, header-only and in full. A malformed file must raise
// engine::Error; a crash, a sanitizer report or any other exception is a bug.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/error.h"
#include "engine/gguf.h"

namespace {

// Reads back everything the parser produced, so that a bad count or offset it let through shows.
void walk(const engine::GGUFFile& file) {
  for (const auto& [key, value] : file.metadata()) {
    if (file.find(key) == nullptr) __builtin_trap();
    if (value.type == engine::GGUFType::ARRAY && file.find_array(key) == nullptr) __builtin_trap();
    (void)engine::gguf_type_name(value.type);
  }
  (void)file.get_string("general.architecture", "");
  (void)file.get_int("general.alignment", 0);
  for (const auto& t : file.tensors()) {
    if (file.find_tensor(t.name) == nullptr) __builtin_trap();
    if (!file.has_data()) continue;
    std::vector<uint8_t> bytes(t.nbytes);
    file.copy_data(bytes.data(), t.offset, t.nbytes);
    if (t.nbytes > 0 && *static_cast<const uint8_t*>(file.tensor_data(t)) != bytes[0]) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (engine::GGUFLoad mode : {engine::GGUFLoad::kHeaderOnly, engine::GGUFLoad::kFull}) {
    try {
      walk(*engine::GGUFFile::from_bytes("fuzz.gguf", std::vector<uint8_t>(data, data + size), mode));
    } catch (const engine::Error&) {
    }
  }
  return 0;
}
