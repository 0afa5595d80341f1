// CPU kernels against naive references, thread-count independence, the thread pool and
// barrier, and the CPU backend's dispatch, validation and timing records.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cpu/host_buffer.h"
#include "cpu/kernels.h"
#include "cpu/scratch.h"
#include "cpu/thread_pool.h"
#include "engine/backend.h"
#include "engine/error.h"
#include "engine/graph.h"
#include "engine/plan.h"
#include "engine/quants.h"

using namespace engine;
using engine::cpu::ComputeParams;
using KernelFn = void (*)(const ComputeParams&, Tensor*);

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Owns the storage of the tensors a test binds by hand.
struct Storage {
  std::vector<std::vector<float>> blocks;

  float* bind(Tensor* t, std::vector<float> values) {
    EXPECT_EQ(values.size() * sizeof(float), t->nbytes()) << t->name;
    blocks.push_back(std::move(values));
    t->data = blocks.back().data();
    return blocks.back().data();
  }
  float* bind_zeros(Tensor* t) { return bind(t, std::vector<float>(t->nbytes() / sizeof(float), 0.0f)); }
};

std::vector<float> random_values(size_t n, uint32_t seed, float lo = -2.0f, float hi = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

Tensor* tensor(Graph& g, std::vector<int64_t> ne, const char* name) {
  return g.new_tensor(DType::F32, static_cast<int>(ne.size()), ne.data(), name);
}

float at(const Tensor* t, int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) {
  return *reinterpret_cast<const float*>(static_cast<const char*>(t->data) + i0 * t->nb[0] + i1 * t->nb[1] +
                                         i2 * t->nb[2] + i3 * t->nb[3]);
}

// The work memory dst's kernel needs with nth threads, as the backend gives it.
cpu::HostBuffer work_for(const Tensor* dst, int nth) {
  cpu::HostBuffer work;
  work.reserve(cpu::node_work_size(dst, nth, false));
  return work;
}

// Runs `kernel` on dst with nth threads and returns dst's values.
std::vector<float> run_with_threads(KernelFn kernel, Tensor* dst, int nth) {
  static cpu::ThreadPool pool(3);
  cpu::Barrier barrier(nth);
  const cpu::HostBuffer work = work_for(dst, nth);
  std::memset(dst->data, 0xff, dst->nbytes());  // NaN fill: rows left unwritten show up
  pool.run(nth, [&](int ith) {
    ComputeParams p;
    p.ith = ith;
    p.nth = nth;
    p.wdata = work.data();
    p.wsize = work.size();
    p.barrier = &barrier;
    kernel(p, dst);
  });
  const auto* f = static_cast<const float*>(dst->data);
  return {f, f + dst->nbytes() / sizeof(float)};
}

// Runs on 1, 2 and 3 threads, expects bit-identical results, and returns them.
std::vector<float> run_all_splits(KernelFn kernel, Tensor* dst) {
  const std::vector<float> one = run_with_threads(kernel, dst, 1);
  for (int nth : {2, 3}) {
    const std::vector<float> many = run_with_threads(kernel, dst, nth);
    EXPECT_EQ(0, std::memcmp(one.data(), many.data(), one.size() * sizeof(float))) << "nth=" << nth;
  }
  run_with_threads(kernel, dst, 1);
  return one;
}

void expect_near_rel(float got, double want, double rel, const char* what) {
  EXPECT_NEAR(got, want, rel * std::max(1.0, std::fabs(want))) << what;
}

}  // namespace

// ---- element-wise and normalization kernels ----

TEST(CpuOps, AddBroadcastsOneDimWeightOverRows) {
  Graph g;
  Storage s;
  Tensor* a = tensor(g, {5, 3, 2}, "a");
  Tensor* w = tensor(g, {5}, "w");
  Tensor* y = g.add(a, w);
  const float* av = s.bind(a, random_values(30, 1));
  const float* wv = s.bind(w, random_values(5, 2));
  s.bind_zeros(y);
  const std::vector<float> out = run_all_splits(cpu::add, y);
  for (int r = 0; r < 6; ++r)
    for (int k = 0; k < 5; ++k) EXPECT_EQ(out[r * 5 + k], av[r * 5 + k] + wv[k]);
}

