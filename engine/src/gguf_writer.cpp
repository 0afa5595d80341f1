#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_set>

#include "engine/error.h"
#include "engine/gguf.h"
#include "gguf_format.h"

namespace engine {
// Writes to a file, or appends to a byte vector when constructed with one.
class GGUFSink {
 public:
  explicit GGUFSink(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "wb")) {
    if (!f_) throw Error(path + ": cannot create: " + std::strerror(errno));
  }
  explicit GGUFSink(std::vector<uint8_t>& memory) : path_("(memory)"), memory_(&memory) {}
  ~GGUFSink() {
    if (f_) std::fclose(f_);
  }

  void bytes(const void* p, size_t n) {
    if (memory_) {
      memory_->insert(memory_->end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
    } else if (n != 0 && std::fwrite(p, 1, n, f_) != n) {
      throw Error(path_ + ": write failed: " + std::strerror(errno));
    }
    pos_ += n;
  }
  template <typename T>
  void put(T v) {
    bytes(&v, sizeof(T));
  }
  void string(const std::string& s) {
    put<uint64_t>(s.size());
    bytes(s.data(), s.size());
  }
  void zeros(size_t n) {
    static constexpr uint8_t kZeros[4096] = {};
    for (size_t left = n; left > 0;) {
      const size_t chunk = left < sizeof(kZeros) ? left : sizeof(kZeros);
      bytes(kZeros, chunk);
      left -= chunk;
    }
  }
  void pad_to(size_t alignment) { zeros((alignment - pos_ % alignment) % alignment); }
  void close() {
    if (memory_) return;
    std::FILE* f = f_;
    f_ = nullptr;
    if (std::fclose(f) != 0) throw Error(path_ + ": write failed: " + std::strerror(errno));
  }

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
  std::vector<uint8_t>* memory_ = nullptr;
  size_t pos_ = 0;
};

namespace {

GGUFValue integer_value(GGUFType t, int64_t i, uint64_t u) {
  GGUFValue v;
  v.type = t;
  v.i = i;
  v.u = u;
  return v;
}

GGUFValue array_value(GGUFType elem, uint64_t size) {
  GGUFValue v;
  v.type = GGUFType::ARRAY;
  v.array_type = elem;
  v.array_size = size;
  return v;
}

bool is_float_type(GGUFType t) { return t == GGUFType::FLOAT32 || t == GGUFType::FLOAT64; }

// The element vector an array of `elem` keeps its elements in, as a count.
size_t stored_elements(const GGUFValue& v) {
  if (v.array_type == GGUFType::STRING) return v.strings.size();
  if (is_float_type(v.array_type)) return v.floats.size();
  return v.ints.size();
}

// Buffered output to one file; every failure names the file and the OS reason.

// Writes one scalar of type `t`: unsigned types from `u`, signed types and bools from `i`.
void put_scalar(GGUFSink& out, GGUFType t, int64_t i, uint64_t u, double f) {
  switch (t) {
    case GGUFType::UINT8: out.put<uint8_t>(static_cast<uint8_t>(u)); break;
    case GGUFType::INT8: out.put<int8_t>(static_cast<int8_t>(i)); break;
    case GGUFType::UINT16: out.put<uint16_t>(static_cast<uint16_t>(u)); break;
    case GGUFType::INT16: out.put<int16_t>(static_cast<int16_t>(i)); break;
    case GGUFType::UINT32: out.put<uint32_t>(static_cast<uint32_t>(u)); break;
    case GGUFType::INT32: out.put<int32_t>(static_cast<int32_t>(i)); break;
    case GGUFType::UINT64: out.put<uint64_t>(u); break;
    case GGUFType::INT64: out.put<int64_t>(i); break;
    case GGUFType::BOOL: out.put<uint8_t>(i != 0); break;
    case GGUFType::FLOAT32: out.put<float>(static_cast<float>(f)); break;
    case GGUFType::FLOAT64: out.put<double>(f); break;
    case GGUFType::STRING:
    case GGUFType::ARRAY: break;  // not scalars; put_value handles them
  }
}

void put_value(GGUFSink& out, const GGUFValue& v) {
  out.put<uint32_t>(static_cast<uint32_t>(v.type));
  if (v.type == GGUFType::STRING) {
    out.string(v.s);
  } else if (v.type != GGUFType::ARRAY) {
    put_scalar(out, v.type, v.i, v.u, v.f);
  } else {
    out.put<uint32_t>(static_cast<uint32_t>(v.array_type));
    out.put<uint64_t>(v.array_size);
    if (v.array_type == GGUFType::STRING) {
      for (const std::string& s : v.strings) out.string(s);
    } else if (is_float_type(v.array_type)) {
      for (double f : v.floats) put_scalar(out, v.array_type, 0, 0, f);
    } else {
      for (int64_t i : v.ints) put_scalar(out, v.array_type, i, static_cast<uint64_t>(i), 0);
    }
  }
}

size_t tensor_bytes(const std::string& name, DType type, const std::vector<int64_t>& ne) {
  const std::string what = "GGUFWriter: tensor '" + name + "'";
  if (ne.empty() || ne.size() > 4) throw Error(what + " has " + std::to_string(ne.size()) + " dimensions (allowed 1 to 4)");
  for (int64_t n : ne)
    if (n < 0) throw Error(what + " has a negative extent " + std::to_string(n));
  const DTypeInfo& info = dtype_info(type);
  if (ne[0] % info.block_size != 0)
    throw Error(what + " row of " + std::to_string(ne[0]) + " elements is not a whole number of " +
                std::string(info.name) + " blocks of " + std::to_string(info.block_size));
  size_t bytes = row_bytes(type, ne[0]);
  for (size_t d = 1; d < ne.size(); ++d)
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(ne[d]), &bytes)) throw Error(what + " byte size overflows");
  return bytes;
}

