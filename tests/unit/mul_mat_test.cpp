#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "cpu/cpu_features.h"
#include "cpu/host_buffer.h"
#include "cpu/kernels.h"
#include "cpu/mul_mat_amx.h"
#include "cpu/repack.h"
#include "cpu/vec_dot.h"
#include "engine/backend.h"
#include "engine/error.h"
#include "engine/graph.h"
#include "engine/op_params.h"
#include "engine/quants.h"
#include "random_floats.h"

using namespace engine;

namespace {

struct Storage {
  std::vector<std::vector<uint8_t>> buffers;

  // Gives a leaf or node its own zeroed storage.
  void bind(Tensor* t) {
    buffers.emplace_back(t->nbytes() + 64, 0);
    t->data = buffers.back().data();
  }
};

// Points a view (or CPY result) at its source's storage.
void bind_view(Tensor* t) { t->data = static_cast<char*>(t->view_src->data) + t->view_offs; }

// Fills every row of a dense tensor with quantized random values.
void fill_random(Tensor* t, uint32_t seed) {
  const auto x = random_floats(static_cast<size_t>(t->nelements()), seed);
  for (int64_t r = 0; r < t->nrows(); ++r)
    quantize_row(t->type, x.data() + r * t->ne[0], static_cast<char*>(t->data) + r * t->nb[1], t->ne[0]);
}

float f32_at(const Tensor* t, int64_t i0, int64_t i1, int64_t i2 = 0, int64_t i3 = 0) {
  float v;
  std::memcpy(&v, static_cast<const char*>(t->data) + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3],
              sizeof v);
  return v;
}

// Row i1 of (i2, i3) of a tensor with dense rows, as floats.
std::vector<float> row_of(const Tensor* t, int64_t i1, int64_t i2 = 0, int64_t i3 = 0) {
  std::vector<float> out(static_cast<size_t>(t->ne[0]));
  const char* p = static_cast<const char*>(t->data) + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
  dequantize_row(t->type, p, out.data(), t->ne[0]);
  return out;
}

// src1 row (i11, i12, i13) gathered through its strides and passed through the weight's
// activation format, so the reference sees exactly what the dot product sees.
std::vector<float> activation_row(DType weight, const Tensor* b, int64_t i11, int64_t i12, int64_t i13) {
  const int64_t K = b->ne[0];
  std::vector<float> x(static_cast<size_t>(K));
  for (int64_t k = 0; k < K; ++k) x[k] = f32_at(b, k, i11, i12, i13);
  const DType at = cpu::vec_dot_type(weight);
  std::vector<uint8_t> q(row_bytes(at, K));
  quantize_row(at, x.data(), q.data(), K);
  dequantize_row(at, q.data(), x.data(), K);
  return x;
}

// Threads run one after another here, with no barrier between the phases: the first pass
// converts every activation row, the second computes each thread's outputs from them. With
// claims, the last thread runs first and takes over the others' rows of a one-column product.
void run_mul_mat(Tensor* dst, int nth = 1, bool weight_packed = false, cpu::RowClaims* claims = nullptr) {
  cpu::HostBuffer work;
  work.reserve(cpu::mul_mat_work_size(dst, nth, weight_packed));
  if (claims) claims->reset(nth);
  for (int pass = 0; pass < (nth > 1 ? 2 : 1); ++pass)
    for (int i = 0; i < nth; ++i) {
      cpu::ComputeParams p;
      p.ith = claims ? nth - 1 - i : i;
      p.nth = nth;
      p.wdata = work.data();
      p.wsize = work.size();
      p.weight_packed = weight_packed;
      p.claims = claims;
      cpu::mul_mat(p, dst);
    }
}

// Compares dst against double-precision dots of dequantized weights and activations.
void expect_mul_mat_correct(const Tensor* dst) {
  const Tensor* a = dst->src[0];
  const Tensor* b = dst->src[1];
  const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];
  for (int64_t i13 = 0; i13 < b->ne[3]; ++i13)
    for (int64_t i12 = 0; i12 < b->ne[2]; ++i12)
      for (int64_t i11 = 0; i11 < b->ne[1]; ++i11) {
        const auto x = activation_row(a->type, b, i11, i12, i13);
        for (int64_t i01 = 0; i01 < a->ne[1]; ++i01) {
          const auto w = row_of(a, i01, i12 / r2, i13 / r3);
          double ref = 0, mag = 0;
          for (size_t k = 0; k < x.size(); ++k) {
            ref += double(w[k]) * x[k];
            mag += std::fabs(double(w[k]) * x[k]);
          }
          const double tol = (cpu::vec_dot_type(a->type) == DType::Q8_1 ? 5e-4 : 1e-5) * mag + 1e-6;
          ASSERT_NEAR(f32_at(dst, i01, i11, i12, i13), ref, tol)
              << dtype_name(a->type) << " at " << i01 << "," << i11 << "," << i12 << "," << i13;
        }
      }
}