TEST(CpuOps, MulRepeatsSourceOverAllFourDims) {
  Graph g;
  Storage s;
  Tensor* a = tensor(g, {6, 4, 3, 2}, "a");
  Tensor* b = tensor(g, {3, 2, 1, 2}, "b");
  Tensor* y = g.mul(a, b);
  s.bind(a, random_values(144, 3));
  s.bind(b, random_values(12, 4));
  s.bind_zeros(y);
  const std::vector<float> out = run_all_splits(cpu::mul, y);
  for (int i3 = 0; i3 < 2; ++i3)
    for (int i2 = 0; i2 < 3; ++i2)
      for (int i1 = 0; i1 < 4; ++i1)
        for (int i0 = 0; i0 < 6; ++i0)
          EXPECT_EQ(out[((i3 * 3 + i2) * 4 + i1) * 6 + i0], at(a, i0, i1, i2, i3) * at(b, i0 % 3, i1 % 2, 0, i3 % 2));
}

TEST(CpuOps, AddReadsStridedSource) {
  Graph g;
  Storage s;
  Tensor* base = tensor(g, {4, 6}, "base");
  Tensor* a = g.transpose(base);  // [6, 4] with element stride of a whole row
  Tensor* b = tensor(g, {6}, "b");
  Tensor* y = g.add(a, b);
  const float* bv = s.bind(base, random_values(24, 5));
  a->data = base->data;
  const float* cv = s.bind(b, random_values(6, 6));
  s.bind_zeros(y);
  const std::vector<float> out = run_all_splits(cpu::add, y);
  for (int i1 = 0; i1 < 4; ++i1)
    for (int i0 = 0; i0 < 6; ++i0) EXPECT_EQ(out[i1 * 6 + i0], bv[i0 * 4 + i1] + cv[i0]);
}

TEST(CpuOps, ScaleMultipliesByParameter) {
  Graph g;
  Storage s;
  Tensor* a = tensor(g, {7, 5}, "a");
  Tensor* y = g.scale(a, 0.125f);
  const float* av = s.bind(a, random_values(35, 7));
  s.bind_zeros(y);
  const std::vector<float> out = run_all_splits(cpu::scale, y);
  for (int i = 0; i < 35; ++i) EXPECT_EQ(out[i], av[i] * 0.125f);
}

TEST(CpuOps, RmsNormMatchesReference) {
  Graph g;
  Storage s;
  Tensor* a = tensor(g, {64, 5}, "a");
  Tensor* y = g.rms_norm(a, 1e-5f);
  const float* av = s.bind(a, random_values(320, 8, -3.0f, 3.0f));
  s.bind_zeros(y);
  const std::vector<float> out = run_all_splits(cpu::rms_norm, y);
  for (int r = 0; r < 5; ++r) {
    double sq = 0;
    for (int k = 0; k < 64; ++k) sq += double(av[r * 64 + k]) * av[r * 64 + k];
    const double inv = 1.0 / std::sqrt(sq / 64 + 1e-5);
    for (int k = 0; k < 64; ++k) expect_near_rel(out[r * 64 + k], av[r * 64 + k] * inv, 1e-6, "rms_norm");
  }
}

TEST(CpuOps, NormMatchesReference) {
  Graph g;
  Storage s;
  Tensor* a = tensor(g, {48, 4}, "a");
  Tensor* y = g.norm(a, 1e-5f);
  std::vector<float> values = random_values(192, 9);
  for (float& v : values) v += 10.0f;  // a large mean: the centring must happen
  const float* av = s.bind(a, values);
  s.bind_zeros(y);
  const std::vector<float> out = run_all_splits(cpu::norm, y);
  for (int r = 0; r < 4; ++r) {
    double mean = 0, var = 0;
    for (int k = 0; k < 48; ++k) mean += av[r * 48 + k];
    mean /= 48;
    for (int k = 0; k < 48; ++k) var += (av[r * 48 + k] - mean) * (av[r * 48 + k] - mean);
    const double inv = 1.0 / std::sqrt(var / 48 + 1e-5);
    for (int k = 0; k < 48; ++k) expect_near_rel(out[r * 48 + k], (av[r * 48 + k] - mean) * inv, 1e-5, "norm");
  }
}

