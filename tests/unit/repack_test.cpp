// Weights regrouped for the CPU kernels (kernels/cpu/repack.h): which weights a graph packs,
// that packing is lossless and happens once, that a packed multiply matches the file layout's,
// and that no other op may read a packed weight.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "cpu/repack.h"
#include "cpu/vec_dot.h"
#include "engine/backend.h"
#include "engine/error.h"
#include "engine/graph.h"
#include "engine/plan.h"
#include "engine/quants.h"

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
  const std::vector<Tensor*> to_pack = cpu::weights_to_pack(m.g);
  ASSERT_EQ(to_pack, std::vector<Tensor*>{m.proj}) << "GET_ROWS reads embd too";
  cpu::pack_rows(DType::Q8_0, m.k, 48, m.proj->data);
  m.proj->flags |= kPacked;
  EXPECT_NE(m.proj_bytes, proj_file);
  EXPECT_EQ(m.embd_bytes, embd_file);

  // Lossless: every group unpacks to the file's rows.
  const size_t row = row_bytes(DType::Q8_0, m.k);
  std::vector<uint8_t> back(proj_file.size());
  for (int64_t g = 0; g < 48 / cpu::kPackRows; ++g)
    cpu::unpack_group(DType::Q8_0, m.k, reinterpret_cast<const char*>(m.proj_bytes.data()) + g * cpu::kPackRows * row,
                      reinterpret_cast<char*>(back.data()) + g * cpu::kPackRows * row);
  EXPECT_EQ(back, proj_file);

  // Once: a packed weight is not offered again.
  EXPECT_TRUE(cpu::weights_to_pack(m.g).empty());
}

// Runs the graph on the CPU backend: packing its weights (when SIMD is in use) if `pack`.
std::vector<float> run(TwoWeights& m, bool pack) {
  auto backend = make_cpu_backend(2);
  cpu::set_cpu_features_override(!pack);  // the scalar level packs nothing
  backend->allocate(m.g, Plan::make(m.g));
  cpu::set_cpu_features_override(false);
  std::copy(m.x_values.begin(), m.x_values.end(), static_cast<float*>(m.x->data));
  std::copy(m.ids.begin(), m.ids.end(), static_cast<int32_t*>(m.id->data));
  backend->compute(m.g, nullptr);
  const auto* out = static_cast<const float*>(m.projected->data);
  return {out, out + m.projected->nelements()};
}

TEST(Repack, PackedMultiplyMatchesFileLayout) {
  TwoWeights file, packed;
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (auto& v : file.x_values) v = dist(rng);
  packed.x_values = file.x_values;
  const auto want = run(file, false);
  const auto got = run(packed, true);
  EXPECT_FALSE(file.proj->has(kPacked));
  EXPECT_EQ(packed.proj->has(kPacked), cpu::simd_active());
  EXPECT_EQ(want, got);
}

TEST(Repack, NoOtherOpReadsAPackedWeight) {
  TwoWeights m;
  m.embd->flags |= kPacked;  // as if packed: GET_ROWS would read groups as rows
  auto backend = make_cpu_backend(1);
  backend->allocate(m.g, Plan::make(m.g));
  try {
    backend->compute(m.g, nullptr);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cpu backend: 'embd.weight' is packed for MUL_MAT and cannot be read here (node 'rows')");
  }
}

}  // namespace