const DType kWeightTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q4_0, DType::Q4_1,
                              DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::Q2_K, DType::Q3_K,
                              DType::Q4_K, DType::Q5_K, DType::Q6_K};

}  // namespace

TEST(MulMat, EveryWeightTypeMatchesReference) {
  for (DType t : kWeightTypes) {
    ASSERT_TRUE(cpu::mul_mat_supports(t));
    Graph g;
    Storage s;
    Tensor* w = g.new_tensor_2d(t, 256, 37, "w");
    Tensor* x = g.new_tensor_2d(DType::F32, 256, 3, "x");
    Tensor* y = g.mul_mat(w, x);
    s.bind(w), s.bind(x), s.bind(y);
    fill_random(w, 1);
    fill_random(x, 2);
    run_mul_mat(y);
    expect_mul_mat_correct(y);
  }
  EXPECT_FALSE(cpu::mul_mat_supports(DType::I32));
}

TEST(MulMat, BroadcastsWeightBatchesOverActivationBatches) {
  for (DType t : {DType::F16, DType::Q8_0}) {
    Graph g;
    Storage s;
    const int64_t wne[3] = {64, 5, 2}, xne[3] = {64, 3, 8};
    Tensor* w = g.new_tensor(t, 3, wne, "w");
    Tensor* x = g.new_tensor(DType::F32, 3, xne, "x");
    Tensor* y = g.mul_mat(w, x);
    s.bind(w), s.bind(x), s.bind(y);
    fill_random(w, 3);
    fill_random(x, 4);
    run_mul_mat(y);
    expect_mul_mat_correct(y);
    // Batch 5 of src1 uses weight batch 5 / 4 = 1: differs from what batch 0 would give.
    EXPECT_NE(f32_at(y, 0, 0, 5), f32_at(y, 0, 0, 0));
  }
}

TEST(MulMat, StridedPermutedAndTransposedActivations) {
  Graph g;
  Storage s;
  const int64_t wne[3] = {32, 6, 4}, qne[3] = {32, 4, 5};
  Tensor* w = g.new_tensor(DType::Q4_0, 3, wne, "w");
  Tensor* q = g.new_tensor(DType::F32, 3, qne, "q");  // [head_dim, heads, tokens]
  Tensor* qp = g.permute(q, 0, 2, 1, 3);               // [head_dim, tokens, heads], strided
  Tensor* y = g.mul_mat(w, qp);
  s.bind(w), s.bind(q), s.bind(y);
  bind_view(qp);
  fill_random(w, 5);
  fill_random(q, 6);
  run_mul_mat(y);
  expect_mul_mat_correct(y);

  Graph g2;
  Tensor* w2 = g2.new_tensor_2d(DType::F32, 6, 3, "w2");
  Tensor* x2 = g2.new_tensor_2d(DType::F32, 4, 6, "x2");
  Tensor* xt = g2.transpose(x2);  // [6, 4]: consecutive elements are a whole row apart
  Tensor* y2 = g2.mul_mat(w2, xt);
  s.bind(w2), s.bind(x2), s.bind(y2);
  bind_view(xt);
  fill_random(w2, 7);
  fill_random(x2, 8);
  run_mul_mat(y2);
  expect_mul_mat_correct(y2);
}

TEST(MulMat, StridedF16CacheViewAsWeight) {
  Graph g;
  Storage s;
  const int64_t cne[3] = {16, 12, 2}, qne[3] = {16, 3, 4};
  Tensor* cache = g.new_tensor(DType::F16, 3, cne, "cache_k");  // [head_dim, n_ctx, heads_kv]
  Tensor* k = g.view_3d(cache, 16, 5, 2, cache->nb[1], cache->nb[2], cache->nb[1]);  // 5 cells from cell 1
  Tensor* q = g.new_tensor(DType::F32, 3, qne, "q");
  Tensor* kq = g.mul_mat(k, q);
  s.bind(cache), s.bind(q), s.bind(kq);
  bind_view(k);
  fill_random(cache, 9);
  fill_random(q, 10);
  run_mul_mat(kq);
  expect_mul_mat_correct(kq);
}