// llama.cpp's order: float mean of a double sum; squares of whole 16-lane vectors summed in
// float by halving, each vector's sum and each leftover square added in double.
TEST(CpuOps, NormSumsVarianceInLlamaCppLaneOrder) {
  constexpr int kN = 35, kRows = 8;  // two whole vectors and three leftovers per row
  Graph g;
  Storage s;
  Tensor* a = tensor(g, {kN, kRows}, "a");
  Tensor* y = g.norm(a, 1e-5f);
  std::vector<float> values = random_values(kN * kRows, 21);
  for (float& v : values) v += 10.0f;
  const float* av = s.bind(a, values);
  s.bind_zeros(y);
  const std::vector<float> out = run_all_splits(cpu::norm, y);
  int rows_where_order_matters = 0;
  for (int r = 0; r < kRows; ++r) {
    const float* x = av + r * kN;
    double sum = 0;
    for (int k = 0; k < kN; ++k) sum += x[k];
    const float mean = static_cast<float>(sum) / kN;
    double lanes_sum = 0, plain_sum = 0;
    for (int v = 0; v < 2; ++v) {
      float sq[16], h[8], q[4];
      for (int l = 0; l < 16; ++l) sq[l] = (x[v * 16 + l] - mean) * (x[v * 16 + l] - mean);
      for (int l = 0; l < 8; ++l) h[l] = sq[l] + sq[l + 8];
      for (int l = 0; l < 4; ++l) q[l] = h[l] + h[l + 4];
      lanes_sum += double((q[0] + q[2]) + (q[1] + q[3]));
    }
    for (int k = 32; k < kN; ++k) lanes_sum += double((x[k] - mean) * (x[k] - mean));
    for (int k = 0; k < kN; ++k) plain_sum += double((x[k] - mean) * (x[k] - mean));
    const float scale = 1.0f / std::sqrt(static_cast<float>(lanes_sum / kN) + 1e-5f);
    const float plain_scale = 1.0f / std::sqrt(static_cast<float>(plain_sum / kN) + 1e-5f);
    rows_where_order_matters += scale != plain_scale;
    for (int k = 0; k < kN; ++k) EXPECT_EQ(out[r * kN + k], (x[k] - mean) * scale) << "row " << r << " k " << k;
  }
  EXPECT_GT(rows_where_order_matters, 0) << "no row tells the lane order from a plain double sum";
}

TEST(CpuOps, SiluMatchesFormula) {
  Graph g;
  Storage s;
  Tensor* a = tensor(g, {33, 3}, "a");
  Tensor* y = g.silu(a);
  const float* av = s.bind(a, random_values(99, 10, -6.0f, 6.0f));
  s.bind_zeros(y);
  const std::vector<float> out = run_all_splits(cpu::silu, y);
  for (int i = 0; i < 99; ++i) expect_near_rel(out[i], av[i] / (1 + std::exp(-double(av[i]))), 1e-6, "silu");
}

TEST(CpuOps, GeluIsTanhApproximationThroughF16TableAsGgml) {
  Graph g;
  Storage s;
  Tensor* a = tensor(g, {33, 3}, "a");
  Tensor* y = g.gelu(a);
  std::vector<float> values = random_values(99, 10, -9.0f, 9.0f);
  values[0] = -12.0f;  // below -10: exactly 0
  values[1] = 11.5f;   // above 10: exactly x
  values[2] = 0.0f;
  values[3] = -1.99902344f;  // f16 0xBFFF: the one table entry the fused 1 + a*x*x changes
  const float* av = s.bind(a, values);
  s.bind_zeros(y);
  const std::vector<float> out = run_all_splits(cpu::gelu, y);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 11.5f);
  EXPECT_EQ(out[2], 0.0f);
  EXPECT_EQ(out[3], fp16_to_fp32(0xA9D3));  // -0.045501709; without the fusion -0.0454711914
  for (int i = 3; i < 99; ++i) {
    const double x = av[i];
    const double tanh_gelu = 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * x * (1 + 0.044715 * x * x)));
    expect_near_rel(out[i], tanh_gelu, 2e-3, "gelu within f16 rounding of the formula");
    const float xh = fp16_to_fp32(fp32_to_fp16(av[i]));
    const float table_value = 0.5f * xh * (1.0f + std::tanh(0.79788456080286535587989211986876f * xh * std::fma(0.044715f * xh, xh, 1.0f)));
    EXPECT_EQ(out[i], fp16_to_fp32(fp32_to_fp16(table_value))) << "x=" << x;
  }
}