size_t align_up(size_t n, size_t alignment) { return (n + alignment - 1) / alignment * alignment; }

}  // namespace


void GGUFWriter::set_u32(std::string key, uint32_t v) { set_value(std::move(key), integer_value(GGUFType::UINT32, v, v)); }

void GGUFWriter::set_i32(std::string key, int32_t v) {
  set_value(std::move(key), integer_value(GGUFType::INT32, v, static_cast<uint64_t>(static_cast<int64_t>(v))));
}

void GGUFWriter::set_u64(std::string key, uint64_t v) {
  set_value(std::move(key), integer_value(GGUFType::UINT64, static_cast<int64_t>(v), v));
}

void GGUFWriter::set_f32(std::string key, float v) {
  GGUFValue value;
  value.type = GGUFType::FLOAT32;
  value.f = v;
  set_value(std::move(key), std::move(value));
}

void GGUFWriter::set_bool(std::string key, bool v) { set_value(std::move(key), integer_value(GGUFType::BOOL, v, v)); }

void GGUFWriter::set_string(std::string key, std::string v) {
  GGUFValue value;
  value.type = GGUFType::STRING;
  value.s = std::move(v);
  set_value(std::move(key), std::move(value));
}

void GGUFWriter::set_array_strings(std::string key, std::vector<std::string> v) {
  GGUFValue value = array_value(GGUFType::STRING, v.size());
  value.strings = std::move(v);
  set_value(std::move(key), std::move(value));
}

void GGUFWriter::set_array_f32(std::string key, std::vector<float> v) {
  GGUFValue value = array_value(GGUFType::FLOAT32, v.size());
  value.floats.assign(v.begin(), v.end());
  set_value(std::move(key), std::move(value));
}

void GGUFWriter::set_array_i32(std::string key, std::vector<int32_t> v) {
  GGUFValue value = array_value(GGUFType::INT32, v.size());
  value.ints.assign(v.begin(), v.end());
  set_value(std::move(key), std::move(value));
}

