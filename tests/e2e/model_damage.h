#pragma once
// Defects written into a good model file, for the bad-input test and the fuzzers' seed corpus.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/gguf.h"

// `file` again with tensor `drop` left out and tensor `transpose` given swapped dimensions.
inline engine::GGUFWriter rewritten(const engine::GGUFFile& file, const std::string& drop, const std::string& transpose) {
  engine::GGUFWriter w;
  for (const auto& [key, value] : file.metadata()) w.set_value(key, value);
  for (const auto& t : file.tensors()) {
    if (t.name == drop) continue;
    std::vector<int64_t> ne(t.ne, t.ne + t.n_dims);
    if (t.name == transpose) std::swap(ne[0], ne[1]);
    const auto* bytes = static_cast<const uint8_t*>(file.tensor_data(t));
    w.add_tensor(t.name, t.type, ne, std::vector<uint8_t>(bytes, bytes + t.nbytes));
  }
  return w;
}

// Sets the dtype id of tensor `name` in its tensor-info record to `id`.
template <typename Byte>
void patch_dtype(std::vector<Byte>& bytes, const std::string& name, uint32_t id) {
  std::string record(8, '\0');
  const uint64_t len = name.size();
  std::memcpy(record.data(), &len, 8);
  record += name;
  const size_t at = std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()).find(record);
  uint32_t n_dims;
  std::memcpy(&n_dims, bytes.data() + at + record.size(), 4);
  std::memcpy(bytes.data() + at + record.size() + 4 + 8 * n_dims, &id, 4);
}
