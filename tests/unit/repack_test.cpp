// Weights regrouped for the CPU kernels (kernels/cpu/repack.h): which weights a graph packs,
// that packing is lossless and happens once, that it happens in the backend's copy (two
// backends on one model agree, and the model keeps its bytes), and that no other op may read a
// packed weight.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "cpu/cpu_features.h"
#include "cpu/repack.h"
#include "cpu/vec_dot.h"
#include "engine/backend.h"
#include "engine/error.h"
#include "engine/graph.h"
#include "engine/plan.h"
#include "engine/quants.h"
#include "engine/session.h"
#include "engine/synth.h"
#include "test_models.h"

using namespace engine;

namespace {

std::vector<uint8_t> quantized(DType type, int64_t k, int64_t rows, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(k * rows));
  for (auto& v : x) v = dist(rng);
  std::vector<uint8_t> out(row_bytes(type, k) * rows);
  for (int64_t r = 0; r < rows; ++r) quantize_row(type, x.data() + r * k, out.data() + r * row_bytes(type, k), k);
  return out;
}

Tensor* weight(Graph& g, DType type, int64_t k, int64_t rows, std::vector<uint8_t>& bytes, const char* name) {
  Tensor* w = g.new_tensor_2d(type, k, rows, name);
  w->flags = kWeight;
  w->data = bytes.data();
  return w;
}

// x [k, cols] times a Q8_0 weight `proj` ([k, 48]) and a Q4_0 `embd` ([k, 32]) that is also
// looked up by GET_ROWS, as a tied embedding is.
struct TwoWeights {
  static constexpr int64_t k = 64, cols = 3;
  std::vector<uint8_t> proj_bytes = quantized(DType::Q8_0, k, 48, 1), embd_bytes = quantized(DType::Q4_0, k, 32, 2);
  std::vector<float> x_values = std::vector<float>(k * cols, 0.25f);
  std::vector<int32_t> ids = {3, 5};
  Graph g;
  Tensor* proj = weight(g, DType::Q8_0, k, 48, proj_bytes, "proj.weight");
  Tensor* embd = weight(g, DType::Q4_0, k, 32, embd_bytes, "embd.weight");
  Tensor* x = g.new_tensor_2d(DType::F32, k, cols, "x");
  Tensor* id = g.new_tensor_1d(DType::I32, 2, "ids");
  Tensor* projected = named(g.mul_mat(proj, x), "projected");
  Tensor* logits = named(g.mul_mat(embd, x), "logits");
  Tensor* rows = named(g.get_rows(embd, id), "rows");
  TwoWeights() {
    for (Tensor* t : {projected, logits, rows}) {
      t->flags |= kOutput;
      g.expand(t);
    }
    x->flags = kInput;
    id->flags = kInput;
  }
};

TEST(Repack, OffersOnlyWeightsThatOnlyMulMatReadsAndUnpacksLosslessly) {
  TwoWeights m;
  const auto proj_file = m.proj_bytes, embd_file = m.embd_bytes;
  const auto none_packed = [](const Tensor&) { return false; };
  const std::vector<Tensor*> to_pack = cpu::weights_to_pack(m.g, none_packed);
  ASSERT_EQ(to_pack, std::vector<Tensor*>{m.proj}) << "GET_ROWS reads embd too";
  cpu::pack_rows(DType::Q8_0, m.k, 48, m.proj->data);
  EXPECT_NE(m.proj_bytes, proj_file);
  EXPECT_EQ(m.embd_bytes, embd_file);

  // Lossless: every group unpacks to the file's rows.
  const size_t row = row_bytes(DType::Q8_0, m.k);
  std::vector<uint8_t> back(proj_file.size());
  for (int64_t g = 0; g < 48 / cpu::kPackRows; ++g)
    cpu::unpack_group(DType::Q8_0, m.k, reinterpret_cast<const char*>(m.proj_bytes.data()), g * cpu::kPackRows, 0,
                      reinterpret_cast<char*>(back.data()) + g * cpu::kPackRows * row);
  EXPECT_EQ(back, proj_file);

  // Once: a weight the backend has packed is not offered again.
  EXPECT_TRUE(cpu::weights_to_pack(m.g, [&](const Tensor& t) { return &t == m.proj; }).empty());
}