void GGUFWriter::set_value(std::string key, GGUFValue v) {
  if (static_cast<uint32_t>(v.type) > static_cast<uint32_t>(GGUFType::FLOAT64))
    throw Error("GGUFWriter: key '" + key + "' has unknown value type id " + std::to_string(static_cast<uint32_t>(v.type)));
  if (v.type == GGUFType::ARRAY) {
    if (v.array_type == GGUFType::ARRAY)
      throw Error("GGUFWriter: key '" + key + "' is a nested array, whose elements are not kept and cannot be written");
    if (static_cast<uint32_t>(v.array_type) > static_cast<uint32_t>(GGUFType::FLOAT64))
      throw Error("GGUFWriter: key '" + key + "' has unknown array element type id " +
                  std::to_string(static_cast<uint32_t>(v.array_type)));
    if (stored_elements(v) != v.array_size)
      throw Error("GGUFWriter: key '" + key + "' array_size " + std::to_string(v.array_size) + " but " +
                  std::to_string(stored_elements(v)) + " elements are stored");
  }
  if (key == kGGUFAlignmentKey) {
    if (v.type != GGUFType::UINT32 || v.u == 0 || (v.u & (v.u - 1)) != 0)
      throw Error("GGUFWriter: key '" + key + "' must be a u32 power of two");
    alignment_ = static_cast<size_t>(v.u);
  }
  // Setting a key again replaces its value in place, keeping the first insertion's order.
  for (auto& [k, existing] : kv_) {
    if (k == key) {
      existing = std::move(v);
      return;
    }
  }
  kv_.emplace_back(std::move(key), std::move(v));
}

void GGUFWriter::add_tensor(std::string name, DType type, std::vector<int64_t> ne, std::vector<uint8_t> data) {
  for (const PendingTensor& t : tensors_)
    if (t.name == name) throw Error("GGUFWriter: duplicate tensor '" + name + "'");
  const size_t bytes = tensor_bytes(name, type, ne);
  if (!data.empty() && data.size() != bytes)
    throw Error("GGUFWriter: tensor '" + name + "' needs " + std::to_string(bytes) + " bytes of data, got " +
                std::to_string(data.size()));
  tensors_.push_back({std::move(name), type, std::move(ne), std::move(data)});
}

void GGUFWriter::write(const std::string& path, bool header_only) const {
  GGUFSink out(path);
  emit(out, header_only);
}

std::vector<uint8_t> GGUFWriter::to_bytes(bool header_only) const {
  std::vector<uint8_t> bytes;
  GGUFSink out(bytes);
  emit(out, header_only);
  return bytes;
}

void GGUFWriter::emit(GGUFSink& out, bool header_only) const {
  out.bytes(kGGUFMagic.data(), kGGUFMagic.size());
  out.put<uint32_t>(3);
  out.put<uint64_t>(tensors_.size());
  out.put<uint64_t>(kv_.size());
  for (const auto& [key, value] : kv_) {
    out.string(key);
    put_value(out, value);
  }

  std::vector<size_t> nbytes;
  nbytes.reserve(tensors_.size());
  size_t offset = 0;
  for (const PendingTensor& t : tensors_) {
    nbytes.push_back(tensor_bytes(t.name, t.type, t.ne));
    out.string(t.name);
    out.put<uint32_t>(static_cast<uint32_t>(t.ne.size()));
    for (int64_t n : t.ne) out.put<uint64_t>(static_cast<uint64_t>(n));
    out.put<uint32_t>(static_cast<uint32_t>(t.type));
    out.put<uint64_t>(offset);
    offset = align_up(offset + nbytes.back(), alignment_);
  }

  if (!header_only) {
    out.pad_to(alignment_);
    for (size_t k = 0; k < tensors_.size(); ++k) {
      if (tensors_[k].data.empty()) {
        out.zeros(nbytes[k]);
      } else {
        out.bytes(tensors_[k].data.data(), nbytes[k]);
      }
      out.pad_to(alignment_);
    }
  }
  out.close();
}

}  // namespace engine