TEST(MulMat, ThreadSplitCoversEveryOutput) {
  Graph g;
  Storage s;
  Tensor* w = g.new_tensor_2d(DType::Q4_K, 256, 50, "w");
  Tensor* x = g.new_tensor_2d(DType::F32, 256, 2, "x");
  Tensor* y = g.mul_mat(w, x);
  s.bind(w), s.bind(x), s.bind(y);
  fill_random(w, 11);
  fill_random(x, 12);
  run_mul_mat(y, 3);
  expect_mul_mat_correct(y);
}

// A one-column product's rows, handed out by claims, give the bits of each thread's even share.
TEST(MulMat, ClaimedRowsOfOneColumnGiveTheBitsOfAnEvenSplit) {
  for (const DType type : {DType::Q4_0, DType::Q4_K, DType::F16}) {
    Graph g;
    Storage s;
    Tensor* w = g.new_tensor_2d(type, 512, 200, "w");
    Tensor* x = g.new_tensor_2d(DType::F32, 512, 1, "x");
    Tensor* even = g.mul_mat(w, x);
    Tensor* claimed = g.mul_mat(w, x);
    s.bind(w), s.bind(x), s.bind(even), s.bind(claimed);
    fill_random(w, 21);
    fill_random(x, 22);
    run_mul_mat(even, 3);
    cpu::RowClaims claims;
    run_mul_mat(claimed, 3, false, &claims);
    EXPECT_EQ(std::memcmp(even->data, claimed->data, even->nbytes()), 0) << dtype_name(type);
    expect_mul_mat_correct(claimed);
  }
}

// Decode attention: one column per query head, `heads` query heads on each K / V head. They
// are multiplied as one tile; every output must still be its own row dot, bit for bit (four
// heads share a register reduction, a fifth runs alone). The causal query-key product of many
// positions (rows) with 64-element rows also goes through the spans of positions taken over
// every head and the four-row blocks of one-step rows.
TEST(MulMat, QueryHeadsSharingAKvHeadGiveTheirOwnRowDots) {
  struct Shape {
    int64_t K, rows;
    bool causal;
  };
  for (const Shape shape : {Shape{96, 21, false}, Shape{64, 203, true}})
    for (DType t : {DType::F16, DType::F32})
      for (int64_t heads : {2, 4, 5})
        for (bool kv_span : {false, true})
          for (int nth : {1, 2, 3}) {
            if (shape.causal && kv_span) continue;  // a causal product over a KV span is the V product
            SCOPED_TRACE(std::string(dtype_name(t)) + " heads " + std::to_string(heads) + (kv_span ? " span" : "") +
                         (shape.causal ? " causal" : "") + " threads " + std::to_string(nth));
            Graph g;
            Storage s;
            const int64_t K = shape.K, rows = shape.rows, kv_heads = 3;
            const int64_t wne[3] = {K, rows, kv_heads}, xne[3] = {K, 1, kv_heads * heads};
            Tensor* w = g.new_tensor(t, 3, wne, "k");
            Tensor* x = g.new_tensor(DType::F32, 3, xne, "q");
            Tensor* y = g.mul_mat(w, x);
            if (kv_span || shape.causal)
              set_mul_mat_params(*y, MulMatParams{kv_span, shape.causal, static_cast<int32_t>(rows - 1)});
            s.bind(w), s.bind(x), s.bind(y);
            fill_random(w, 13);
            fill_random(x, 14);
            run_mul_mat(y, nth);
            const cpu::DotOrder order = kv_span ? cpu::DotOrder::kRowPadded : cpu::DotOrder::kRow;
            std::vector<uint8_t> act(row_bytes(cpu::vec_dot_type(t), K));
            for (int64_t i12 = 0; i12 < xne[2]; ++i12) {
              cpu::quantize_activation(t, reinterpret_cast<const float*>(static_cast<char*>(x->data) + i12 * x->nb[2]),
                                       act.data(), K);
              for (int64_t r = 0; r < rows; ++r) {
                const char* wr = static_cast<const char*>(w->data) + r * w->nb[1] + i12 / heads * w->nb[2];
                const float want = cpu::dot(t, K, wr, act.data(), order), got = f32_at(y, r, 0, i12);
                ASSERT_EQ(std::memcmp(&want, &got, sizeof want), 0)
                    << "row " << r << " head " << i12 << ": " << want << " vs " << got;
              }
            }
          }
}