// Long rows lie chunked: walked run by run, chunk by chunk, group by group, block by block (as the
// one-column kernels walk them), the blocks are one unbroken stream over the whole weight, and
// every group unpacks to the file's rows. Rows whose group fits L1, and rows not whole runs, stay
// unchunked.
TEST(Repack, ChunkedRunsAreOneStreamAndUnpackLosslessly) {
  const DType type = DType::Q4_0;
  const int64_t k = 8192, rows = 2 * cpu::kRunRows;
  // Past this machine's L1 data cache a group's row is long: one block more than fits is chunked.
  const int64_t fits = static_cast<int64_t>(cpu::long_group_bytes() / (cpu::kPackRows * row_bytes(type, 32))) * 32;
  EXPECT_EQ(cpu::packed_chunk_blocks(type, fits, rows), 0);
  EXPECT_GT(cpu::packed_chunk_blocks(type, fits + 32, rows), 0);
  EXPECT_EQ(cpu::packed_chunk_blocks(type, k, rows + cpu::kPackRows), 0) << "rows not whole runs";
  EXPECT_EQ(cpu::packed_chunk_blocks(DType::Q6_K, k, rows), 0) << "Q6_K's one-column kernel walks groups whole";
  const int64_t chunk = cpu::packed_chunk_blocks(type, k, rows);
  const int64_t blocks = k / dtype_info(type).block_size;
  ASSERT_GT(chunk, 0);
  ASSERT_NE(blocks % chunk, 0) << "the test wants a shorter last chunk";
  const size_t bb = dtype_info(type).block_bytes, row = row_bytes(type, k);

  size_t next = 0;
  for (int64_t run = 0; run < rows / cpu::kRunRows; ++run)
    for (int64_t c0 = 0; c0 < blocks; c0 += chunk)
      for (int64_t g = 0; g < cpu::kChunkGroups; ++g)
        for (int64_t i = c0; i < std::min(blocks, c0 + chunk); ++i) {
          const int64_t r = (run * cpu::kChunkGroups + g) * cpu::kPackRows;
          ASSERT_EQ(cpu::packed_block_offset(r, i, bb, row, chunk), next) << "run " << run << " group " << g << " block " << i;
          next += cpu::kPackRows * bb;
        }
  EXPECT_EQ(next, static_cast<size_t>(rows) * row);

  std::vector<char> file(static_cast<size_t>(rows) * row);
  std::mt19937 rng(3);
  for (char& b : file) b = static_cast<char>(rng());
  std::vector<char> packed = file;
  cpu::pack_rows(type, k, rows, packed.data(), chunk);
  EXPECT_NE(packed, file);
  std::vector<char> back(file.size());
  for (int64_t r0 = 0; r0 < rows; r0 += cpu::kPackRows) cpu::unpack_group(type, k, packed.data(), r0, chunk, back.data() + r0 * row);
  EXPECT_EQ(back, file);
  EXPECT_THROW(cpu::pack_rows(type, k, rows - cpu::kPackRows, packed.data(), chunk), Error) << "rows not whole runs";
}

