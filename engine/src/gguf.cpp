#include "engine/gguf.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <unordered_set>

#include "engine/error.h"
#include "gguf_format.h"

namespace engine {
namespace {

// Nested arrays are skipped recursively; a hostile file must not exhaust the stack.
constexpr int kMaxArrayDepth = 8;

std::string type_description(const GGUFValue& v) {
  if (v.type != GGUFType::ARRAY) return std::string(gguf_type_name(v.type));
  return "array of " + std::string(gguf_type_name(v.array_type));
}

// Reads little-endian values from the mapping, checking every read against its end.
class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size, const std::string& path) : data_(data), size_(size), path_(path) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }

  [[noreturn]] void fail(const std::string& msg) const {
    throw Error(path_ + ": " + msg + " (at byte " + std::to_string(pos_) + ")");
  }

  void need(uint64_t n, const char* what) const {
    if (n > remaining())
      fail("truncated file: " + std::string(what) + " needs " + std::to_string(n) + " bytes, " +
           std::to_string(remaining()) + " left");
  }

  template <typename T>
  T read(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::string read_string(const char* what) {
    const uint64_t len = read<uint64_t>(what);
    need(len, what);
    std::string s(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return s;
  }

  void skip(uint64_t n, const char* what) {
    need(n, what);
    pos_ += static_cast<size_t>(n);
  }

  // Rejects a count of items that cannot fit in the rest of the file, before anything
  // is allocated for them.
  void check_count(uint64_t count, uint64_t min_item_bytes, const std::string& what) const {
    if (count > remaining() / min_item_bytes)
      fail(what + " count " + std::to_string(count) + " cannot fit in the " + std::to_string(remaining()) +
           " bytes left in the file");
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  const std::string& path_;
};

GGUFType read_type(Cursor& c, const std::string& key) {
  const uint32_t id = c.read<uint32_t>("value type");
  if (id > static_cast<uint32_t>(GGUFType::FLOAT64))
    c.fail("key '" + key + "' has unknown value type id " + std::to_string(id));
  return static_cast<GGUFType>(id);
}

// Reads one integer or bool scalar of type `t` into both views.
void read_integer(Cursor& c, GGUFType t, int64_t& i, uint64_t& u) {
  switch (t) {
    case GGUFType::UINT8: u = c.read<uint8_t>("u8"); i = static_cast<int64_t>(u); break;
    case GGUFType::INT8: i = c.read<int8_t>("i8"); u = static_cast<uint64_t>(i); break;
    case GGUFType::UINT16: u = c.read<uint16_t>("u16"); i = static_cast<int64_t>(u); break;
    case GGUFType::INT16: i = c.read<int16_t>("i16"); u = static_cast<uint64_t>(i); break;
    case GGUFType::UINT32: u = c.read<uint32_t>("u32"); i = static_cast<int64_t>(u); break;
    case GGUFType::INT32: i = c.read<int32_t>("i32"); u = static_cast<uint64_t>(i); break;
    case GGUFType::UINT64: u = c.read<uint64_t>("u64"); i = static_cast<int64_t>(u); break;
    case GGUFType::INT64: i = c.read<int64_t>("i64"); u = static_cast<uint64_t>(i); break;
    case GGUFType::BOOL: u = c.read<uint8_t>("bool") != 0; i = static_cast<int64_t>(u); break;
    default: c.fail("internal: not an integer type");
  }
}

double read_float(Cursor& c, GGUFType t) {
  if (t == GGUFType::FLOAT32) return c.read<float>("f32");
  return c.read<double>("f64");
}

bool is_integer_type(GGUFType t) { return t != GGUFType::FLOAT32 && t != GGUFType::FLOAT64 && t != GGUFType::STRING && t != GGUFType::ARRAY; }

// Skips the elements of a nested array, keeping nothing.
void skip_array(Cursor& c, const std::string& key, int depth) {
  if (depth > kMaxArrayDepth) c.fail("key '" + key + "' nests arrays deeper than " + std::to_string(kMaxArrayDepth));
  const GGUFType elem = read_type(c, key);
  const uint64_t count = c.read<uint64_t>("array count");
  c.check_count(count, gguf_min_value_bytes(elem), "key '" + key + "' array");
  for (uint64_t k = 0; k < count; ++k) {
    if (elem == GGUFType::ARRAY) {
      skip_array(c, key, depth + 1);
    } else if (elem == GGUFType::STRING) {
      c.skip(c.read<uint64_t>("string length"), "string");
    } else {
      c.skip(gguf_min_value_bytes(elem), "array element");
    }
  }
}

void read_array(Cursor& c, const std::string& key, GGUFValue& v) {
  v.array_type = read_type(c, key);
  v.array_size = c.read<uint64_t>("array count");
  c.check_count(v.array_size, gguf_min_value_bytes(v.array_type), "key '" + key + "' array");
  const size_t n = static_cast<size_t>(v.array_size);
  if (v.array_type == GGUFType::ARRAY) {
    for (size_t k = 0; k < n; ++k) skip_array(c, key, 2);
  } else if (v.array_type == GGUFType::STRING) {
    v.strings.reserve(n);
    for (size_t k = 0; k < n; ++k) v.strings.push_back(c.read_string("string"));
  } else if (v.array_type == GGUFType::FLOAT32 || v.array_type == GGUFType::FLOAT64) {
    v.floats.reserve(n);
    for (size_t k = 0; k < n; ++k) v.floats.push_back(read_float(c, v.array_type));
  } else {
    v.ints.reserve(n);
    int64_t i = 0;
    uint64_t u = 0;
    for (size_t k = 0; k < n; ++k) {
      read_integer(c, v.array_type, i, u);
      v.ints.push_back(i);
    }
  }
}

GGUFValue read_value(Cursor& c, const std::string& key) {
  GGUFValue v;
  v.type = read_type(c, key);
  if (v.type == GGUFType::ARRAY) {
    read_array(c, key, v);
  } else if (v.type == GGUFType::STRING) {
    v.s = c.read_string("string");
  } else if (v.type == GGUFType::FLOAT32 || v.type == GGUFType::FLOAT64) {
    v.f = read_float(c, v.type);
  } else {
    read_integer(c, v.type, v.i, v.u);
  }
  return v;
}

}  // namespace

std::string_view gguf_type_name(GGUFType t) {
  switch (t) {
    case GGUFType::UINT8: return "u8";
    case GGUFType::INT8: return "i8";
    case GGUFType::UINT16: return "u16";
    case GGUFType::INT16: return "i16";
    case GGUFType::UINT32: return "u32";
    case GGUFType::INT32: return "i32";
    case GGUFType::FLOAT32: return "f32";
    case GGUFType::BOOL: return "bool";
    case GGUFType::STRING: return "string";
    case GGUFType::ARRAY: return "array";
    case GGUFType::UINT64: return "u64";
    case GGUFType::INT64: return "i64";
    case GGUFType::FLOAT64: return "f64";
  }
  return "unknown";
}

size_t gguf_min_value_bytes(GGUFType t) {
  switch (t) {
    case GGUFType::UINT8:
    case GGUFType::INT8:
    case GGUFType::BOOL: return 1;
    case GGUFType::UINT16:
    case GGUFType::INT16: return 2;
    case GGUFType::UINT32:
    case GGUFType::INT32:
    case GGUFType::FLOAT32: return 4;
    case GGUFType::UINT64:
    case GGUFType::INT64:
    case GGUFType::FLOAT64:
    case GGUFType::STRING: return 8;  // a string is at least its length field
    case GGUFType::ARRAY: return 12;  // element type and count
  }
  return 1;
}

bool GGUFValue::is_integer() const { return is_integer_type(type); }

bool GGUFValue::is_float() const { return type == GGUFType::FLOAT32 || type == GGUFType::FLOAT64; }

std::unique_ptr<GGUFFile> GGUFFile::open(const std::string& path, GGUFLoad mode) {
  std::unique_ptr<GGUFFile> file(new GGUFFile());
  file->path_ = path;
  file->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file->fd_ < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(file->fd_, &st) != 0) throw Error(path + ": cannot stat: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw Error(path + ": cannot open: " + std::strerror(EISDIR));
  if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file");
  file->size_ = static_cast<size_t>(st.st_size);
  if (file->size_ < kGGUFMagic.size()) throw Error(path + ": not a GGUF file (too short for the magic)");
  void* map = mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, file->fd_, 0);
  if (map == MAP_FAILED) throw Error(path + ": cannot map: " + std::strerror(errno));
  file->map_ = static_cast<const uint8_t*>(map);
  file->parse(mode);
  return file;
}