// Causal attention over n_past cached positions: q.k computes every output at or before its
// query's position, bit for bit as the whole product does, and skips some past it (left as
// NaN here); kqv, whose activations are zero past the query, equals the whole-span product.
TEST(MulMat, CausalAttentionComputesTheUnmaskedOutputsAndSkipsMaskedWork) {
  const int64_t head = 64, n_tokens = 150, heads = 2;
  for (int64_t n_past : {0, 40})
    for (bool whole_steps : {true, false})  // a KV span of whole 32-position steps, as the engine pads it, or not
      for (int nth : {1, 2}) {
        const int64_t n_kv = whole_steps ? (n_past + n_tokens + 31) / 32 * 32 : n_past + n_tokens + 10;
        SCOPED_TRACE("n_past " + std::to_string(n_past) + " n_kv " + std::to_string(n_kv) + " threads " +
                     std::to_string(nth));
        auto causal = [&](Tensor* t) {
          set_mul_mat_params(*t, MulMatParams{mul_mat_params(*t).kv_span, true, static_cast<int32_t>(n_past)});
        };
        Graph g;
        Storage s;
        const int64_t kne[3] = {head, n_kv, heads}, qne[3] = {head, n_tokens, heads};
        Tensor* k = g.new_tensor(DType::F16, 3, kne, "k");
        Tensor* q = g.new_tensor(DType::F32, 3, qne, "q");
        Tensor* kq = g.mul_mat(k, q);
        causal(kq);
        s.bind(k), s.bind(q), s.bind(kq);
        fill_random(k, 31);
        fill_random(q, 32);
        const std::vector<float> nan(static_cast<size_t>(kq->nelements()), std::nanf(""));
        std::memcpy(kq->data, nan.data(), kq->nbytes());
        run_mul_mat(kq, nth);
        std::vector<uint8_t> act(row_bytes(DType::F16, head));
        int64_t skipped = 0;
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t c = 0; c < n_tokens; ++c) {
            const char* qc = static_cast<char*>(q->data) + c * q->nb[1] + h * q->nb[2];
            cpu::quantize_activation(DType::F16, reinterpret_cast<const float*>(qc), act.data(), head);
            for (int64_t r = 0; r < n_kv; ++r) {
              const float got = f32_at(kq, r, c, h);
              if (r > n_past + c) {
                skipped += std::isnan(got);
                continue;
              }
              const char* wr = static_cast<const char*>(k->data) + r * k->nb[1] + h * k->nb[2];
              const float want = cpu::dot(DType::F16, head, wr, act.data(), cpu::DotOrder::kBatch);
              ASSERT_EQ(std::memcmp(&want, &got, sizeof want), 0) << "kq row " << r << " query " << c << " head " << h;
            }
          }
        EXPECT_GT(skipped, n_tokens * (n_tokens - 1) / 2) << "masked q.k outputs computed anyway";

        const int64_t vne[3] = {n_kv, head, heads}, pne[3] = {n_kv, n_tokens, heads};
        Tensor* v = g.new_tensor(DType::F16, 3, vne, "v");
        Tensor* probs = g.new_tensor(DType::F32, 3, pne, "probs");
        Tensor* whole = g.mul_mat(v, probs);
        Tensor* part = g.mul_mat(v, probs);
        set_mul_mat_params(*whole, MulMatParams{true, false, 0});
        set_mul_mat_params(*part, MulMatParams{true, false, 0});
        causal(part);
        s.bind(v), s.bind(probs), s.bind(whole), s.bind(part);
        fill_random(v, 33);
        fill_random(probs, 34);
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t c = 0; c < n_tokens; ++c)
            for (int64_t j = n_past + c + 1; j < n_kv; ++j)
              std::memset(static_cast<char*>(probs->data) + j * probs->nb[0] + c * probs->nb[1] + h * probs->nb[2], 0,
                          sizeof(float));
        run_mul_mat(whole, nth);
        run_mul_mat(part, nth);
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t c = 0; c < n_tokens; ++c)
            for (int64_t r = 0; r < head; ++r) {
              const float want = f32_at(whole, r, c, h), got = f32_at(part, r, c, h);
              ASSERT_EQ(std::memcmp(&want, &got, sizeof want), 0) << "kqv row " << r << " query " << c << " head " << h;
            }
      }
}