// Two sessions on one loaded model, one backend packing its copy of the weights (SIMD) and one
// keeping the file layout (created at the scalar level): the same logits, bit for bit, and the
// model's own bytes (those of `weight`) as the file has them.
void expect_packing_changes_nothing(const std::string& path, const std::string& weight) {
  cpu::set_amx_enabled(false);  // AMX changes Q8_0 prefill sums; these prompts stay below it anyway
  const std::shared_ptr<const Model> model = Model::load(path);
  const GGUFTensorInfo& q = *model->find_weight(weight);
  const auto* file_bytes = static_cast<const uint8_t*>(model->file().tensor_data(q));
  const std::vector<uint8_t> before(file_bytes, file_bytes + q.nbytes);

  SessionParams params;
  params.n_ctx = 64;
  params.n_threads = 2;
  const auto packing = Session::create(model, params);
  cpu::set_cpu_features_override(true);
  const auto file_layout = Session::create(model, params);
  cpu::set_cpu_features_override(false);

  const auto copy = [](std::span<const float> logits) { return std::vector<float>(logits.begin(), logits.end()); };
  const std::vector<int32_t> prompt = {1, 300, 17, 42, 99};
  const std::vector<float> prefill_logits = copy(packing->prefill(prompt));
  EXPECT_EQ(prefill_logits, copy(file_layout->prefill(prompt)));
  const std::vector<float> decode_logits = copy(packing->decode(7));
  EXPECT_EQ(decode_logits, copy(file_layout->decode(7)));
  EXPECT_NE(prefill_logits, decode_logits);
  EXPECT_EQ(std::vector<uint8_t>(file_bytes, file_bytes + q.nbytes), before);
  cpu::set_amx_enabled(true);
}

TEST(Repack, TwoBackendsShareOneModelWithoutChangingIt) {
  if (!cpu::simd_active()) GTEST_SKIP() << "no SIMD kernels here, so no backend packs";
  expect_packing_changes_nothing(test_models::synthetic_model(DType::Q8_0), "blk.0.attn_q.weight");
}

// Experts packed, each expert's rows whole groups: MUL_MAT_ID reads them as the file has them.
TEST(Repack, PackedExpertsGiveTheFileLayoutsLogits) {
  if (!cpu::simd_active()) GTEST_SKIP() << "no SIMD kernels here, so no backend packs";
  SynthSpec spec;
  spec.type = DType::Q4_K;
  spec.n_embd = 256;
  spec.n_ff = 256;
  spec.n_layer = 2;
  spec.n_expert = 4;
  spec.n_expert_used = 2;
  spec.n_ctx_train = 256;
  const std::string path = test_models::written_once("mixtral-q4_k", spec);
  Graph g;
  const int64_t ne[3] = {256, 256, 4};
  Tensor* experts = g.new_tensor(DType::Q4_K, 3, ne, "experts");
  experts->flags = kWeight;
  ASSERT_TRUE(cpu::packable(*experts));
  expect_packing_changes_nothing(path, "blk.1.ffn_up_exps.weight");
}

TEST(Repack, NoOtherOpReadsAPackedWeight) {
  if (!cpu::simd_active()) GTEST_SKIP() << "no SIMD kernels here, so nothing is packed";
  const auto model = Model::load(test_models::synthetic_model(DType::Q8_0));
  const GGUFTensorInfo& info = *model->find_weight("blk.0.attn_q.weight");
  auto backend = make_cpu_backend(1);
  backend->load_weights(*model);
  const auto leaf = [&](Graph& g) {
    Tensor* w = g.new_tensor(info.type, info.n_dims, info.ne, info.name);
    w->flags = kWeight;
    w->storage_index = static_cast<int32_t>(&info - model->file().tensors().data());
    return w;
  };
  Graph multiply;  // packs the weight: only MUL_MAT reads it here
  Tensor* x = multiply.new_tensor_2d(DType::F32, info.ne[0], 2, "x");
  x->flags = kInput;
  multiply.expand(multiply.mul_mat(leaf(multiply), x));
  backend->allocate(multiply, Plan::make(multiply));

  Graph lookup;  // then GET_ROWS would read its groups as rows
  Tensor* ids = lookup.new_tensor_1d(DType::I32, 1, "ids");
  ids->flags = kInput;
  Tensor* rows = named(lookup.get_rows(leaf(lookup), ids), "rows");
  lookup.expand(rows);
  backend->allocate(lookup, Plan::make(lookup));
  const int32_t id = 3;
  backend->set_input(*ids, &id, sizeof id);
  try {
    backend->compute(lookup, nullptr);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cpu backend: 'blk.0.attn_q.weight' is packed for products and cannot be read here (node 'rows')");
  }
}

}  // namespace
