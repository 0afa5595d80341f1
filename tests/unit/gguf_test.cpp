#include "engine/gguf.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "engine/error.h"
#include "engine/synth.h"

using namespace engine;
namespace fs = std::filesystem;

namespace {

const std::string kModels = std::string(ENGINE_SHARED_DIR) + "/models";

constexpr DType kAllDTypes[] = {DType::F32,  DType::F16,  DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                                DType::Q8_0, DType::Q8_1, DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K,
                                DType::Q6_K, DType::Q8_K, DType::I32,  DType::BF16};

// A fresh directory under the test temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::path(testing::TempDir()) / "gguf_test_XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
  }
  ~TempDir() { fs::remove_all(dir_); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Hand-assembles GGUF bytes, so tests can build files the writer would never produce.
struct RawGGUF {
  std::vector<uint8_t> b;

  template <typename T>
  RawGGUF& put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    b.insert(b.end(), p, p + sizeof(T));
    return *this;
  }
  RawGGUF& u32(uint32_t v) { return put(v); }
  RawGGUF& u64(uint64_t v) { return put(v); }
  RawGGUF& str(const std::string& s) {
    u64(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  RawGGUF& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    b.insert(b.end(), {'G', 'G', 'U', 'F'});
    return u32(version).u64(n_tensors).u64(n_kv);
  }
  RawGGUF& kv_u32(const std::string& key, uint32_t v) { return str(key).u32(uint32_t(GGUFType::UINT32)).u32(v); }
  RawGGUF& tensor(const std::string& name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t n : ne) u64(n);
    return u32(type).u64(offset);
  }
  RawGGUF& pad(size_t alignment) {
    b.resize((b.size() + alignment - 1) / alignment * alignment);
    return *this;
  }
  RawGGUF& zeros(size_t n) {
    b.resize(b.size() + n);
    return *this;
  }
};

// Asserts that opening `path` throws an Error that starts with the path and contains `what`.
void expect_open_error(const std::string& path, const std::string& what, GGUFLoad mode = GGUFLoad::kFull) {
  try {
    GGUFFile::open(path, mode);
    ADD_FAILURE() << "opening " << path << " did not throw; expected: " << what;
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(path, 0), 0u) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << "message: " << msg << "\nexpected to contain: " << what;
  }
}

std::string expect_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no Error thrown";
  return "";
}

GGUFValue int_value(GGUFType t, int64_t i, uint64_t u) {
  GGUFValue v;
  v.type = t;
  v.i = i;
  v.u = u;
  return v;
}

GGUFValue float_value(GGUFType t, double f) {
  GGUFValue v;
  v.type = t;
  v.f = f;
  return v;
}

GGUFValue int_array(GGUFType elem, std::vector<int64_t> ints) {
  GGUFValue v;
  v.type = GGUFType::ARRAY;
  v.array_type = elem;
  v.array_size = ints.size();
  v.ints = std::move(ints);
  return v;
}

// A small model: a few keys of several types and three tensors with known bytes.
GGUFWriter small_model() {
  GGUFWriter w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.block_count", 2);
  w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_array_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "hello", "world"});
  w.set_array_f32("tokenizer.ggml.scores", {0, 0, 0, -1.5f, -2.5f});
  std::vector<uint8_t> f32(16 * 4 * 4);
  for (size_t k = 0; k < f32.size(); ++k) f32[k] = static_cast<uint8_t>(k * 7);
  w.add_tensor("token_embd.weight", DType::F32, {16, 4}, f32);
  w.add_tensor("blk.0.attn_q.weight", DType::Q4_0, {64, 2}, std::vector<uint8_t>(2 * 2 * 18, 0x5A));
  w.add_tensor("output_norm.weight", DType::F16, {16}, {});
  return w;
}

}  // namespace