TEST(MulMat, RepackedKQuantsUseGemmForGroupsOfFourColumnsAndGemvForTheRest) {
  for (DType t : {DType::Q4_K, DType::Q2_K}) {
    Graph g;
    Storage s;
    Tensor* w = g.new_tensor_2d(t, 512, 24, "w");
    Tensor* x = g.new_tensor_2d(DType::F32, 512, 6, "x");
    Tensor* y = g.mul_mat(w, x);
    s.bind(w), s.bind(x), s.bind(y);
    fill_random(w, 21);
    fill_random(x, 22);
    run_mul_mat(y);
    std::vector<uint8_t> act(row_bytes(cpu::vec_dot_type(t), 512));
    int gemm_differs = 0;
    for (int64_t i11 = 0; i11 < 6; ++i11) {
      cpu::quantize_activation(t, reinterpret_cast<const float*>(static_cast<char*>(x->data) + i11 * x->nb[1]),
                               act.data(), 512);
      for (int64_t i01 = 0; i01 < 24; ++i01) {
        const void* wr = static_cast<char*>(w->data) + i01 * w->nb[1];
        const float gemm = cpu::dot(t, 512, wr, act.data(), cpu::DotOrder::kBatch);
        const float gemv = cpu::dot(t, 512, wr, act.data(), cpu::DotOrder::kRow);
        EXPECT_EQ(f32_at(y, i01, i11), i11 < 4 ? gemm : gemv) << dtype_name(t) << " at " << i01 << "," << i11;
        gemm_differs += gemm != gemv;
      }
    }
    EXPECT_GT(gemm_differs, 0) << dtype_name(t) << ": the outputs do not tell GEMM and GEMV apart";
  }
}

TEST(MulMat, RejectsTooSmallScratch) {
  Graph g;
  Storage s;
  Tensor* w = g.new_tensor_2d(DType::Q8_0, 64, 4, "w");
  Tensor* x = g.new_tensor_2d(DType::F32, 64, 2, "x");
  Tensor* y = g.mul_mat(w, x);
  s.bind(w), s.bind(x), s.bind(y);
  std::vector<uint8_t> work(16);
  cpu::ComputeParams p;
  p.wdata = work.data();
  p.wsize = work.size();
  EXPECT_THROW(cpu::mul_mat(p, y), Error);
}

// Switches AMX off for one scope (where it was on).
struct AmxOff {
  AmxOff() { cpu::set_amx_enabled(false); }
  ~AmxOff() { cpu::set_amx_enabled(true); }
};

// Q8_0 weights of k x rows (packed for the SIMD kernels or in the file's layout) by `cols` float
// columns.
struct Q8_0Prefill {
  Graph g;
  Storage s;
  Tensor* y;
  std::vector<std::vector<float>> weights;  // dequantized, before packing
  bool packed;

  Q8_0Prefill(int64_t k, int64_t rows, int64_t cols, bool pack) : packed(pack) {
    Tensor* w = g.new_tensor_2d(DType::Q8_0, k, rows, "w");
    Tensor* x = g.new_tensor_2d(DType::F32, k, cols, "x");
    y = g.mul_mat(w, x);
    s.bind(w), s.bind(x), s.bind(y);
    fill_random(w, 11);
    fill_random(x, 12);
    for (int64_t r = 0; r < rows; ++r) weights.push_back(row_of(w, r));
    if (packed) cpu::pack_rows(DType::Q8_0, k, rows, w->data, cpu::packed_chunk_blocks(*w));  // as the backend packs it
  }

  // The largest |y - w·x| over every output, in units of sum |w·x|, against double-precision
  // dots of the weights and the float activations as given (not quantized).
  double worst_float_product_error() const {
    const Tensor* x = y->src[1];
    double worst = 0;
    for (int64_t c = 0; c < x->ne[1]; ++c)
      for (size_t r = 0; r < weights.size(); ++r) {
        double ref = 0, mag = 0;
        for (int64_t k = 0; k < x->ne[0]; ++k) {
          ref += double(weights[r][k]) * f32_at(x, k, c);
          mag += std::fabs(double(weights[r][k]) * f32_at(x, k, c));
        }
        worst = std::max(worst, std::fabs(f32_at(y, static_cast<int64_t>(r), c) - ref) / (mag + 1e-30));
      }
    return worst;
  }
};

