// CPU dot products and matrix multiplies per weight dtype, SIMD against the scalar reference:
// decode shape ([2048 x 8192] weight times one activation column) and prefill shape (times 512
// columns), single-threaded through dot_tile, the kernel mul_mat calls. Counters: GMAC/s and
// weight bytes streamed per second. Scalar prefill runs on the first 512 rows only (it would
// take tens of seconds per iteration); compare it by its GMAC/s. The `simd_packed` runs take the
// weight in the packed layout the CPU backend gives Q4_0 / Q8_0 / Q4_K / Q5_K / Q6_K (repack.h).
// `mul_mat_prefill/<dtype>/avx2` is the prefill shape on the AVX2 forms, the weight in the layout
// the CPU backend holds it: the GEMM a CPU with AVX2 alone (or ENGINE_CPU_SIMD=avx2) prefills on.
// `mul_mat_prefill/q8_0/amx` runs the prefill shape through mul_mat itself, which takes the AMX
// tiles with float activations where the CPU has them (mul_mat_amx.h).
// `attention_qk` is one head's q.k of a 512-token prompt: 512 F16 keys of 64 elements times 512
// queries (the short-dot kernel).
// `mul_mat_decode_l2/<dtype>/<form>` is one thread's decode product over a weight that stays in L2
// (256 rows), in each form the CPU has (decode_tuning.h): what each form's arithmetic costs where
// memory does not hide it, as on cores that run AVX-512 as two halves.
// `mul_mat_decode_stream/<dtype>/k<K>` runs decode's products on rows of K elements (each dtype
// on the form and requests the decode timing keeps for such rows) on every hardware thread over a
// 576 MiB weight, beside the memory read the roofline takes (probe_GB/s): how close each dtype's
// kernel streams to memory's speed, with no other op of a decode step in between.
// `.../k<K>/<requests>` streams the same on the dtype's form with each way of requesting the
// stream ahead (vec_dot.h: StreamRequests), to compare them within one process
// (--benchmark_enable_random_interleaving); K is each row length the decode timing times
// (kTimedRowElements: 2048, 4096, 8192). `.../k4096/<form>/<requests>` streams rows of 4096 in
// each form with each way, on one thread and on all: the pairs the decode timing sets against
// each other (decode_tuning.h).
// `mul_mat_decode_steps/<dtype>/<gaps>` runs the one-column products of a 1B llama decode step
// (16 layers of Q+K+V, O, gate+up and down, 2048 wide, 8192 in the MLP) in order on the CPU
// backend's pool, each split in whole packed groups (runs of them where chunked) over all
// hardware threads, on the form and requests decode keeps: `no_gaps` back to back,
// `decode_gaps` with the caller busy between products as long as a decode step's other ops keep
// it (kDecodeGapsUs): how close the kernels alone stream such a step to probe_GB/s, and what the
// pauses between products cost them.
// `thread_pool_handoff` is one ThreadPool::run of an empty job on every hardware thread: what
// each parallel node of a step pays to hand work to the pool and collect it, which is the cost of
// moving a cache line between the cores (on a shared VM it changes with where the host puts
// them: docs/benchmarks.md).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cpu/cpu_device.h"
#include "cpu/cpu_features.h"
#include "cpu/decode_tuning.h"
#include "cpu/host_buffer.h"
#include "cpu/kernels.h"
#include "cpu/repack.h"
#include "cpu/row_split.h"
#include "cpu/thread_pool.h"
#include "cpu/vec_dot.h"
#include "cpu/vec_math.h"
#include "cost/hardware.h"
#include "engine/host_memory.h"
#include "engine/graph.h"
#include "engine/quants.h"
#include "random_floats.h"