TEST(GGUFRoundTrip, EveryValueTypeKeepsTypeValueAndOrder) {
  TempDir tmp;
  GGUFWriter w;
  w.set_value("u8", int_value(GGUFType::UINT8, 200, 200));
  w.set_value("i8", int_value(GGUFType::INT8, -100, static_cast<uint64_t>(-100)));
  w.set_value("u16", int_value(GGUFType::UINT16, 60000, 60000));
  w.set_value("i16", int_value(GGUFType::INT16, -30000, static_cast<uint64_t>(-30000)));
  w.set_u32("u32", 4000000000u);
  w.set_i32("i32", -2000000000);
  w.set_u64("u64", (uint64_t{1} << 63) + 5);
  w.set_value("i64", int_value(GGUFType::INT64, -(int64_t{1} << 62), static_cast<uint64_t>(-(int64_t{1} << 62))));
  w.set_f32("f32", 1.5f);
  w.set_value("f64", float_value(GGUFType::FLOAT64, -2.25e300));
  w.set_bool("bool", true);
  w.set_string("string", "h\xc3\xa9llo");
  w.set_array_strings("arr.string", {"a", "", "ccc"});
  w.set_array_f32("arr.f32", {0.5f, -1.0f});
  w.set_array_i32("arr.i32", {1, -2, 3});
  w.set_value("arr.u8", int_array(GGUFType::UINT8, {0, 255}));
  w.set_value("arr.i64", int_array(GGUFType::INT64, {std::numeric_limits<int64_t>::min(), 7}));
  w.set_value("arr.bool", int_array(GGUFType::BOOL, {1, 0, 1}));
  GGUFValue f64s;
  f64s.type = GGUFType::ARRAY;
  f64s.array_type = GGUFType::FLOAT64;
  f64s.floats = {1e-300, 3.0};
  f64s.array_size = 2;
  w.set_value("arr.f64", f64s);
  const std::string path = tmp.file("values.gguf");
  w.write(path);

  auto f = GGUFFile::open(path);
  EXPECT_EQ(f->version(), 3u);
  const std::vector<std::string> order = {"u8",  "i8",     "u16",        "i16",     "u32",     "i32",    "u64",
                                          "i64", "f32",    "f64",        "bool",    "string",  "arr.string",
                                          "arr.f32", "arr.i32", "arr.u8", "arr.i64", "arr.bool", "arr.f64"};
  ASSERT_EQ(f->metadata().size(), order.size());
  for (size_t k = 0; k < order.size(); ++k) EXPECT_EQ(f->metadata()[k].first, order[k]);

  EXPECT_EQ(f->find("u8")->type, GGUFType::UINT8);
  EXPECT_EQ(f->get_int("u8", 0), 200);
  EXPECT_EQ(f->find("i8")->type, GGUFType::INT8);
  EXPECT_EQ(f->get_int("i8", 0), -100);
  EXPECT_EQ(f->get_int("u16", 0), 60000);
  EXPECT_EQ(f->find("i16")->type, GGUFType::INT16);
  EXPECT_EQ(f->get_int("i16", 0), -30000);
  EXPECT_EQ(f->find("u32")->type, GGUFType::UINT32);
  EXPECT_EQ(f->get_int("u32", 0), 4000000000);
  EXPECT_EQ(f->get_int("i32", 0), -2000000000);
  EXPECT_EQ(f->find("u64")->type, GGUFType::UINT64);
  EXPECT_EQ(f->find("u64")->u, (uint64_t{1} << 63) + 5);
  EXPECT_THROW(f->get_int("u64", 0), Error);  // does not fit in int64
  EXPECT_EQ(f->find("i64")->type, GGUFType::INT64);
  EXPECT_EQ(f->get_int("i64", 0), -(int64_t{1} << 62));
  EXPECT_EQ(f->find("f32")->type, GGUFType::FLOAT32);
  EXPECT_EQ(f->get_float("f32", 0), 1.5);
  EXPECT_EQ(f->find("f64")->type, GGUFType::FLOAT64);
  EXPECT_EQ(f->get_float("f64", 0), -2.25e300);
  EXPECT_EQ(f->find("bool")->type, GGUFType::BOOL);
  EXPECT_TRUE(f->get_bool("bool", false));
  EXPECT_EQ(f->get_string("string", ""), "h\xc3\xa9llo");

  const GGUFValue* strings = f->find_array("arr.string");
  ASSERT_NE(strings, nullptr);
  EXPECT_EQ(strings->array_type, GGUFType::STRING);
  EXPECT_EQ(strings->array_size, 3u);
  EXPECT_EQ(strings->strings, (std::vector<std::string>{"a", "", "ccc"}));
  EXPECT_EQ(f->find_array("arr.f32")->floats, (std::vector<double>{0.5, -1.0}));
  EXPECT_EQ(f->find_array("arr.i32")->array_type, GGUFType::INT32);
  EXPECT_EQ(f->find_array("arr.i32")->ints, (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(f->find_array("arr.u8")->ints, (std::vector<int64_t>{0, 255}));
  EXPECT_EQ(f->find_array("arr.i64")->ints, (std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 7}));
  EXPECT_EQ(f->find_array("arr.bool")->array_type, GGUFType::BOOL);
  EXPECT_EQ(f->find_array("arr.bool")->ints, (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(f->find_array("arr.f64")->floats, (std::vector<double>{1e-300, 3.0}));
}

TEST(GGUFRoundTrip, CopiesMetadataFromAnotherFile) {
  TempDir tmp;
  small_model().write(tmp.file("a.gguf"));
  auto a = GGUFFile::open(tmp.file("a.gguf"));
  GGUFWriter w;
  for (const auto& [key, value] : a->metadata()) w.set_value(key, value);
  w.write(tmp.file("b.gguf"));
  auto b = GGUFFile::open(tmp.file("b.gguf"));
  ASSERT_EQ(b->metadata().size(), a->metadata().size());
  EXPECT_EQ(b->find_array("tokenizer.ggml.tokens")->strings, a->find_array("tokenizer.ggml.tokens")->strings);
  EXPECT_EQ(b->get_float("llama.attention.layer_norm_rms_epsilon", 0), a->get_float("llama.attention.layer_norm_rms_epsilon", 1));
}

TEST(GGUFRoundTrip, TensorsOfEveryDTypeKeepShapeSizeAndBytes) {
  TempDir tmp;
  GGUFWriter w;
  std::vector<std::vector<uint8_t>> payloads;
  for (DType t : kAllDTypes) {
    const int64_t ne0 = dtype_info(t).block_size * 2;
    std::vector<uint8_t> data(row_bytes(t, ne0) * 3);
    for (size_t k = 0; k < data.size(); ++k) data[k] = static_cast<uint8_t>(k + static_cast<size_t>(t));
    payloads.push_back(data);
    w.add_tensor(std::string(dtype_name(t)), t, {ne0, 3}, data);
  }
  const std::string path = tmp.file("dtypes.gguf");
  w.write(path);

  auto f = GGUFFile::open(path);
  ASSERT_TRUE(f->has_data());
  ASSERT_EQ(f->tensors().size(), std::size(kAllDTypes));
  for (size_t k = 0; k < std::size(kAllDTypes); ++k) {
    const DType t = kAllDTypes[k];
    SCOPED_TRACE(dtype_name(t));
    const GGUFTensorInfo* info = f->find_tensor(dtype_name(t));
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->type, t);
    EXPECT_EQ(info->n_dims, 2);
    EXPECT_EQ(info->ne[0], dtype_info(t).block_size * 2);
    EXPECT_EQ(info->ne[1], 3);
    EXPECT_EQ(info->ne[2], 1);
    EXPECT_EQ(info->nbytes, 3 * 2 * dtype_info(t).block_bytes);
    EXPECT_EQ((f->data_offset() + info->offset) % 32, 0u);
    const auto* data = static_cast<const uint8_t*>(f->tensor_data(*info));
    ASSERT_NE(data, nullptr);
    EXPECT_EQ(std::vector<uint8_t>(data, data + info->nbytes), payloads[k]);
  }
}

// The data stays in the file: copy_data reads the data section (each tensor at its offset) for a
// backend, from the file or from an in-memory image alike; without data it is an error.
TEST(GGUFRoundTrip, CopyDataReadsTheDataSectionFromFileOrImage) {
  TempDir tmp;
  GGUFWriter w;
  std::vector<uint8_t> payload(4096);
  for (size_t k = 0; k < payload.size(); ++k) payload[k] = static_cast<uint8_t>(k * 7);
  w.add_tensor("t", DType::F32, {1024}, payload);
  const std::string path = tmp.file("copy.gguf");
  w.write(path);

  for (const auto& f : {GGUFFile::open(path), GGUFFile::from_bytes("image", read_bytes(path))}) {
    SCOPED_TRACE(f->path());
    const GGUFTensorInfo& t = f->tensors()[0];
    std::vector<uint8_t> copy(t.offset + t.nbytes);
    f->copy_data(copy.data(), 0, copy.size());
    EXPECT_EQ(std::vector<uint8_t>(copy.begin() + static_cast<long>(t.offset), copy.end()), payload);
    std::vector<uint8_t> tail(100);
    f->copy_data(tail.data(), t.offset + 1000, tail.size());
    EXPECT_EQ(tail, std::vector<uint8_t>(payload.begin() + 1000, payload.begin() + 1100)) << "a piece from an offset";
    EXPECT_THROW(f->copy_data(copy.data(), 0, f->file_size()), Error) << "past the end of the file";
    EXPECT_THROW(f->copy_data(tail.data(), SIZE_MAX - 10, tail.size()), Error) << "an offset that overflows";
  }
  auto header = GGUFFile::open(path, GGUFLoad::kHeaderOnly);
  std::vector<uint8_t> copy(16);
  EXPECT_NO_THROW(header->copy_data(copy.data(), 0, copy.size())) << "the data is there, only not checked";
}

TEST(GGUFWriter, HonoursCallerAlignment) {
  TempDir tmp;
  GGUFWriter w;
  w.set_u32("general.alignment", 64);
  w.add_tensor("a", DType::F32, {3}, {});
  w.add_tensor("b", DType::F16, {5}, {});
  w.add_tensor("c", DType::Q8_0, {32}, {});
  const std::string path = tmp.file("aligned.gguf");
  w.write(path);
  auto f = GGUFFile::open(path);
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ(f->data_offset() % 64, 0u);
  for (const GGUFTensorInfo& t : f->tensors()) EXPECT_EQ(t.offset % 64, 0u) << t.name;
  EXPECT_EQ(f->find_tensor("b")->offset, 64u);
  EXPECT_EQ(f->find_tensor("c")->offset, 128u);
  const auto* zeros = static_cast<const uint8_t*>(f->tensor_data(*f->find_tensor("c")));
  EXPECT_EQ(std::vector<uint8_t>(zeros, zeros + 34), std::vector<uint8_t>(34, 0));
}

TEST(GGUFWriter, RejectsBadInput) {
  GGUFWriter w;
  EXPECT_NE(expect_error([&] { w.add_tensor("t", DType::F32, {4}, std::vector<uint8_t>(15)); }).find("needs 16 bytes"),
            std::string::npos);
  EXPECT_NE(expect_error([&] { w.add_tensor("q", DType::Q4_0, {48}, {}); }).find("whole number"), std::string::npos);
  EXPECT_THROW(w.add_tensor("five", DType::F32, {1, 1, 1, 1, 1}, {}), Error);
  w.add_tensor("t", DType::F32, {4}, {});
  EXPECT_NE(expect_error([&] { w.add_tensor("t", DType::F32, {4}, {}); }).find("duplicate tensor 't'"), std::string::npos);
  EXPECT_THROW(w.set_u32("general.alignment", 48), Error);
  EXPECT_THROW(w.set_u32("general.alignment", 0), Error);
}

TEST(GGUFWriter, HeaderOnlyLeavesDataOut) {
  TempDir tmp;
  const std::string full = tmp.file("full.gguf");
  const std::string header = tmp.file("header.gguf");
  small_model().write(full);
  small_model().write(header, /*header_only=*/true);
  auto f = GGUFFile::open(full);
  auto h = GGUFFile::open(header, GGUFLoad::kHeaderOnly);
  EXPECT_LT(h->file_size(), f->data_offset() + 1);
  EXPECT_FALSE(h->has_data());
  ASSERT_EQ(h->tensors().size(), 3u);
  EXPECT_EQ(h->tensor_data(h->tensors()[0]), nullptr);
  EXPECT_EQ(h->tensors()[1].offset, f->tensors()[1].offset);
  EXPECT_EQ(h->data_offset(), f->data_offset());
  expect_open_error(header, "tensor 'token_embd.weight' data runs past the end of the file");
}

// A synthesized matrix draws only its first distinct_rows rows; the rest repeat them in turn.
TEST(SynthModel, DistinctRowsRepeatBeyondTheDrawnOnes) {
  SynthSpec spec;
  spec.type = DType::Q4_K;
  spec.n_layer = 1;
  spec.distinct_rows = 3;
  auto f = GGUFFile::from_bytes("repeated", synthetic_model(spec, true).to_bytes());
  const GGUFTensorInfo* up = f->find_tensor("blk.0.ffn_up.weight");
  ASSERT_NE(up, nullptr);
  const size_t row = up->nbytes / static_cast<size_t>(spec.n_ff);
  const auto* bytes = static_cast<const uint8_t*>(f->tensor_data(*up));
  auto same_rows = [&](const uint8_t* data, int64_t a, int64_t b) {
    return std::equal(data + a * row, data + (a + 1) * row, data + b * row);
  };
  EXPECT_FALSE(same_rows(bytes, 0, 1));
  EXPECT_FALSE(same_rows(bytes, 1, 2));
  for (int64_t r = 3; r < spec.n_ff; ++r) ASSERT_TRUE(same_rows(bytes, r, r % 3)) << "row " << r;

  spec.distinct_rows = 0;
  auto all = GGUFFile::from_bytes("drawn", synthetic_model(spec, true).to_bytes());
  const auto* drawn = static_cast<const uint8_t*>(all->tensor_data(*all->find_tensor("blk.0.ffn_up.weight")));
  EXPECT_TRUE(same_rows(drawn, 0, 0));
  EXPECT_FALSE(same_rows(drawn, 3, 0)) << "every row drawn by default";
  spec.distinct_rows = -1;
  EXPECT_THROW(synthetic_model(spec, true), Error);
}

TEST(GGUFGetters, ConvertCheckAndFallBack) {
  TempDir tmp;
  GGUFWriter w;
  w.set_bool("flag", true);
  w.set_value("small", int_value(GGUFType::UINT8, 7, 7));
  w.set_string("name", "x");
  w.set_array_i32("list", {1});
  w.write(tmp.file("g.gguf"));
  auto f = GGUFFile::open(tmp.file("g.gguf"));
  EXPECT_EQ(f->get_int("flag", 0), 1);
  EXPECT_EQ(f->get_int("small", 0), 7);
  EXPECT_EQ(f->get_float("small", 0), 7.0);
  EXPECT_EQ(f->get_int("absent", 42), 42);
  EXPECT_EQ(f->get_string("absent", "fb"), "fb");
  EXPECT_EQ(f->find("absent"), nullptr);
  EXPECT_EQ(f->find_array("absent"), nullptr);
  EXPECT_EQ(f->find_tensor("absent"), nullptr);

  const std::string wrong = expect_error([&] { f->get_int("name", 0); });
  EXPECT_EQ(wrong.rfind(tmp.file("g.gguf"), 0), 0u);
  EXPECT_NE(wrong.find("'name' has type string, expected an integer"), std::string::npos) << wrong;
  EXPECT_NE(expect_error([&] { f->get_string("small", ""); }).find("'small' has type u8, expected string"),
            std::string::npos);
  EXPECT_NE(expect_error([&] { f->get_float("list", 0); }).find("has type array of i32"), std::string::npos);
  EXPECT_THROW(f->get_bool("small", false), Error);
  EXPECT_THROW(f->find_array("name"), Error);
  EXPECT_NE(expect_error([&] { f->require_int("missing.key"); }).find("missing key 'missing.key'"), std::string::npos);
  EXPECT_THROW(f->require_float("missing.key"), Error);
  EXPECT_THROW(f->require_string("missing.key"), Error);
}

TEST(GGUFSharedModels, Stories260KKnownFacts) {
  const std::string path = kModels + "/stories260K.gguf";
  if (!fs::exists(path)) GTEST_SKIP() << path << " not present";
  auto f = GGUFFile::open(path);
  EXPECT_EQ(f->require_string("general.architecture"), "llama");
  EXPECT_EQ(f->require_int("llama.embedding_length"), 64);
  EXPECT_EQ(f->require_int("llama.block_count"), 5);
  EXPECT_EQ(f->require_int("llama.attention.head_count"), 8);
  EXPECT_EQ(f->require_int("llama.attention.head_count_kv"), 4);
  const GGUFValue* tokens = f->find_array("tokenizer.ggml.tokens");
  ASSERT_NE(tokens, nullptr);
  EXPECT_EQ(tokens->strings.size(), 512u);
  const GGUFTensorInfo* embd = f->find_tensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->type, DType::F32);
  EXPECT_EQ(embd->n_dims, 2);
  EXPECT_EQ(embd->ne[0], 64);
  EXPECT_EQ(embd->ne[1], 512);
  EXPECT_EQ(embd->nbytes, 64u * 512u * 4u);
  EXPECT_TRUE(f->has_data());
  EXPECT_NE(f->tensor_data(*embd), nullptr);
}

TEST(GGUFSharedModels, HeaderOnlyFilesOpenOnlyInHeaderOnlyMode) {
  for (const char* name : {"mistral-large-2-q4_0", "llama-3.1-70b-q4_k", "llama-3.1-405b-q8_0"}) {
    const std::string path = kModels + "/" + name + ".header.gguf";
    if (!fs::exists(path)) GTEST_SKIP() << path << " not present";
    SCOPED_TRACE(path);
    auto f = GGUFFile::open(path, GGUFLoad::kHeaderOnly);
    EXPECT_FALSE(f->has_data());
    EXPECT_EQ(f->require_string("general.architecture"), "llama");
    ASSERT_NE(f->find_tensor("token_embd.weight"), nullptr);
    EXPECT_EQ(f->tensor_data(*f->find_tensor("token_embd.weight")), nullptr);
    EXPECT_GT(f->tensors().size(), 100u);
    expect_open_error(path, "data runs past the end of the file");
  }
}

TEST(GGUFRobustness, TruncatedAtEveryTenthIsAnError) {
  TempDir tmp;
  const std::string whole = tmp.file("whole.gguf");
  small_model().write(whole);
  const std::vector<uint8_t> bytes = read_bytes(whole);
  for (int tenth = 0; tenth < 10; ++tenth) {
    const size_t cut = bytes.size() * static_cast<size_t>(tenth) / 10;
    SCOPED_TRACE("cut at " + std::to_string(cut) + " of " + std::to_string(bytes.size()));
    const std::string path = tmp.file("cut" + std::to_string(tenth) + ".gguf");
    write_bytes(path, std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut)));
    expect_open_error(path, "");
  }
}