TEST(MulMatAmx, Q8_0PrefillIsTheFloatProductToTheBf16SplitsPrecision) {
  if (!cpu::amx_in_use()) GTEST_SKIP() << "this CPU (or OS) gives no AMX-BF16 tiles";
  // K past one weight panel pass (2048), rows past one panel (128), a partial column block; then
  // rows long enough to lie chunked when packed (repack.h).
  for (const auto& [k, rows] : {std::pair<int64_t, int64_t>{2048 + 96, 160}, {8192, 2 * cpu::kRunRows}})
    for (bool packed : {false, true})
      for (int64_t cols : {cpu::kAmxMinColumns, int64_t{45}})
        for (int nth : {1, 2, 3}) {
          Q8_0Prefill m(k, rows, cols, packed);
          if (k == 8192) {
            ASSERT_GT(cpu::packed_chunk_blocks(*m.y->src[0]), 0) << "these rows lie chunked when packed";
          }
          ASSERT_TRUE(cpu::mul_mat_amx_applies(m.y));
          run_mul_mat(m.y, nth, m.packed);
          const double amx = m.worst_float_product_error();
          {
            AmxOff off;
            ASSERT_FALSE(cpu::mul_mat_amx_applies(m.y));
            run_mul_mat(m.y, nth, m.packed);
          }
          const double quantized = m.worst_float_product_error();
          SCOPED_TRACE(testing::Message() << "k " << k << ", packed " << packed << ", " << cols << " columns, " << nth << " threads");
          EXPECT_LT(amx, 4e-6);
          EXPECT_GT(quantized, 10 * amx) << "Q8_0 activations should be far coarser than the bf16 splits";
        }
}

TEST(MulMatAmx, FewerColumnsKeepTheQuantizedOrder) {
  if (!cpu::amx_in_use()) GTEST_SKIP() << "this CPU (or OS) gives no AMX-BF16 tiles";
  Q8_0Prefill m(256, 64, cpu::kAmxMinColumns - 1, true);
  EXPECT_FALSE(cpu::mul_mat_amx_applies(m.y));
  run_mul_mat(m.y, 2, m.packed);
  const std::vector<uint8_t> with_amx(static_cast<uint8_t*>(m.y->data), static_cast<uint8_t*>(m.y->data) + m.y->nbytes());
  AmxOff off;
  run_mul_mat(m.y, 2, m.packed);
  EXPECT_EQ(0, std::memcmp(with_amx.data(), m.y->data, with_amx.size()));
}

TEST(MulMatAmx, CpuBackendReportsFloatActivationsOnlyWhereAmxRuns) {
  const auto backend = make_cpu_backend(1);
  EXPECT_EQ(backend->prefill_float_activations(DType::Q8_0), cpu::amx_in_use());
  EXPECT_FALSE(backend->prefill_float_activations(DType::Q4_0));
  if (!cpu::amx_in_use()) return;
  AmxOff off;
  EXPECT_FALSE(backend->prefill_float_activations(DType::Q8_0));
}

TEST(GetRows, DequantizesSelectedRows) {
  for (DType t : {DType::F32, DType::F16, DType::Q4_0}) {
    ASSERT_TRUE(cpu::get_rows_supports(t));
    Graph g;
    Storage s;
    Tensor* table = g.new_tensor_2d(t, 64, 10, "token_embd");
    Tensor* ids = g.new_tensor_2d(DType::I32, 3, 2, "ids");
    Tensor* out = g.get_rows(table, ids);
    s.bind(table), s.bind(ids), s.bind(out);
    fill_random(table, 13);
    const int32_t id_values[6] = {9, 0, 4, 4, 7, 1};
    std::memcpy(ids->data, id_values, sizeof id_values);
    // Three "threads" one after another: together they must write every row.
    for (int ith = 0; ith < 3; ++ith) {
      cpu::ComputeParams p;
      p.ith = ith, p.nth = 3;
      cpu::get_rows(p, out);
    }
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 3; ++i) {
        const auto expect = row_of(table, id_values[j * 3 + i]);
        for (int64_t k = 0; k < 64; ++k) ASSERT_EQ(f32_at(out, k, i, j), expect[k]) << dtype_name(t);
      }
  }
}