// ---- rope ----

namespace {

struct RopeCase {
  int mode;
  float freq_scale;
  std::vector<float> factors;  // empty: none
  float attn_factor = 1.0f;
};

void check_rope(const RopeCase& c) {
  constexpr int kHeadDim = 10, kRot = 6, kHeads = 3;
  const std::vector<int32_t> positions = {0, 5, 17};
  const float base = 10000.0f;
  Graph g;
  Storage s;
  Tensor* x = tensor(g, {kHeadDim, kHeads, 3}, "x");
  Tensor* pos = g.new_tensor_1d(DType::I32, 3, "pos");
  Tensor* ff = c.factors.empty() ? nullptr : tensor(g, {int64_t(c.factors.size())}, "rope_freqs");
  Tensor* y = g.rope(x, pos, ff, RopeParams{kRot, c.mode, base, c.freq_scale, c.attn_factor});
  const float* xv = s.bind(x, random_values(kHeadDim * kHeads * 3, 11));
  std::vector<int32_t> pos_data = positions;
  pos->data = pos_data.data();
  if (ff) s.bind(ff, c.factors);
  s.bind_zeros(y);
  const std::vector<float> out = run_all_splits(cpu::rope, y);

  for (int t = 0; t < 3; ++t)
    for (int h = 0; h < kHeads; ++h) {
      const float* in = xv + (t * kHeads + h) * kHeadDim;
      const float* got = out.data() + (t * kHeads + h) * kHeadDim;
      for (int i = 0; i < kRot / 2; ++i) {
        const double factor = c.factors.empty() ? 1.0 : c.factors[i];
        const double theta = positions[t] * c.freq_scale * std::pow(double(base), -2.0 * i / kRot) / factor;
        const int j0 = c.mode == kRopeNeox ? i : 2 * i;
        const int j1 = c.mode == kRopeNeox ? i + kRot / 2 : 2 * i + 1;
        const double cos = std::cos(theta) * c.attn_factor, sin = std::sin(theta) * c.attn_factor;
        EXPECT_NEAR(got[j0], in[j0] * cos - in[j1] * sin, 1e-5) << "t=" << t << " i=" << i;
        EXPECT_NEAR(got[j1], in[j0] * sin + in[j1] * cos, 1e-5) << "t=" << t << " i=" << i;
      }
      for (int k = kRot; k < kHeadDim; ++k) EXPECT_EQ(got[k], in[k]) << "unrotated tail";
      if (positions[t] == 0 && c.attn_factor == 1.0f) {
        for (int k = 0; k < kHeadDim; ++k) EXPECT_EQ(got[k], in[k]) << "position 0 is the identity";
      }
    }
}

}  // namespace

TEST(CpuOps, RopeNormalRotatesAdjacentPairs) { check_rope({kRopeNormal, 1.0f, {}}); }
TEST(CpuOps, RopeNeoxRotatesHalves) { check_rope({kRopeNeox, 1.0f, {}}); }
TEST(CpuOps, RopeFreqScaleShrinksAngles) { check_rope({kRopeNormal, 0.25f, {}}); }
TEST(CpuOps, RopeFrequencyFactorsDivideAngles) { check_rope({kRopeNormal, 1.0f, {1.0f, 2.5f, 8.0f}}); }
TEST(CpuOps, RopeNeoxWithFrequencyFactors) { check_rope({kRopeNeox, 1.0f, {1.0f, 4.0f, 32.0f}}); }
TEST(CpuOps, RopeAttnFactorScalesCosAndSin) { check_rope({kRopeNeox, 1.0f, {1.0f, 1.5f, 6.0f}, 1.19f}); }

// ---- soft_max ----