TEST(GGUFRobustness, MissingDirectoryEmptyAndForeignFiles) {
  TempDir tmp;
  expect_open_error(tmp.file("nope.gguf"), "No such file or directory");
  fs::create_directory(tmp.file("dir.gguf"));
  expect_open_error(tmp.file("dir.gguf"), "Is a directory");
  write_bytes(tmp.file("empty.gguf"), {});
  expect_open_error(tmp.file("empty.gguf"), "not a GGUF file");
  write_bytes(tmp.file("magic.gguf"), RawGGUF{}.str("GGML is not GGUF").b);
  expect_open_error(tmp.file("magic.gguf"), "not a GGUF file");
  write_bytes(tmp.file("v1.gguf"), RawGGUF{}.header(0, 0, 1).b);
  expect_open_error(tmp.file("v1.gguf"), "version 1 is not supported");
  write_bytes(tmp.file("v9.gguf"), RawGGUF{}.header(0, 0, 9).b);
  expect_open_error(tmp.file("v9.gguf"), "unsupported GGUF version 9");
  write_bytes(tmp.file("v2.gguf"), RawGGUF{}.header(0, 1, 2).kv_u32("k", 5).b);
  EXPECT_EQ(GGUFFile::open(tmp.file("v2.gguf"))->get_int("k", 0), 5);
}