TEST(GetRows, RejectsOutOfRangeIds) {
  for (int32_t bad : {10, -1}) {
    Graph g;
    Storage s;
    Tensor* table = g.new_tensor_2d(DType::F32, 8, 10, "token_embd");
    Tensor* ids = g.new_tensor_1d(DType::I32, 2, "ids");
    Tensor* out = g.get_rows(table, ids);
    s.bind(table), s.bind(ids), s.bind(out);
    const int32_t id_values[2] = {1, bad};
    std::memcpy(ids->data, id_values, sizeof id_values);
    EXPECT_THROW(cpu::get_rows({}, out), Error);
  }
}

TEST(Cont, MakesPermutedTensorDense) {
  Graph g;
  Storage s;
  const int64_t ne[3] = {4, 3, 2};
  Tensor* a = g.new_tensor(DType::F32, 3, ne, "a");
  Tensor* p = g.permute(a, 1, 0, 2, 3);  // [3, 4, 2]
  Tensor* c = g.cont(p);
  s.bind(a), s.bind(c);
  bind_view(p);
  fill_random(a, 14);
  for (int ith = 0; ith < 2; ++ith) {
    cpu::ComputeParams params;
    params.ith = ith, params.nth = 2;
    cpu::cont(params, c);
  }
  ASSERT_TRUE(c->is_contiguous());
  for (int64_t k = 0; k < 2; ++k)
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 3; ++j) ASSERT_EQ(f32_at(c, j, i, k), f32_at(a, i, j, k));
}

// A V cache store: a transposed F32 tensor copied into rows of a cache one token each (decode)
// or several (a prompt), a cache row apart; every element lands where a scalar copy puts it,
// rounded as fp32_to_fp16, and the cache around the stored span stays as it was.
TEST(Cont, TransposedStoreFillsStridedCacheRows) {
  for (DType kv : {DType::F16, DType::F32}) {
    for (const int64_t n_tokens : {int64_t{1}, int64_t{3}}) {
      SCOPED_TRACE(std::string(dtype_name(kv)) + " " + std::to_string(n_tokens));
      constexpr int64_t kChannels = 100, kCtx = 40, kPast = 5;
      Graph g;
      Storage s;
      Tensor* v = g.new_tensor_2d(DType::F32, kChannels, n_tokens, "v");
      Tensor* cache = g.new_tensor_2d(kv, kCtx, kChannels, "cache");
      const size_t elem = dtype_info(kv).block_bytes;
      Tensor* v_t = g.transpose(v);
      Tensor* span = g.view_2d(cache, n_tokens, kChannels, kCtx * elem, kPast * elem);
      Tensor* store = g.cpy(v_t, span);
      s.bind(v), s.bind(cache);
      bind_view(v_t), bind_view(span), bind_view(store);
      fill_random(v, 16);
      std::memset(cache->data, 0x5a, cache->nbytes());
      for (int ith = 0; ith < 2; ++ith) {
        cpu::ComputeParams params;
        params.ith = ith, params.nth = 2;
        cpu::cont(params, store);
      }
      for (int64_t c = 0; c < kChannels; ++c)
        for (int64_t pos = 0; pos < kCtx; ++pos) {
          const char* at = static_cast<const char*>(cache->data) + (c * kCtx + pos) * elem;
          const bool stored = pos >= kPast && pos < kPast + n_tokens;
          if (!stored) {
            ASSERT_EQ(static_cast<unsigned char>(at[0]), 0x5a) << c << "," << pos;
            continue;
          }
          const float x = f32_at(v, c, pos - kPast);
          if (kv == DType::F16) {
            uint16_t h;
            std::memcpy(&h, at, 2);
            ASSERT_EQ(h, fp32_to_fp16(x)) << c << "," << pos;
          } else {
            float f;
            std::memcpy(&f, at, 4);
            ASSERT_EQ(f, x) << c << "," << pos;
          }
        }
    }
  }
}