TEST(CpuOps, SoftMaxAppliesScaleAndCausalMask) {
  constexpr int kKeys = 5, kQueries = 3, kHeads = 2;
  Graph g;
  Storage s;
  Tensor* kq = tensor(g, {kKeys, kQueries, kHeads}, "kq");
  Tensor* mask = tensor(g, {kKeys, 4}, "kq_mask");  // more mask rows than queries (padding)
  Tensor* y = g.soft_max(kq, mask, 0.5f);
  const float* xv = s.bind(kq, random_values(kKeys * kQueries * kHeads, 12, -4.0f, 4.0f));
  std::vector<float> m(kKeys * 4, 0.0f);
  for (int q = 0; q < 4; ++q)
    for (int k = 0; k < kKeys; ++k)
      if (k > q + 2) m[q * kKeys + k] = -kInf;  // query q sees keys 0..q+2
  m[1 * kKeys + 0] = -1.5f;                    // a finite mask value is added, not ignored
  s.bind(mask, m);
  s.bind_zeros(y);
  const std::vector<float> out = run_all_splits(cpu::soft_max, y);
  for (int h = 0; h < kHeads; ++h)
    for (int q = 0; q < kQueries; ++q) {
      const float* row = xv + (h * kQueries + q) * kKeys;
      const float* got = out.data() + (h * kQueries + q) * kKeys;
      double mx = -INFINITY, sum = 0;
      std::vector<double> w(kKeys);
      for (int k = 0; k < kKeys; ++k) mx = std::max(mx, w[k] = row[k] * 0.5 + m[q * kKeys + k]);
      for (int k = 0; k < kKeys; ++k) sum += w[k] = std::exp(w[k] - mx);
      double total = 0;
      for (int k = 0; k < kKeys; ++k) {
        if (k > q + 2) {
          EXPECT_EQ(got[k], 0.0f) << "masked key";
        } else {
          EXPECT_NEAR(got[k], w[k] / sum, 1e-6);
        }
        total += got[k];
      }
      EXPECT_NEAR(total, 1.0, 1e-5);
    }
}

TEST(CpuOps, SoftMaxFullyMaskedRowIsZeroNotNan) {
  Graph g;
  Storage s;
  Tensor* kq = tensor(g, {4, 2}, "kq");
  Tensor* mask = tensor(g, {4, 2}, "mask");
  Tensor* y = g.soft_max(kq, mask, 1.0f);
  s.bind(kq, random_values(8, 13));
  s.bind(mask, {-kInf, -kInf, -kInf, -kInf, 0.0f, 0.0f, 0.0f, 0.0f});
  s.bind_zeros(y);
  const std::vector<float> out = run_all_splits(cpu::soft_max, y);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(out[k], 0.0f);
  double total = 0;
  for (int k = 4; k < 8; ++k) total += out[k];
  EXPECT_NEAR(total, 1.0, 1e-6);
}

TEST(CpuOps, SoftMaxWithoutMaskIsPlainSoftmax) {
  Graph g;
  Storage s;
  Tensor* x = tensor(g, {3}, "x");
  Tensor* y = g.soft_max(x, nullptr, 1.0f);
  s.bind(x, {1000.0f, 1000.0f, 1000.0f - std::log(2.0f)});  // large values: max subtraction
  s.bind_zeros(y);
  const std::vector<float> out = run_all_splits(cpu::soft_max, y);
  EXPECT_NEAR(out[0], 0.4, 1e-5);
  EXPECT_NEAR(out[1], 0.4, 1e-5);
  EXPECT_NEAR(out[2], 0.2, 1e-5);
}