TEST(GGUFRobustness, HugeCountsAndLengthsAreRejectedBeforeAllocating) {
  TempDir tmp;
  const uint64_t huge = uint64_t{1} << 62;
  write_bytes(tmp.file("kv.gguf"), RawGGUF{}.header(0, huge).b);
  expect_open_error(tmp.file("kv.gguf"), "metadata count");
  write_bytes(tmp.file("tensors.gguf"), RawGGUF{}.header(huge, 0).b);
  expect_open_error(tmp.file("tensors.gguf"), "tensor count");
  write_bytes(tmp.file("key.gguf"), RawGGUF{}.header(0, 1).u64(huge).zeros(64).b);
  expect_open_error(tmp.file("key.gguf"), "truncated file: metadata key");
  write_bytes(tmp.file("string.gguf"), RawGGUF{}.header(0, 1).str("k").u32(uint32_t(GGUFType::STRING)).u64(huge).b);
  expect_open_error(tmp.file("string.gguf"), "truncated file: string needs");
  write_bytes(tmp.file("array.gguf"),
              RawGGUF{}.header(0, 1).str("k").u32(uint32_t(GGUFType::ARRAY)).u32(uint32_t(GGUFType::UINT8)).u64(huge).b);
  expect_open_error(tmp.file("array.gguf"), "key 'k' array count");
  write_bytes(tmp.file("strings.gguf"),
              RawGGUF{}.header(0, 1).str("k").u32(uint32_t(GGUFType::ARRAY)).u32(uint32_t(GGUFType::STRING)).u64(huge).b);
  expect_open_error(tmp.file("strings.gguf"), "key 'k' array count");
  write_bytes(tmp.file("vtype.gguf"), RawGGUF{}.header(0, 1).str("k").u32(13).u32(0).b);
  expect_open_error(tmp.file("vtype.gguf"), "key 'k' has unknown value type id 13");
}