// A permuted tensor flattened by cont_2d (as the attention output is): every thread's rows land
// in row-major order, converted to f16 on the way.
TEST(Cont, FlattensPermutedTensorInRowMajorOrder) {
  for (DType out : {DType::F32, DType::F16}) {
    Graph g;
    Storage s;
    const int64_t ne[3] = {4, 3, 5};
    Tensor* a = g.new_tensor(DType::F32, 3, ne, "a");
    Tensor* p = g.permute(a, 0, 2, 1, 3);  // [4, 5, 3]
    Tensor* flat = g.new_tensor_2d(out, 20, 3, "flat");
    Tensor* c = g.cpy(p, flat);
    s.bind(a), s.bind(flat);
    bind_view(p), bind_view(c);
    fill_random(a, 15);
    for (int ith = 0; ith < 3; ++ith) {
      cpu::ComputeParams params;
      params.ith = ith, params.nth = 3;
      cpu::cont(params, c);
    }
    std::vector<float> got(60);
    dequantize_row(out, flat->data, got.data(), 60);
    for (int64_t i2 = 0; i2 < 3; ++i2)
      for (int64_t i1 = 0; i1 < 5; ++i1)
        for (int64_t i0 = 0; i0 < 4; ++i0) {
          float want = f32_at(p, i0, i1, i2);
          if (out == DType::F16) want = fp16_to_fp32(fp32_to_fp16(want));
          ASSERT_EQ(got[i0 + 4 * (i1 + 5 * i2)], want) << dtype_name(out) << " at " << i0 << "," << i1 << "," << i2;
        }
  }
}

TEST(Cont, CopiesF32IntoStridedF16CacheViews) {
  Graph g;
  Storage s;
  Tensor* kcache = g.new_tensor_1d(DType::F16, 8 * 10, "cache_k");
  Tensor* vcache = g.new_tensor_2d(DType::F16, 10, 8, "cache_v");  // [n_ctx, dim]: transposed V
  Tensor* cur = g.new_tensor_2d(DType::F32, 8, 3, "cur");          // [dim, tokens]
  // K: 3 tokens flattened into cells 2..4 (shapes differ, element order kept).
  Tensor* kview = g.view_1d(kcache, 8 * 3, 2 * kcache->nb[0] * 8);
  Tensor* kcpy = g.cpy(cur, kview);
  // V: transposed source into column block 2..4 of every row.
  Tensor* vview = g.view_2d(vcache, 3, 8, vcache->nb[1], 2 * vcache->nb[0]);
  Tensor* vcpy = g.cpy(g.transpose(cur), vview);
  s.bind(kcache), s.bind(vcache), s.bind(cur);
  for (Tensor* t : {kview, kcpy, vview, vcpy, vcpy->src[0]}) bind_view(t);
  ASSERT_TRUE(cpu::copy_supports(DType::F32, DType::F16));
  std::memset(kcache->data, 0xAB, kcache->nbytes());
  std::memset(vcache->data, 0xAB, vcache->nbytes());
  fill_random(cur, 15);
  cpu::cont({}, kcpy);
  cpu::cont({}, vcpy);

  const auto* k16 = static_cast<const uint16_t*>(kcache->data);
  const auto* v16 = static_cast<const uint16_t*>(vcache->data);
  for (int64_t cell = 0; cell < 10; ++cell)
    for (int64_t d = 0; d < 8; ++d) {
      const bool written = cell >= 2 && cell < 5;
      const uint16_t expect = written ? fp32_to_fp16(f32_at(cur, d, cell - 2)) : 0xABAB;
      ASSERT_EQ(k16[cell * 8 + d], expect) << "k cell " << cell << " dim " << d;
      ASSERT_EQ(v16[d * 10 + cell], expect) << "v cell " << cell << " dim " << d;
    }
}

TEST(Cont, ConvertsBetweenFloatTypesAndRejectsUnsupportedPairs) {
  Graph g;
  Storage s;
  Tensor* h = g.new_tensor_2d(DType::F16, 32, 2, "h");
  Tensor* f = g.new_tensor_2d(DType::F32, 32, 2, "f");
  Tensor* to_f32 = g.cpy(h, f);
  s.bind(h), s.bind(f);
  bind_view(to_f32);
  for (int64_t i = 0; i < 64; ++i) static_cast<uint16_t*>(h->data)[i] = fp32_to_fp16(0.25f * static_cast<float>(i));
  cpu::cont({}, to_f32);
  for (int64_t i = 0; i < 64; ++i) ASSERT_EQ(static_cast<const float*>(f->data)[i], 0.25f * static_cast<float>(i));

  EXPECT_TRUE(cpu::copy_supports(DType::F32, DType::Q8_0));
  EXPECT_FALSE(cpu::copy_supports(DType::I32, DType::F32));
  EXPECT_FALSE(cpu::copy_supports(DType::Q4_0, DType::F16));
  Tensor* ids = g.new_tensor_2d(DType::I32, 32, 2, "ids");
  Tensor* bad = g.cpy(ids, f);
  s.bind(ids);
  bind_view(bad);
  EXPECT_THROW(cpu::cont({}, bad), Error);
}