TEST(CpuOps, SoftMaxInPlaceGivesTheSameBits) {
  // The plan may put SOFT_MAX's result over its scores (op.h, in_place): each row is read
  // before it is written. Causal mask, longer rows than one vector group, 1-3 threads.
  constexpr int kKeys = 70, kQueries = 6, kHeads = 3;
  Graph g;
  Storage s;
  Tensor* kq = tensor(g, {kKeys, kQueries, kHeads}, "kq");
  Tensor* mask = tensor(g, {kKeys, kQueries}, "kq_mask");
  Tensor* apart = g.soft_max(kq, mask, 0.25f);
  Tensor* over = g.soft_max(kq, mask, 0.25f);
  const std::vector<float> scores = random_values(kKeys * kQueries * kHeads, 21, -6.0f, 6.0f);
  s.bind(kq, scores);
  std::vector<float> m(kKeys * kQueries, 0.0f);
  for (int q = 0; q < kQueries; ++q)
    for (int k = 60 + q + 1; k < kKeys; ++k) m[q * kKeys + k] = -kInf;
  s.bind(mask, m);
  s.bind_zeros(apart);
  const std::vector<float> expected = run_with_threads(cpu::soft_max, apart, 1);
  over->data = kq->data;
  for (int nth : {1, 2, 3}) {
    std::memcpy(kq->data, scores.data(), scores.size() * sizeof(float));
    cpu::Barrier barrier(nth);
    const cpu::HostBuffer work = work_for(over, nth);
    std::vector<std::thread> threads;
    for (int ith = 0; ith < nth; ++ith)
      threads.emplace_back([&, ith] {
        ComputeParams p;
        p.ith = ith;
        p.nth = nth;
        p.wdata = work.data();
        p.wsize = work.size();
        p.barrier = &barrier;
        cpu::soft_max(p, over);
      });
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(0, std::memcmp(expected.data(), kq->data, expected.size() * sizeof(float))) << nth << " threads";
  }
}

// ---- thread pool and barrier ----

TEST(ThreadPool, RunsEveryIndexExactlyOnce) {
  cpu::ThreadPool pool(4);
  EXPECT_EQ(pool.size(), 4);
  for (int nth = 1; nth <= 4; ++nth) {
    std::vector<std::atomic<int>> hits(4);
    pool.run(nth, [&](int ith) { hits[ith].fetch_add(1); });
    for (int i = 0; i < 4; ++i) EXPECT_EQ(hits[i].load(), i < nth ? 1 : 0) << "nth=" << nth << " ith=" << i;
  }
}

TEST(ThreadPool, ClampsThreadCountToPoolSize) {
  cpu::ThreadPool pool(2);
  std::atomic<int> calls{0}, max_ith{-1};
  pool.run(8, [&](int ith) {
    calls.fetch_add(1);
    int seen = max_ith.load();
    while (ith > seen && !max_ith.compare_exchange_weak(seen, ith)) {
    }
  });
  EXPECT_EQ(calls.load(), 2);
  EXPECT_EQ(max_ith.load(), 1);
}

TEST(ThreadPool, ReusedThousandsOfTimesWithoutDeadlock) {
  cpu::ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  int64_t expected = 0;
  for (int run = 0; run < 5000; ++run) {
    const int nth = 1 + run % 3;
    pool.run(nth, [&](int ith) { total.fetch_add(ith + 1); });
    expected += nth * (nth + 1) / 2;
  }
  EXPECT_EQ(total.load(), expected);
}

TEST(ThreadPool, RethrowsWorkerException) {
  cpu::ThreadPool pool(3);
  EXPECT_THROW(pool.run(3, [](int ith) {
    if (ith == 2) throw std::runtime_error("worker failed");
  }),
               std::runtime_error);
  std::atomic<int> calls{0};
  pool.run(3, [&](int) { calls.fetch_add(1); });
  EXPECT_EQ(calls.load(), 3) << "the pool keeps working after an exception";
}