TEST(GGUFRobustness, NestedArraysKeepOnlyTheirCount) {
  TempDir tmp;
  RawGGUF raw;
  raw.header(0, 2).str("nested").u32(uint32_t(GGUFType::ARRAY)).u32(uint32_t(GGUFType::ARRAY)).u64(2);
  raw.u32(uint32_t(GGUFType::UINT16)).u64(3).put<uint16_t>(1).put<uint16_t>(2).put<uint16_t>(3);
  raw.u32(uint32_t(GGUFType::STRING)).u64(1).str("inner");
  raw.kv_u32("after", 9);
  write_bytes(tmp.file("nested.gguf"), raw.b);
  auto f = GGUFFile::open(tmp.file("nested.gguf"));
  const GGUFValue* v = f->find_array("nested");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->array_type, GGUFType::ARRAY);
  EXPECT_EQ(v->array_size, 2u);
  EXPECT_EQ(f->get_int("after", 0), 9);
  GGUFWriter w;
  EXPECT_THROW(w.set_value("nested", *v), Error);
}

TEST(GGUFRobustness, BadTensorInfosNameTheTensor) {
  TempDir tmp;
  auto one_tensor = [&](const std::string& file, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
    write_bytes(tmp.file(file), RawGGUF{}.header(1, 0).tensor("w", std::move(ne), type, offset).pad(32).zeros(64).b);
    return tmp.file(file);
  };
  EXPECT_NO_THROW(GGUFFile::open(one_tensor("ok.gguf", {16}, uint32_t(DType::F32), 0)));
  expect_open_error(one_tensor("dtype.gguf", {16}, 4, 0), "tensor 'w' has unknown or unsupported type id 4");
  expect_open_error(one_tensor("dims5.gguf", {1, 1, 1, 1, 1}, 0, 0), "tensor 'w' has 5 dimensions");
  expect_open_error(one_tensor("dims0.gguf", {}, 0, 0), "tensor 'w' has 0 dimensions");
  expect_open_error(one_tensor("misaligned.gguf", {4}, 0, 8), "tensor 'w' offset 8 is not a multiple of the alignment 32");
  expect_open_error(one_tensor("block.gguf", {16}, uint32_t(DType::Q4_0), 0), "not a whole number of q4_0 blocks");
  expect_open_error(one_tensor("overflow.gguf", {uint64_t{1} << 40, uint64_t{1} << 40}, 0, 0), "tensor 'w' element count overflows");
  expect_open_error(one_tensor("past.gguf", {32}, 0, 0),
                    "tensor 'w' data runs past the end of the file (needs 128 bytes at offset 64, file has 128)");
  expect_open_error(one_tensor("far.gguf", {4}, 0, uint64_t{1} << 63), "tensor 'w' data runs past the end of the file");
  EXPECT_FALSE(GGUFFile::open(tmp.file("past.gguf"), GGUFLoad::kHeaderOnly)->has_data());

  write_bytes(tmp.file("dup.gguf"),
              RawGGUF{}.header(2, 0).tensor("w", {4}, 0, 0).tensor("w", {4}, 0, 32).pad(32).zeros(64).b);
  expect_open_error(tmp.file("dup.gguf"), "duplicate tensor 'w'");
}