std::unique_ptr<GGUFFile> GGUFFile::from_bytes(std::string name, std::vector<uint8_t> bytes, GGUFLoad mode) {
  std::unique_ptr<GGUFFile> file(new GGUFFile());
  file->path_ = std::move(name);
  file->owned_ = std::move(bytes);
  file->size_ = file->owned_.size();
  if (file->size_ < kGGUFMagic.size()) throw Error(file->path_ + ": not a GGUF file (too short for the magic)");
  file->map_ = file->owned_.data();
  file->parse(mode);
  return file;
}

GGUFFile::~GGUFFile() {
  if (map_ && owned_.empty()) munmap(const_cast<uint8_t*>(map_), size_);
  if (fd_ >= 0) close(fd_);
}

void GGUFFile::parse(GGUFLoad mode) {
  Cursor c(map_, size_, path_);
  if (std::memcmp(map_, kGGUFMagic.data(), kGGUFMagic.size()) != 0) throw Error(path_ + ": not a GGUF file (bad magic)");
  c.skip(kGGUFMagic.size(), "magic");

  version_ = c.read<uint32_t>("version");
  if (version_ == 1) c.fail("GGUF version 1 is not supported (only versions 2 and 3)");
  if (version_ != 2 && version_ != 3) {
    if ((version_ & 0xFFFF) == 0) c.fail("big-endian GGUF files are not supported");
    c.fail("unsupported GGUF version " + std::to_string(version_) + " (only versions 2 and 3)");
  }
  const uint64_t tensor_count = c.read<uint64_t>("tensor count");
  const uint64_t kv_count = c.read<uint64_t>("metadata count");

  // A key-value pair holds at least a key length, a type and a one-byte value.
  c.check_count(kv_count, 8 + 4 + 1, "metadata");
  kv_.reserve(static_cast<size_t>(kv_count));
  std::unordered_set<std::string> keys;
  for (uint64_t k = 0; k < kv_count; ++k) {
    std::string key = c.read_string("metadata key");
    if (!keys.insert(key).second) c.fail("duplicate metadata key '" + key + "'");
    GGUFValue v = read_value(c, key);
    kv_.emplace_back(std::move(key), std::move(v));
  }

  if (const GGUFValue* a = find(kGGUFAlignmentKey)) {
    if (a->type != GGUFType::UINT32)
      c.fail("key '" + std::string(kGGUFAlignmentKey) + "' has type " + type_description(*a) + ", expected u32");
    if (a->u == 0 || (a->u & (a->u - 1)) != 0)
      c.fail("key '" + std::string(kGGUFAlignmentKey) + "' is " + std::to_string(a->u) + ", not a power of two");
    alignment_ = static_cast<size_t>(a->u);
  }

  // A tensor info holds at least a name length, n_dims, one extent, a type and an offset.
  c.check_count(tensor_count, 8 + 4 + 8 + 4 + 8, "tensor");
  tensors_.reserve(static_cast<size_t>(tensor_count));
  for (uint64_t k = 0; k < tensor_count; ++k) {
    GGUFTensorInfo t;
    t.name = c.read_string("tensor name");
    const std::string tname = "tensor '" + t.name + "'";
    if (!tensor_index_.emplace(t.name, tensors_.size()).second) c.fail("duplicate " + tname);
    const uint32_t n_dims = c.read<uint32_t>("tensor n_dims");
    if (n_dims < 1 || n_dims > 4) c.fail(tname + " has " + std::to_string(n_dims) + " dimensions (allowed 1 to 4)");
    t.n_dims = static_cast<int>(n_dims);
    int64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t ne = c.read<uint64_t>("tensor extent");
      if (ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        c.fail(tname + " extent " + std::to_string(d) + " is too large (" + std::to_string(ne) + ")");
      t.ne[d] = static_cast<int64_t>(ne);
      if (__builtin_mul_overflow(elements, t.ne[d], &elements)) c.fail(tname + " element count overflows");
    }
    const uint32_t type_id = c.read<uint32_t>("tensor type");
    const std::optional<DType> type = dtype_from_gguf(type_id);
    if (!type) c.fail(tname + " has unknown or unsupported type id " + std::to_string(type_id));
    t.type = *type;
    const DTypeInfo& info = dtype_info(t.type);
    if (t.ne[0] % info.block_size != 0)
      c.fail(tname + " row of " + std::to_string(t.ne[0]) + " elements is not a whole number of " +
             std::string(info.name) + " blocks of " + std::to_string(info.block_size));
    size_t nbytes = row_bytes(t.type, t.ne[0]);
    for (int d = 1; d < 4; ++d)
      if (__builtin_mul_overflow(nbytes, static_cast<uint64_t>(t.ne[d]), &nbytes)) c.fail(tname + " byte size overflows");
    t.nbytes = nbytes;
    t.offset = c.read<uint64_t>("tensor offset");
    if (t.offset % alignment_ != 0)
      c.fail(tname + " offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
             std::to_string(alignment_));
    tensors_.push_back(std::move(t));
  }

  data_offset_ = (c.pos() + alignment_ - 1) / alignment_ * alignment_;

  has_data_ = true;
  for (const GGUFTensorInfo& t : tensors_) {
    uint64_t start = 0;
    uint64_t end = 0;
    const bool overflow = __builtin_add_overflow(static_cast<uint64_t>(data_offset_), t.offset, &start) ||
                          __builtin_add_overflow(start, static_cast<uint64_t>(t.nbytes), &end);
    if (!overflow && end <= size_) continue;
    if (mode == GGUFLoad::kFull)
      throw Error(path_ + ": tensor '" + t.name + "' data runs past the end of the file (needs " +
                  std::to_string(t.nbytes) + " bytes at offset " + std::to_string(start) + ", file has " +
                  std::to_string(size_) + ")");
    has_data_ = false;
  }
}