TEST(ThreadPool, BarrierSeparatesPhases) {
  constexpr int kThreads = 3, kPhases = 2000;
  cpu::ThreadPool pool(kThreads);
  cpu::Barrier barrier(kThreads);
  std::vector<int> slots(kThreads, -1);
  std::atomic<int> mismatches{0};
  pool.run(kThreads, [&](int ith) {
    ComputeParams p;
    p.ith = ith;
    p.nth = kThreads;
    p.barrier = &barrier;
    for (int phase = 0; phase < kPhases; ++phase) {
      slots[ith] = phase;  // plain writes: the barrier must order them
      cpu::barrier_wait(p);
      for (int j = 0; j < kThreads; ++j)
        if (slots[j] != phase) mismatches.fetch_add(1);
      cpu::barrier_wait(p);
    }
  });
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(ThreadPool, BarrierWaitIsNoOpForOneThreadOrNoBarrier) {
  ComputeParams single;
  cpu::barrier_wait(single);
  cpu::Barrier barrier(2);  // would block forever if it were waited on by one thread
  ComputeParams one_thread;
  one_thread.barrier = &barrier;
  cpu::barrier_wait(one_thread);
  ComputeParams no_barrier;
  no_barrier.nth = 4;
  cpu::barrier_wait(no_barrier);
  SUCCEED();
}

// ---- the backend ----

namespace {

// rms_norm -> reshape (view) -> scale -> mul by weight -> soft_max, named and layered.
struct SmallGraph {
  Graph g;
  Storage s;
  Tensor* x;
  Tensor* w;
  Tensor* out;

  explicit SmallGraph(int64_t rows) {
    x = tensor(g, {64, rows}, "x");
    w = tensor(g, {32}, "w");
    g.set_layer(0);
    Tensor* n = named(g.rms_norm(x, 1e-6f), "norm-0");
    Tensor* r = named(g.reshape_2d(n, 32, 2 * rows), "norm_r-0");
    Tensor* sc = named(g.scale(r, 3.0f), "scaled-0");
    g.set_layer(-1);
    Tensor* m = named(g.mul(sc, w), "weighted");
    out = named(g.soft_max(m, nullptr, 1.0f), "probs");
    g.expand(out);
    s.bind(x, random_values(static_cast<size_t>(64 * rows), 20));
    s.bind(w, random_values(32, 21));
  }

  // A plan that gives every non-view node its own slot, as a liveness plan may.
  Plan plan() const {
    Plan p;
    for (const Tensor* node : g.nodes()) {
      if (op_info(node->op).is_view) continue;
      p.offsets[node] = p.buffer_size;
      p.buffer_size += (node->nbytes() + Plan::kAlignment - 1) / Plan::kAlignment * Plan::kAlignment;
    }
    return p;
  }
};

std::vector<float> values_of(const Tensor* t) {
  const auto* f = static_cast<const float*>(t->data);
  return {f, f + t->nelements()};
}

}  // namespace

TEST(CpuBackend, RecordsOneTimingPerNodeInOrder) {
  SmallGraph sg(4);
  auto backend = make_cpu_backend(2);
  EXPECT_EQ(backend->name(), "cpu");
  backend->allocate(sg.g, sg.plan());
  Profiler profiler;
  backend->compute(sg.g, &profiler);
  const auto& nodes = sg.g.nodes();
  ASSERT_EQ(profiler.records().size(), nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const OpTiming& t = profiler.records()[i];
    EXPECT_EQ(t.node, static_cast<int>(i));
    EXPECT_EQ(t.op, nodes[i]->op);
    EXPECT_EQ(t.name, nodes[i]->name);
    EXPECT_EQ(t.layer, nodes[i]->layer);
    EXPECT_EQ(t.backend, "cpu");
  }
  EXPECT_EQ(profiler.records()[1].op, Op::RESHAPE);
  EXPECT_EQ(profiler.records()[0].layer, 0);
  EXPECT_EQ(profiler.records()[3].layer, -1);

  // The result: softmax over rows of 3 * rms_norm(x) * w.
  const float* xv = static_cast<const float*>(sg.x->data);
  const float* wv = static_cast<const float*>(sg.w->data);
  const std::vector<float> got = values_of(sg.out);
  for (int row = 0; row < 4; ++row) {
    double sq = 0;
    for (int k = 0; k < 64; ++k) sq += double(xv[row * 64 + k]) * xv[row * 64 + k];
    const double inv = 1.0 / std::sqrt(sq / 64 + 1e-6);
    for (int half = 0; half < 2; ++half) {
      std::vector<double> e(32);
      double sum = 0;
      for (int k = 0; k < 32; ++k) sum += e[k] = std::exp(3.0 * xv[row * 64 + half * 32 + k] * inv * wv[k]);
      for (int k = 0; k < 32; ++k) EXPECT_NEAR(got[(row * 2 + half) * 32 + k], e[k] / sum, 1e-5);
    }
  }
}

// A session makes room before each step, so no record of the step's timed loop moves the others.
TEST(Profiler, MakeRoomKeepsTheNextRecordsInPlace) {
  Profiler profiler;
  profiler.record({0, Op::ADD, "a", 0, "cpu", 1});
  profiler.make_room(100);
  const OpTiming* first = profiler.records().data();
  for (int i = 1; i <= 100; ++i) profiler.record({i, Op::ADD, "a", 0, "cpu", 1});
  EXPECT_EQ(profiler.records().data(), first) << "a record reallocated within the room made";
  EXPECT_EQ(profiler.records().size(), 101u);
  EXPECT_EQ(profiler.records()[100].node, 100);
}

TEST(CpuBackend, ThreadCountDoesNotChangeResults) {
  SmallGraph one(200), three(200);  // 12800 elements per node: large enough to split
  auto b1 = make_cpu_backend(1);
  auto b3 = make_cpu_backend(3);
  b1->allocate(one.g, one.plan());
  b3->allocate(three.g, three.plan());
  b1->compute(one.g, nullptr);
  b3->compute(three.g, nullptr);
  EXPECT_EQ(values_of(one.out), values_of(three.out));
}

TEST(CpuBackend, RejectsUnsupportedNodeBeforeRunningAnything) {
  Graph g;
  Storage s;
  Tensor* x = tensor(g, {8}, "x");
  Tensor* half = g.new_tensor_1d(DType::F16, 8, "half");
  Tensor* first = named(g.scale(x, 2.0f), "doubled");
  Tensor* bad = named(g.scale(half, 2.0f), "scaled_half");
  g.expand(first);
  g.expand(bad);
  s.bind(x, std::vector<float>(8, 1.0f));
  std::vector<uint16_t> half_data(8);
  half->data = half_data.data();
  float* first_out = s.bind(first, std::vector<float>(8, -7.0f));
  s.bind_zeros(bad);
  auto backend = make_cpu_backend(2);
  EXPECT_FALSE(backend->supports(*bad));
  EXPECT_TRUE(backend->supports(*first));
  backend->allocate(g, Plan{});  // every tensor is bound by hand: nothing to place
  try {
    backend->compute(g, nullptr);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cpu backend does not support SCALE on f16 (node 'scaled_half')");
  }
  EXPECT_EQ(first_out[0], -7.0f) << "no node runs when any node is unsupported";
}

TEST(CpuBackend, RejectsUnknownRopeModeAndUnboundStorage) {
  Graph g;
  Storage s;
  Tensor* x = tensor(g, {4, 1, 1}, "x");
  Tensor* pos = g.new_tensor_1d(DType::I32, 1, "pos");
  Tensor* r = named(g.rope(x, pos, nullptr, RopeParams{4, 1, 10000.0f, 1.0f}), "rope_bad");
  auto backend = make_cpu_backend(1);
  EXPECT_FALSE(backend->supports(*r));
  Graph g2;
  Tensor* y = named(g2.silu(tensor(g2, {4}, "unbound_input")), "act");
  g2.expand(y);
  s.bind_zeros(y);
  backend->allocate(g2, Plan{});  // places nothing: the input stays unbound
  try {
    backend->compute(g2, nullptr);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unbound_input"), std::string::npos) << e.what();
  }
}

TEST(CpuBackend, ComputeBufferIsAlignedAndOnlyGrows) {
  SmallGraph big(16), small(2);
  auto backend = make_cpu_backend(0);
  EXPECT_EQ(backend->compute_buffer_bytes(), 0u);
  const Plan big_plan = big.plan();
  backend->allocate(big.g, big_plan);
  EXPECT_EQ(backend->compute_buffer_bytes(), big_plan.buffer_size);
  for (const Tensor* node : big.g.nodes())
    EXPECT_EQ(reinterpret_cast<uintptr_t>(node->data) % Plan::kAlignment, 0u) << node->name;
  backend->allocate(small.g, small.plan());
  EXPECT_EQ(backend->compute_buffer_bytes(), big_plan.buffer_size);
  backend->compute(small.g, nullptr);
  double total = 0;
  for (float v : values_of(small.out)) total += v;
  EXPECT_NEAR(total, 4.0, 1e-4) << "four softmax rows each sum to one";
}

TEST(CpuBackend, NegativeThreadCountIsAnError) { EXPECT_THROW(make_cpu_backend(-1), Error); }
