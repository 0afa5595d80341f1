#pragma once
// GGUF v2/v3 files: a reader that maps the file's header and reads its tensor data (or, for
// analysis only, leaves it in the mapping), and a writer. Every count, offset and size read
// from a file is checked against the file's size before use; a malformed file raises
// engine::Error naming the file and what was wrong.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/dtype.h"

namespace engine {

// GGUF metadata value types (GGUF ids).
enum class GGUFType : uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};

std::string_view gguf_type_name(GGUFType t);

// One metadata value. Scalars live in the member of their family (integers and bools
// in `i` / `u`, floats in `f`, strings in `s`); arrays hold their elements in the
// vector of the element family. Nested arrays keep only their element count.
struct GGUFValue {
  GGUFType type = GGUFType::UINT8;
  GGUFType array_type = GGUFType::UINT8;  // element type when type == ARRAY
  int64_t i = 0;                          // signed view of integer and bool scalars
  uint64_t u = 0;                         // unsigned view of integer and bool scalars
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;  // integer and bool array elements
  std::vector<double> floats;
  std::vector<std::string> strings;
  uint64_t array_size = 0;

  bool is_integer() const;  // any integer or bool scalar
  bool is_float() const;
};

struct GGUFTensorInfo {
  std::string name;
  DType type = DType::F32;
  int n_dims = 0;
  int64_t ne[4] = {1, 1, 1, 1};
  uint64_t offset = 0;  // from the start of the data section
  size_t nbytes = 0;
};

enum class GGUFLoad {
  kFull,        // tensor data must be present in the file
  kHeaderOnly,  // metadata and tensor infos only; tensor data need not be present
};

class GGUFFile {
 public:
  // Maps `path` read-only and parses its header; kFull also checks that every tensor's data
  // lies in the file. The data stays in the file: a backend copies it out (copy_data) into
  // memory of its own. Throws Error on any malformed content.
  static std::unique_ptr<GGUFFile> open(const std::string& path, GGUFLoad mode = GGUFLoad::kFull);
  // Parses a GGUF image held in memory; `name` stands for the path in messages.
  static std::unique_ptr<GGUFFile> from_bytes(std::string name, std::vector<uint8_t> bytes,
                                              GGUFLoad mode = GGUFLoad::kFull);
  ~GGUFFile();
  GGUFFile(const GGUFFile&) = delete;
  GGUFFile& operator=(const GGUFFile&) = delete;

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  size_t alignment() const { return alignment_; }
  size_t data_offset() const { return data_offset_; }
  size_t file_size() const { return size_; }
  // True when every tensor's data lies inside the file.
  bool has_data() const { return has_data_; }

  const std::vector<std::pair<std::string, GGUFValue>>& metadata() const { return kv_; }
  const GGUFValue* find(std::string_view key) const;

  // Typed accessors. get_* return `fallback` when the key is absent; require_* throw an
  // Error naming the key and the file. Both throw when the value has the wrong type.
  int64_t get_int(std::string_view key, int64_t fallback) const;
  double get_float(std::string_view key, double fallback) const;
  std::string get_string(std::string_view key, std::string fallback) const;
  bool get_bool(std::string_view key, bool fallback) const;
  int64_t require_int(std::string_view key) const;
  double require_float(std::string_view key) const;
  std::string require_string(std::string_view key) const;
  // The array at `key`, or nullptr when absent; throws when the key is not an array.
  const GGUFValue* find_array(std::string_view key) const;

  const std::vector<GGUFTensorInfo>& tensors() const { return tensors_; }
  const GGUFTensorInfo* find_tensor(std::string_view name) const;
  // Pointer to the tensor's bytes in the mapping (or image); nullptr when has_data() is false.
  const void* tensor_data(const GGUFTensorInfo& t) const;
  // Copies `bytes` bytes of the data section from `offset` on (each tensor lies at its own
  // offset) to `dst`, read from the file (pread: the mapping's pages stay out of the process's
  // memory) or from the image. Throws Error when the data is absent or a read fails.
  void copy_data(void* dst, size_t offset, size_t bytes) const;

 private:
  GGUFFile() = default;
  void parse(GGUFLoad mode);

  std::string path_;
  int fd_ = -1;
  std::vector<uint8_t> owned_;  // the image, for from_bytes
  const uint8_t* map_ = nullptr;
  size_t size_ = 0;
  uint32_t version_ = 0;
  size_t alignment_ = 32;
  size_t data_offset_ = 0;
  bool has_data_ = false;
  std::vector<std::pair<std::string, GGUFValue>> kv_;
  std::vector<GGUFTensorInfo> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;  // name -> position in tensors_
};

// Builds a GGUF v3 file in memory order: metadata in insertion order, then tensor infos,
// then aligned tensor data.
class GGUFWriter {
 public:
  void set_u32(std::string key, uint32_t v);
  void set_i32(std::string key, int32_t v);
  void set_u64(std::string key, uint64_t v);
  void set_f32(std::string key, float v);
  void set_bool(std::string key, bool v);
  void set_string(std::string key, std::string v);
  void set_array_strings(std::string key, std::vector<std::string> v);
  void set_array_f32(std::string key, std::vector<float> v);
  void set_array_i32(std::string key, std::vector<int32_t> v);
  // Any value as GGUFValue (used to copy metadata from another file).
  void set_value(std::string key, GGUFValue v);

  // Adds a tensor; `data` must hold exactly row_bytes(type, ne0) * ne1 * ne2 * ne3
  // bytes. With `data` empty the tensor's bytes are zeros.
  void add_tensor(std::string name, DType type, std::vector<int64_t> ne, std::vector<uint8_t> data);

  // Writes the file; with header_only the tensor data section is left out.
  void write(const std::string& path, bool header_only = false) const;
  // The file's bytes, as write() would store them.
  std::vector<uint8_t> to_bytes(bool header_only = false) const;

 private:
  void emit(class GGUFSink& out, bool header_only) const;
  struct PendingTensor {
    std::string name;
    DType type;
    std::vector<int64_t> ne;
    std::vector<uint8_t> data;
  };
  std::vector<std::pair<std::string, GGUFValue>> kv_;
  std::vector<PendingTensor> tensors_;
  size_t alignment_ = 32;
};

}  // namespace engine