void GGUFFile::copy_data(void* dst, size_t offset, size_t bytes) const {
  if (!has_data_ || offset > size_ - data_offset_ || bytes > size_ - data_offset_ - offset)
    throw Error(path_ + ": no tensor data to copy (" + std::to_string(bytes) + " bytes asked at offset " +
                std::to_string(offset) + ")");
  if (bytes == 0) return;  // a tensor with a zero dimension: `dst` may be null
  const size_t start = data_offset_ + offset;
  if (!owned_.empty()) {
    std::memcpy(dst, map_ + start, bytes);
    return;
  }
  auto* out = static_cast<uint8_t*>(dst);
  for (size_t done = 0; done < bytes;) {
    const ssize_t n = pread(fd_, out + done, bytes - done, static_cast<off_t>(start + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw Error(path_ + ": cannot read tensor data at offset " + std::to_string(start + done) + ": " +
                  (n < 0 ? std::strerror(errno) : "the file ended early"));
    done += static_cast<size_t>(n);
  }
}

const GGUFValue* GGUFFile::find(std::string_view key) const {
  for (const auto& [k, v] : kv_)
    if (k == key) return &v;
  return nullptr;
}

namespace {

[[noreturn]] void wrong_type(const GGUFFile& f, std::string_view key, const char* expected, const GGUFValue& v) {
  throw Error(f.path() + ": key '" + std::string(key) + "' has type " + type_description(v) + ", expected " + expected);
}

[[noreturn]] void missing(const GGUFFile& f, std::string_view key) {
  throw Error(f.path() + ": missing key '" + std::string(key) + "'");
}

int64_t as_int(const GGUFFile& f, std::string_view key, const GGUFValue& v) {
  if (!v.is_integer()) wrong_type(f, key, "an integer", v);
  if (v.type == GGUFType::UINT64 && v.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw Error(f.path() + ": key '" + std::string(key) + "' value " + std::to_string(v.u) + " does not fit in int64");
  return v.i;
}

double as_float(const GGUFFile& f, std::string_view key, const GGUFValue& v) {
  if (v.is_float()) return v.f;
  if (v.type == GGUFType::UINT64) return static_cast<double>(v.u);
  if (v.is_integer()) return static_cast<double>(v.i);
  wrong_type(f, key, "a number", v);
}

const std::string& as_string(const GGUFFile& f, std::string_view key, const GGUFValue& v) {
  if (v.type != GGUFType::STRING) wrong_type(f, key, "string", v);
  return v.s;
}

}  // namespace

int64_t GGUFFile::get_int(std::string_view key, int64_t fallback) const {
  const GGUFValue* v = find(key);
  return v ? as_int(*this, key, *v) : fallback;
}

double GGUFFile::get_float(std::string_view key, double fallback) const {
  const GGUFValue* v = find(key);
  return v ? as_float(*this, key, *v) : fallback;
}

std::string GGUFFile::get_string(std::string_view key, std::string fallback) const {
  const GGUFValue* v = find(key);
  return v ? as_string(*this, key, *v) : fallback;
}

bool GGUFFile::get_bool(std::string_view key, bool fallback) const {
  const GGUFValue* v = find(key);
  if (!v) return fallback;
  if (v->type != GGUFType::BOOL) wrong_type(*this, key, "bool", *v);
  return v->u != 0;
}

int64_t GGUFFile::require_int(std::string_view key) const {
  const GGUFValue* v = find(key);
  if (!v) missing(*this, key);
  return as_int(*this, key, *v);
}

double GGUFFile::require_float(std::string_view key) const {
  const GGUFValue* v = find(key);
  if (!v) missing(*this, key);
  return as_float(*this, key, *v);
}

std::string GGUFFile::require_string(std::string_view key) const {
  const GGUFValue* v = find(key);
  if (!v) missing(*this, key);
  return as_string(*this, key, *v);
}

const GGUFValue* GGUFFile::find_array(std::string_view key) const {
  const GGUFValue* v = find(key);
  if (v && v->type != GGUFType::ARRAY) wrong_type(*this, key, "array", *v);
  return v;
}

const GGUFTensorInfo* GGUFFile::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const void* GGUFFile::tensor_data(const GGUFTensorInfo& t) const {
  if (!has_data_) return nullptr;
  return map_ + data_offset_ + t.offset;
}

}  // namespace engine