TEST(GGUFRobustness, BadMetadataIsNamed) {
  TempDir tmp;
  write_bytes(tmp.file("dupkey.gguf"), RawGGUF{}.header(0, 2).kv_u32("k", 1).kv_u32("k", 2).b);
  expect_open_error(tmp.file("dupkey.gguf"), "duplicate metadata key 'k'");
  write_bytes(tmp.file("align3.gguf"), RawGGUF{}.header(0, 1).kv_u32("general.alignment", 48).b);
  expect_open_error(tmp.file("align3.gguf"), "'general.alignment' is 48, not a power of two");
  write_bytes(tmp.file("align0.gguf"), RawGGUF{}.header(0, 1).kv_u32("general.alignment", 0).b);
  expect_open_error(tmp.file("align0.gguf"), "not a power of two");
  write_bytes(tmp.file("alignstr.gguf"),
              RawGGUF{}.header(0, 1).str("general.alignment").u32(uint32_t(GGUFType::STRING)).str("64").b);
  expect_open_error(tmp.file("alignstr.gguf"), "'general.alignment' has type string, expected u32");
  RawGGUF deep;
  deep.header(0, 1).str("deep").u32(uint32_t(GGUFType::ARRAY));
  for (int k = 0; k < 100; ++k) deep.u32(uint32_t(GGUFType::ARRAY)).u64(1);
  deep.u32(uint32_t(GGUFType::UINT8)).u64(0);
  write_bytes(tmp.file("deep.gguf"), deep.b);
  expect_open_error(tmp.file("deep.gguf"), "nests arrays deeper than");
}