namespace {

using engine::DType;
using engine::cpu::DotOrder;
using engine::cpu::SimdLevel;

constexpr int64_t kK = 2048, kRows = 8192;
constexpr int64_t kL2Rows = 256;  // a weight of at most 1 MiB: it stays in L2
constexpr int64_t kHeadDim = 64, kPromptTokens = 512;

struct Matrix {
  std::vector<uint8_t> w, a;
  size_t w_row, a_row;
  int64_t chunk_blocks = 0;  // packed: as the CPU backend chunks such a weight (repack.h)
};

// The weight (`rows` rows of k elements, packed or not) and `cols` activation rows in the
// weight's dot format, made once.
const Matrix& matrix(DType type, int64_t k, int64_t rows, int64_t cols, bool packed) {
  static std::vector<std::pair<std::tuple<DType, int64_t, int64_t, int64_t, bool>, Matrix>> cache;
  const auto wanted = std::make_tuple(type, k, rows, cols, packed);
  for (auto& [key, m] : cache)
    if (key == wanted) return m;
  Matrix m{{}, {}, engine::row_bytes(type, k), engine::row_bytes(engine::cpu::vec_dot_type(type), k)};
  m.w.resize(m.w_row * rows);
  m.a.resize(m.a_row * cols);
  const auto x = random_floats(k * 64, 1);
  for (int64_t r = 0; r < rows; ++r) engine::quantize_row(type, x.data() + (r % 64) * k, m.w.data() + r * m.w_row, k);
  for (int64_t c = 0; c < cols; ++c)
    engine::cpu::quantize_activation(type, x.data() + ((c + 7) % 64) * k, m.a.data() + c * m.a_row, k);
  if (packed) {
    m.chunk_blocks = engine::cpu::packed_chunk_blocks(type, k, rows);
    engine::cpu::pack_rows(type, k, rows, m.w.data(), m.chunk_blocks);
  }
  cache.emplace_back(wanted, std::move(m));
  return cache.back().second;
}

// Work memory for `tile`, made once and pointed to by it (as the backend's scratch is).
engine::cpu::HostBuffer work_for(DType type, DotOrder order, engine::cpu::DotTile& tile) {
  engine::cpu::HostBuffer work;
  work.reserve(engine::cpu::dot_tile_work_size(type, order, tile));
  tile.work = static_cast<char*>(work.data());
  tile.work_size = work.size();
  return work;
}

// The best level the CPU has, or the scalar code.
SimdLevel level_for(bool simd) { return simd ? SimdLevel::kAvx512Bf16 : SimdLevel::kScalar; }

void set_level(bool simd) {
  engine::cpu::set_simd_level_cap(level_for(simd));
}

// all_rows: the weight's rows; rows: how many of them are multiplied.
void mul_mat_rows(benchmark::State& state, DType type, int64_t k, int64_t all_rows, int64_t rows, int64_t cols, SimdLevel level,
                  bool packed) {
  engine::cpu::set_simd_level_cap(level);
  if (engine::cpu::simd_level() != level && level != SimdLevel::kAvx512Bf16) return state.SkipWithError("not on this CPU");
  if (level != SimdLevel::kScalar && engine::cpu::simd_level() == SimdLevel::kScalar) return state.SkipWithError("no SIMD on this CPU");
  const Matrix& m = matrix(type, k, all_rows, cols, packed);
  std::vector<float> out(static_cast<size_t>(rows * cols));
  const DotOrder order = engine::cpu::dot_order(type, k, rows, cols);
  engine::cpu::DotTile tile{k, reinterpret_cast<const char*>(m.w.data()), m.w_row, rows,
                            reinterpret_cast<const char*>(m.a.data()), m.a_row, cols,
                            reinterpret_cast<char*>(out.data()), sizeof(float), sizeof(float) * rows, packed};
  tile.chunk_blocks = m.chunk_blocks;
  const engine::cpu::HostBuffer work = work_for(type, order, tile);
  for (auto _ : state) {
    engine::cpu::dot_tile(type, order, tile);
    benchmark::DoNotOptimize(out.data());
  }
  const double macs = static_cast<double>(rows) * cols * k;
  state.counters["GMAC/s"] = benchmark::Counter(macs * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["weight_GB/s"] =
      benchmark::Counter(static_cast<double>(m.w_row * rows) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  set_level(true);
}

void mul_mat(benchmark::State& state, DType type, int64_t cols, bool simd, bool packed) {
  mul_mat_rows(state, type, kK, kRows, (!simd && cols > 1) ? 512 : kRows, cols, level_for(simd), packed);
}

void mul_mat_amx_prefill(benchmark::State& state) {
  if (!engine::cpu::amx_in_use()) return state.SkipWithError("no AMX-BF16 tiles on this CPU");
  Matrix& m = const_cast<Matrix&>(matrix(DType::Q8_0, kK, kRows, 1, true));
  engine::Graph g;
  engine::Tensor* w = g.new_tensor_2d(DType::Q8_0, kK, kRows, "w");
  engine::Tensor* x = g.new_tensor_2d(DType::F32, kK, kPromptTokens, "x");
  engine::Tensor* y = g.mul_mat(w, x);
  std::vector<float> xs = random_floats(kK * kPromptTokens, 2), ys(static_cast<size_t>(kRows * kPromptTokens));
  w->data = m.w.data();
  x->data = xs.data();
  y->data = ys.data();
  engine::cpu::HostBuffer work;
  work.reserve(engine::cpu::mul_mat_work_size(y, 1, true));
  engine::cpu::ComputeParams p;
  p.wdata = work.data();
  p.wsize = work.size();
  p.weight_packed = true;
  for (auto _ : state) {
    engine::cpu::mul_mat(p, y);
    benchmark::DoNotOptimize(ys.data());
  }
  state.counters["GMAC/s"] =
      benchmark::Counter(static_cast<double>(kK) * kRows * kPromptTokens * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// A weight of about kStreamBytes (copies of matrix()'s rows), packed where the dtype has a packed
// layout, as the CPU backend holds it: beyond every cache, as decode streams its weights. One is
// held at a time.
constexpr size_t kStreamBytes = size_t{576} << 20;

struct StreamWeight {
  DType type;
  int64_t k;
  bool packed;
  int64_t rows;
  engine::HostMemory w;
};

const StreamWeight& stream_weight(DType type, int64_t k) {
  static std::mutex mutex;
  static std::unique_ptr<StreamWeight> held;
  const std::lock_guard lock(mutex);
  if (held && held->type == type && held->k == k) return *held;
  held.reset();
  const bool packed = engine::cpu::has_packed_layout(type);
  const Matrix& m = matrix(type, k, kRows, 1, packed);
  const size_t copies = std::max<size_t>(1, kStreamBytes / m.w.size());
  held = std::make_unique<StreamWeight>(
      StreamWeight{type, k, packed, kRows * static_cast<int64_t>(copies), engine::HostMemory(m.w.size() * copies)});
  for (size_t c = 0; c < copies; ++c) std::memcpy(held->w.data() + c * m.w.size(), m.w.data(), m.w.size());
  return *held;
}

// Decode's one-column products on state.threads() threads, each streaming its share of
// stream_weight's rows (whole packed groups, or runs of them where chunked) from memory, as a
// decode product splits them; requested ahead as the tuning chose, or as `requests` says.
// probe_GB/s: the read the roofline divides by (cost::measure_read_bandwidth_gbs) on as many
// threads, taken once per thread count after the first such benchmark.
void mul_mat_decode_stream(benchmark::State& state, DType type, int64_t k, std::optional<engine::cpu::StreamRequests> requests,
                           std::optional<SimdLevel> level) {
  engine::cpu::ensure_decode_tuning();  // each dtype on the form decode runs it on
  const StreamWeight& s = stream_weight(type, k);
  const Matrix& m = matrix(type, k, kRows, 1, s.packed);
  // Whole packed groups, or whole runs of a chunked weight's groups.
  const int64_t unit = engine::cpu::packed_rows_unit(m.chunk_blocks);
  const int64_t units = s.rows / unit;
  const int64_t begin = units * state.thread_index() / state.threads() * unit;
  const int64_t end = units * (state.thread_index() + 1) / state.threads() * unit;
  std::vector<float> out(static_cast<size_t>(end - begin));
  engine::cpu::DotTile tile{k, reinterpret_cast<const char*>(s.w.data()) + begin * static_cast<int64_t>(m.w_row), m.w_row, end - begin,
                            reinterpret_cast<const char*>(m.a.data()), m.a_row, 1, reinterpret_cast<char*>(out.data()), sizeof(float),
                            sizeof(float) * out.size(), s.packed};
  tile.chunk_blocks = m.chunk_blocks;
  const engine::cpu::HostBuffer work = work_for(type, DotOrder::kRow, tile);
  if (requests) tile.requests = *requests;
  for (auto _ : state) {
    if (requests)
      engine::cpu::dot_tile_at(level ? *level : engine::cpu::decode_level(type), type, DotOrder::kRow, tile);
    else
      engine::cpu::dot_tile(type, DotOrder::kRow, tile);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["weight_GB/s"] =
      benchmark::Counter(static_cast<double>(end - begin) * static_cast<double>(m.w_row) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kAvgThreads);
  if (state.thread_index() == 0) {
    static std::map<int, double> probes;
    if (!probes.count(state.threads())) probes[state.threads()] = cost::measure_read_bandwidth_gbs(state.threads()).value_or(0);
    state.counters["probe_GB/s"] = probes[state.threads()];
  }
}

// Microseconds from the end of each product of a layer to the next product's start in a 1B Q4_0
// decode on the 2-core Zen 5 of docs/benchmarks.md: after Q+K+V the attention block (ropes, KV
// stores, attention), after O, gate+up and down the norms, adds and activation.
constexpr std::array<double, 4> kDecodeGapsUs = {33, 5, 4, 6};

void mul_mat_decode_steps(benchmark::State& state, DType type, bool gaps) {
  engine::cpu::ensure_decode_tuning();
  constexpr int kLayers = 16;
  struct Product {
    int64_t k, rows;
  };
  constexpr std::array<Product, 4> kLayer = {{{kK, 3072}, {kK, 2048}, {kK, 16384}, {kRows, kK}}};  // Q+K+V, O, gate+up, down
  size_t layer_bytes = 0;
  for (const Product& p : kLayer) layer_bytes += static_cast<size_t>(p.rows) * engine::row_bytes(type, p.k);
  static std::map<DType, engine::HostMemory> made;  // made once per dtype: 0.5-1 GiB
  if (!made.count(type)) {
    engine::HostMemory filled(layer_bytes * kLayers);
    size_t at = 0;
    for (int l = 0; l < kLayers; ++l)
      for (const Product& p : kLayer) {  // each product's rows: the same packed rows over and over
        const Matrix& m = matrix(type, p.k, kRows / 8, 1, true);
        for (int64_t r = 0; r < p.rows; r += kRows / 8, at += m.w.size()) std::memcpy(filled.data() + at, m.w.data(), m.w.size());
      }
    made.emplace(type, std::move(filled));
  }
  const engine::HostMemory& weights = made.at(type);
  std::array<const Matrix*, kLayer.size()> rows_of{};  // after all are made: making one moves the others
  for (size_t j = 0; j < kLayer.size(); ++j) rows_of[j] = &matrix(type, kLayer[j].k, kRows / 8, 1, true);
  engine::cpu::ThreadPool pool(engine::cpu::cpu_thread_count(0));
  const int nth = pool.size();
  std::vector<engine::cpu::HostBuffer> work(static_cast<size_t>(nth));
  std::vector<float> out(static_cast<size_t>(kLayer[2].rows));
  const engine::cpu::SimdLevel level = engine::cpu::decode_level(type);
  const auto spin_us = [](double us) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(us);
    while (std::chrono::steady_clock::now() < until) {
    }
  };
  for (auto _ : state) {
    const std::byte* at = weights.data();
    for (int l = 0; l < kLayers; ++l)
      for (size_t j = 0; j < kLayer.size(); ++j) {
        const Product& p = kLayer[j];
        const Matrix& m = *rows_of[j];
        pool.run(nth, [&](int ith) {
          const int64_t unit = engine::cpu::packed_rows_unit(m.chunk_blocks);
          const engine::cpu::WorkRange units = engine::cpu::split_work(p.rows / unit, ith, nth);
          const int64_t r0 = units.begin * unit, rows = (units.end - units.begin) * unit;
          engine::cpu::DotTile tile{p.k, reinterpret_cast<const char*>(at) + r0 * static_cast<int64_t>(m.w_row), m.w_row, rows,
                                    reinterpret_cast<const char*>(m.a.data()), m.a_row, 1, reinterpret_cast<char*>(out.data() + r0),
                                    sizeof(float), sizeof(float) * static_cast<size_t>(rows), true};
          tile.chunk_blocks = m.chunk_blocks;
          tile.requests = engine::cpu::decode_requests(type, p.k);
          engine::cpu::HostBuffer& mine = work[static_cast<size_t>(ith)];
          mine.reserve(engine::cpu::dot_tile_work_size_at(level, type, DotOrder::kRow, tile));
          tile.work = static_cast<char*>(mine.data());
          tile.work_size = mine.size();
          engine::cpu::dot_tile_at(level, type, DotOrder::kRow, tile);
        });
        at += static_cast<size_t>(p.rows) * m.w_row;
        if (gaps) spin_us(kDecodeGapsUs[j]);
      }
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["weight_GB/s"] = benchmark::Counter(static_cast<double>(weights.size()) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["probe_GB/s"] = cost::measure_read_bandwidth_gbs(nth).value_or(0);
}

void attention_qk(benchmark::State& state, bool simd) {
  mul_mat_rows(state, DType::F16, kHeadDim, kPromptTokens, kPromptTokens, kPromptTokens, level_for(simd), false);
}

void dot_row(benchmark::State& state, DType type, bool simd) {
  set_level(simd);
  if (simd && engine::cpu::simd_level() == SimdLevel::kScalar) return state.SkipWithError("no SIMD on this CPU");
  const Matrix& m = matrix(type, kK, kRows, 1, false);
  // dot() itself, less the work memory it allocates per call.
  float v = 0;
  engine::cpu::DotTile tile{kK, reinterpret_cast<const char*>(m.w.data()), 0, 1, reinterpret_cast<const char*>(m.a.data()), 0, 1,
                            reinterpret_cast<char*>(&v), 0, 0};
  const engine::cpu::HostBuffer work = work_for(type, DotOrder::kRow, tile);
  for (auto _ : state) {
    engine::cpu::dot_tile(type, DotOrder::kRow, tile);
    benchmark::DoNotOptimize(v);
  }
  state.counters["GMAC/s"] = benchmark::Counter(kK * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  set_level(true);
}

void quantize(benchmark::State& state, DType weight, bool simd) {
  set_level(simd);
  const auto x = random_floats(kK, 3);
  std::vector<uint8_t> q(engine::row_bytes(engine::cpu::vec_dot_type(weight), kK));
  for (auto _ : state) {
    engine::cpu::quantize_activation(weight, x.data(), q.data(), kK);
    benchmark::DoNotOptimize(q.data());
  }
  state.counters["Gelem/s"] = benchmark::Counter(kK * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  set_level(true);
}

void softmax_exp(benchmark::State& state, bool simd) {
  set_level(simd);
  const auto x = random_floats(4096, 4);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    engine::cpu::exp_shifted_lanes(x.data(), 1.0f, y.data(), static_cast<int64_t>(x.size()));
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["Gelem/s"] = benchmark::Counter(4096 * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  set_level(true);
}

const DType kTypes[] = {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1,
                        DType::Q5_0, DType::Q5_1, DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K};

// The forms a one-column product can take on this CPU (decode_tuning.h), AVX2 + VNNI once per encoding.
struct DotForm {
  std::string name;
  SimdLevel level;
  engine::cpu::VnniEncoding encoding = engine::cpu::VnniEncoding::kVex;
};
std::vector<DotForm> dot_forms() {
  using engine::cpu::VnniEncoding;
  std::vector<DotForm> forms;
  if (engine::cpu::cpu_simd_level() >= SimdLevel::kAvx2) forms.push_back({"avx2", SimdLevel::kAvx2});
  for (VnniEncoding e : engine::cpu::cpu_vnni_encodings())
    forms.push_back({e == VnniEncoding::kVex ? "avx2-vnni" : "avx2-vnni-evex", SimdLevel::kAvx2Vnni, e});
  if (engine::cpu::cpu_simd_level() >= SimdLevel::kAvx512) forms.push_back({"avx512", SimdLevel::kAvx512Bf16});
  return forms;
}

void thread_pool_handoff(benchmark::State& state) {
  engine::cpu::ThreadPool pool(engine::cpu::cpu_thread_count(0));
  std::atomic<int64_t> jobs{0};
  const std::function<void(int)> job = [&](int ith) {
    if (ith == 0) jobs.fetch_add(1, std::memory_order_relaxed);
  };
  for (auto _ : state) pool.run(pool.size(), job);
  if (jobs.load() != static_cast<int64_t>(state.iterations())) state.SkipWithError("a job ran a wrong number of times");
  state.counters["threads"] = pool.size();
}

int register_all() {
  for (DType t : kTypes)
    for (bool simd : {true, false}) {
      const std::string suffix = std::string(engine::dtype_name(t)) + (simd ? "/simd" : "/scalar");
      benchmark::RegisterBenchmark(("dot_row/" + suffix).c_str(), dot_row, t, simd);
      benchmark::RegisterBenchmark(("mul_mat_decode/" + suffix).c_str(), mul_mat, t, 1, simd, false)->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("mul_mat_prefill/" + suffix).c_str(), mul_mat, t, 512, simd, false)
          ->Unit(benchmark::kMillisecond)
          ->Iterations(1);
    }
  for (DType t : kTypes)
    benchmark::RegisterBenchmark(("mul_mat_prefill/" + std::string(engine::dtype_name(t)) + "/avx2").c_str(),
                                 [t](benchmark::State& state) {
                                   mul_mat_rows(state, t, kK, kRows, kRows, kPromptTokens, SimdLevel::kAvx2, engine::cpu::has_packed_layout(t));
                                 })
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  for (DType t : {DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    const std::string suffix = std::string(engine::dtype_name(t)) + "/simd_packed";
    benchmark::RegisterBenchmark(("mul_mat_decode/" + suffix).c_str(), mul_mat, t, 1, true, true)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("mul_mat_prefill/" + suffix).c_str(), mul_mat, t, 512, true, true)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  }
  for (DType t : {DType::F16, DType::Q8_0, DType::Q6_K, DType::Q5_K, DType::Q4_K, DType::Q4_1, DType::Q4_0, DType::Q5_0, DType::Q3_K, DType::Q2_K})
    for (const DotForm& form : dot_forms())
      benchmark::RegisterBenchmark(("mul_mat_decode_l2/" + std::string(engine::dtype_name(t)) + "/" + form.name).c_str(),
                                   [t, form](benchmark::State& state) {
                                     if (form.level == SimdLevel::kAvx2Vnni) engine::cpu::set_vnni_encoding(form.encoding);
                                     mul_mat_rows(state, t, kK, kL2Rows, kL2Rows, 1, form.level, engine::cpu::has_packed_layout(t));
                                     if (form.level == SimdLevel::kAvx2Vnni) engine::cpu::set_vnni_encoding(engine::cpu::cpu_vnni_encodings().front());
                                   });
  benchmark::RegisterBenchmark("mul_mat_prefill/q8_0/amx", mul_mat_amx_prefill)->Unit(benchmark::kMillisecond);
  using engine::cpu::StreamRequests;
  for (DType t : {DType::F16, DType::Q8_0, DType::Q6_K, DType::Q5_K, DType::Q4_K, DType::Q4_1, DType::Q4_0})
    for (int64_t k : engine::cpu::kTimedRowElements)
      for (std::optional<StreamRequests> requests :
           {std::optional<StreamRequests>{}, {StreamRequests::kNearAndFar}, {StreamRequests::kFar}, {StreamRequests::kNone}})
        benchmark::RegisterBenchmark(("mul_mat_decode_stream/" + std::string(engine::dtype_name(t)) + "/k" + std::to_string(k) +
                                      (requests ? "/" + std::string(engine::cpu::requests_name(*requests)) : ""))
                                         .c_str(),
                                     mul_mat_decode_stream, t, k, requests, std::optional<SimdLevel>{})
            ->Threads(engine::cpu::cpu_thread_count(0))
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
  for (DType t : {DType::F16, DType::Q8_0, DType::Q6_K, DType::Q5_K, DType::Q4_K, DType::Q4_1, DType::Q4_0})
    for (const DotForm& form : dot_forms())
      for (StreamRequests requests : {StreamRequests::kNearAndFar, StreamRequests::kFar, StreamRequests::kNone})
        for (int threads : {1, engine::cpu::cpu_thread_count(0)})
          benchmark::RegisterBenchmark(("mul_mat_decode_stream/" + std::string(engine::dtype_name(t)) + "/k4096/" + form.name + "/" +
                                        engine::cpu::requests_name(requests))
                                           .c_str(),
                                       [t, form, requests](benchmark::State& state) {
                                         if (form.level == SimdLevel::kAvx2Vnni) engine::cpu::set_vnni_encoding(form.encoding);
                                         mul_mat_decode_stream(state, t, 4096, requests, form.level);
                                         if (form.level == SimdLevel::kAvx2Vnni)
                                           engine::cpu::set_vnni_encoding(engine::cpu::cpu_vnni_encodings().front());
                                       })
              ->Threads(threads)
              ->UseRealTime()
              ->Unit(benchmark::kMillisecond);
  for (DType t : {DType::Q4_0, DType::Q8_0})
    for (bool gaps : {false, true})
      benchmark::RegisterBenchmark(
          ("mul_mat_decode_steps/" + std::string(engine::dtype_name(t)) + (gaps ? "/decode_gaps" : "/no_gaps")).c_str(),
          mul_mat_decode_steps, t, gaps)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
  for (DType t : {DType::Q8_0, DType::Q4_1, DType::Q4_K})
    for (bool simd : {true, false})
      benchmark::RegisterBenchmark(
          ("quantize_activation/" + std::string(engine::dtype_name(engine::cpu::vec_dot_type(t))) + (simd ? "/simd" : "/scalar")).c_str(),
          quantize, t, simd);
  for (bool simd : {true, false}) benchmark::RegisterBenchmark(simd ? "softmax_exp/simd" : "softmax_exp/scalar", softmax_exp, simd);
  for (bool simd : {true, false})
    benchmark::RegisterBenchmark(simd ? "attention_qk/F16/simd" : "attention_qk/F16/scalar", attention_qk, simd)
        ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("thread_pool_handoff", thread_pool_handoff)->UseRealTime();
  return 0;
}

const int registered = register_all();

}  // namespace
