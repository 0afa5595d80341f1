// The "cpu-local" profile: a short probe of this machine's read bandwidth and FP32 FMA rate.
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define COST_PROBE_X86 1
#endif

#include "cost/hardware.h"
#include "engine/backend.h"
#include "engine/error.h"
#include "engine/graph.h"
#include "engine/host_memory.h"
#include "engine/plan.h"

namespace cost {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kPasses = 3;                // the best pass counts: filters out scheduling noise
constexpr int kAccumulators = 12;         // independent FMA chains: cover latency x FMA ports
constexpr double kFmaPassSeconds = 0.02;  // length of one FMA pass once calibrated
// The read buffer is twice the last-level cache, within these bounds (the upper one keeps
// the probe under a second; a larger cache then partly serves the reads). Shared hosts report
// caches of hundreds of MiB: on one with 480 MiB a 512 MiB read ran 3-5 % faster than 1-2 GiB.
constexpr size_t kMinBufferBytes = size_t{64} << 20;
constexpr size_t kMaxBufferBytes = size_t{2} << 30;

// Every probe result lands here, so the compiler cannot drop the work that produced it.
std::atomic<uint64_t> g_sink{0};

// Runs body(thread_index) on `threads` threads released together; returns the wall seconds
// from release until the last one finishes.
template <typename Body>
double run_together(int threads, const Body& body) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      body(t);
    });
  while (ready.load() < threads) std::this_thread::yield();
  const auto start = Clock::now();
  go.store(true);
  for (std::thread& th : pool) th.join();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

size_t last_level_cache_bytes() {
  long bytes = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
  bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (bytes <= 0) bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  return bytes > 0 ? static_cast<size_t>(bytes) : 0;
}

// Sums a chunk with independent accumulators so loads, not the add chain, set the pace.
uint64_t sum_words(const uint64_t* p, size_t n) {
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += p[i];
    s1 += p[i + 1];
    s2 += p[i + 2];
    s3 += p[i + 3];
  }
  for (; i < n; ++i) s0 += p[i];
  return s0 + s1 + s2 + s3;
}

#ifdef COST_PROBE_X86
// A vector read's lane sums plus the n words its loop left at `rest`.
uint64_t lanes_and_rest(std::span<const uint64_t> lanes, const uint64_t* rest, size_t n) {
  uint64_t sum = sum_words(rest, n);
  for (uint64_t lane : lanes) sum += lane;
  return sum;
}

// The widest loads the CPU has: narrower ones leave a core short of the memory's rate here.
__attribute__((target("avx512f"))) uint64_t sum_words_avx512(const uint64_t* p, size_t n) {
  __m512i s[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
  size_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int k = 0; k < 4; ++k) s[k] = _mm512_add_epi64(s[k], _mm512_loadu_si512(p + i + 8 * k));
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, _mm512_add_epi64(_mm512_add_epi64(s[0], s[1]), _mm512_add_epi64(s[2], s[3])));
  return lanes_and_rest(lanes, p + i, n - i);
}

__attribute__((target("avx2"))) uint64_t sum_words_avx2(const uint64_t* p, size_t n) {
  __m256i s[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 4; ++k)
      s[k] = _mm256_add_epi64(s[k], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 4 * k)));
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_add_epi64(_mm256_add_epi64(s[0], s[1]), _mm256_add_epi64(s[2], s[3])));
  return lanes_and_rest(lanes, p + i, n - i);
}

// The line at `words`, after requesting the line 16 KiB ahead into L2 and the one 1 KiB ahead
// into L1, as the decode kernels stream their weights (kernels/cpu/simd_tiles_impl.h).
inline const char* request_ahead(const uint64_t* words) {
  const char* line = reinterpret_cast<const char*>(words);
  _mm_prefetch(line + 16384, _MM_HINT_T1);
  _mm_prefetch(line + 1024, _MM_HINT_T0);
  return line;
}

// The same read as the decode kernels stream their weights: each 64-byte line requested 16 KiB
// ahead into L2 and 1 KiB ahead into L1 just before its load, a line per loop step. On the
// 2-core Xeon of docs/benchmarks.md it read 32-33 GB/s where the plain loop above read 28-30
// (and the decode kernels up to 34); unrolled four lines a step it read no more than plain.
__attribute__((target("avx512f"))) uint64_t sum_words_ahead_avx512(const uint64_t* p, size_t n) {
  __m512i s = _mm512_setzero_si512();
  size_t i = 0;
#pragma GCC unroll 1
  for (; i + 8 <= n; i += 8) {
    const char* line = request_ahead(p + i);
    s = _mm512_add_epi64(s, _mm512_loadu_si512(line));
  }
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, s);
  return lanes_and_rest(lanes, p + i, n - i);
}

// The same read ahead with AVX2's loads, two a line: on the same Xeon it read 33.6-34.1 GB/s over
// 960 MiB where AVX2's plain loop read 30.7-31.9 (and the AVX-512 read ahead 34.2-34.5).
__attribute__((target("avx2"))) uint64_t sum_words_ahead_avx2(const uint64_t* p, size_t n) {
  __m256i s = _mm256_setzero_si256();
  size_t i = 0;
#pragma GCC unroll 1
  for (; i + 8 <= n; i += 8) {
    const char* line = request_ahead(p + i);
    s = _mm256_add_epi64(s, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(line)));
    s = _mm256_add_epi64(s, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(line + 32)));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
  return lanes_and_rest(lanes, p + i, n - i);
}
#endif

using SumFn = uint64_t (*)(const uint64_t*, size_t);

// The reads the probe times: the widest plain sum and the same read ahead.
std::vector<SumFn> read_sums() {
#ifdef COST_PROBE_X86
  if (__builtin_cpu_supports("avx512f")) return {sum_words_avx512, sum_words_ahead_avx512};
  if (__builtin_cpu_supports("avx2")) return {sum_words_avx2, sum_words_ahead_avx2};
#endif
  return {sum_words};
}

// GB/s reading a buffer of twice the last-level cache (clamped), every thread its own chunk:
// the fastest of the reads (read_sums), so the roofline divides by what memory delivers.
double measure_read_bandwidth(int threads, size_t& buffer_bytes) {
  const std::vector<SumFn> sums = read_sums();
  buffer_bytes = read_probe_bytes();
  const size_t words = buffer_bytes / sizeof(uint64_t);
  const size_t chunk = words / static_cast<size_t>(threads);
  // On the pages the engine streams its weights from (host_memory.h): with 4 KiB pages the probe
  // would measure the TLB as much as the memory.
  engine::HostMemory memory(words * sizeof(uint64_t));
  auto* buffer = reinterpret_cast<uint64_t*>(memory.data());
  run_together(threads, [&](int t) {  // each thread writes the chunk it will read
    for (size_t i = t * chunk; i < (t + 1) * chunk; ++i) buffer[i] = i;
  });
  const auto read = [&](SumFn sum) { return run_together(threads, [&](int t) { g_sink += sum(&buffer[t * chunk], chunk); }); };
  // An untimed pass first: right after the writes, the first reads ran at half the rate here.
  read(sums[0]);
  double best = 1e30;
  for (int pass = 0; pass < kPasses; ++pass)
    for (const SumFn sum : sums) best = std::min(best, read(sum));
  return static_cast<double>(chunk * threads * sizeof(uint64_t)) / best / 1e9;
}

// An FMA kernel runs `iters` rounds over kAccumulators vectors of `lanes` floats and returns
// a value that depends on every one of them (so nothing is optimized away).
struct FmaKernel {
  const char* isa;
  int lanes;
  float (*run)(int64_t iters);
};

float fma_scalar(int64_t iters) {
  float acc[kAccumulators];
  for (int k = 0; k < kAccumulators; ++k) acc[k] = 0.001f * static_cast<float>(k);
  for (int64_t i = 0; i < iters; ++i)
    for (float& a : acc) a = a * 0.999999f + 1e-6f;  // converges to 1: no overflow, no denormals
  float s = 0;
  for (float a : acc) s += a;
  return s;
}

#ifdef COST_PROBE_X86
__attribute__((target("avx2,fma"))) float fma_avx2(int64_t iters) {
  __m256 acc[kAccumulators];
  for (int k = 0; k < kAccumulators; ++k) acc[k] = _mm256_set1_ps(0.001f * static_cast<float>(k));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-6f);
  for (int64_t i = 0; i < iters; ++i)
    for (__m256& v : acc) v = _mm256_fmadd_ps(v, a, b);
  __m256 s = acc[0];
  for (int k = 1; k < kAccumulators; ++k) s = _mm256_add_ps(s, acc[k]);
  return _mm256_cvtss_f32(s);
}

__attribute__((target("avx512f"))) float fma_avx512(int64_t iters) {
  __m512 acc[kAccumulators];
  for (int k = 0; k < kAccumulators; ++k) acc[k] = _mm512_set1_ps(0.001f * static_cast<float>(k));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-6f);
  for (int64_t i = 0; i < iters; ++i)
    for (__m512& v : acc) v = _mm512_fmadd_ps(v, a, b);
  __m512 s = acc[0];
  for (int k = 1; k < kAccumulators; ++k) s = _mm512_add_ps(s, acc[k]);
  float lanes[16];  // not _mm512_reduce_add_ps: GCC 12 warns inside it (-Wuninitialized)
  _mm512_storeu_ps(lanes, s);
  float sum = 0;
  for (float lane : lanes) sum += lane;
  return sum;
}
#endif

FmaKernel best_fma_kernel() {
#ifdef COST_PROBE_X86
  if (__builtin_cpu_supports("avx512f")) return {"AVX-512", 16, fma_avx512};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {"AVX2", 8, fma_avx2};
#endif
  return {"scalar", 1, fma_scalar};
}

// TFLOP/s of `kernel` on every thread: calibrated on one thread, then the best of a few passes.
double measure_fma_tflops(int threads, const FmaKernel& kernel) {
  int64_t iters = 1 << 12;
  double seconds = 0;
  const auto run_into_sink = [&](int) { g_sink += static_cast<uint64_t>(kernel.run(iters)); };
  while ((seconds = run_together(1, run_into_sink)) < kFmaPassSeconds / 4) iters *= 2;
  iters = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(iters) * kFmaPassSeconds / seconds));
  double best = 1e30;
  for (int pass = 0; pass < kPasses; ++pass)
    best = std::min(best, run_together(threads, run_into_sink));
  const double flops = 2.0 * kernel.lanes * kAccumulators * static_cast<double>(iters) * threads;
  return flops / best / 1e12;
}

// Matrix rates relative to the FP32 FMA rate, from the instructions the CPU has:
// bf16 x2 with AVX512_BF16 (VDPBF16PS: two products per f32 lane), f16 x2 with AVX512_FP16
// (twice the lanes), int8 x4 with VNNI (VPDPBUSD: four products per i32 lane); otherwise the
// f32 rate, since f16/bf16 then convert to f32 and int8 dots gain little over FMA.
struct ClassFactors {
  double f16 = 1, bf16 = 1, int8 = 1;
};

ClassFactors class_factors() {
  ClassFactors f;
#ifdef COST_PROBE_X86
  if (__builtin_cpu_supports("avx512fp16")) f.f16 = 2;
  if (__builtin_cpu_supports("avx512bf16")) f.bf16 = 2;
  if (__builtin_cpu_supports("avx512vnni") || __builtin_cpu_supports("avxvnni")) f.int8 = 4;
#endif
  return f;
}

}  // namespace

size_t read_probe_bytes() { return std::clamp(2 * last_level_cache_bytes(), kMinBufferBytes, kMaxBufferBytes); }

// A backend's cost of an op besides its work: on the CPU node dispatch and the thread pool's
// fork and join, which every multiply pays (smaller ops run on one thread and pay less); on a
// GPU driver a dispatch and its barrier. A chain of kChain 16 x 16 multiplies of one column,
// each its own node, computed whole through the Backend API; the best of a few passes, per node,
// as a plain run takes it and as the profiler times each node.
OpOverhead measure_op_overhead(int threads, const OpProbe& probe) {
  constexpr int kChain = 256;
  constexpr int64_t kElements = 16;
  engine::Graph g;
  engine::Tensor* w = g.new_tensor_2d(engine::DType::F32, kElements, kElements, "w");
  engine::Tensor* x = g.new_tensor_1d(engine::DType::F32, kElements, "x");
  w->flags = engine::kInput;
  x->flags = engine::kInput;
  engine::Tensor* y = x;
  for (int i = 0; i < kChain; ++i) y = g.mul_mat(w, y);
  y->flags |= engine::kOutput;
  g.expand(y);
  const auto backend = engine::make_backend(probe.backend, engine::BackendParams{probe.device, threads});
  backend->allocate(g, engine::Plan::make(g));
  const std::vector<float> ones(kElements * kElements, 1.0f / kElements);
  backend->set_input(*w, ones.data(), ones.size() * sizeof(float));
  backend->set_input(*x, ones.data(), kElements * sizeof(float));
  engine::Profiler profiler;
  backend->compute(g, &profiler);  // warm-up: wakes the thread pool, makes the pipelines
  backend->synchronize();
  OpOverhead best{1e30, 1e30};
  for (int pass = 0; pass < 3 * kPasses; ++pass) {
    const auto start = Clock::now();
    backend->compute(g, nullptr);
    backend->synchronize();
    best.us = std::min(best.us, std::chrono::duration<double>(Clock::now() - start).count() / kChain * 1e6);
    profiler.clear();
    backend->compute(g, &profiler);
    backend->synchronize();
    uint64_t ns = 0;
    for (const engine::OpTiming& t : profiler.records()) ns += t.ns;
    best.profiled_us = std::min(best.profiled_us, static_cast<double>(ns) / kChain * 1e-3);
  }
  std::vector<float> out(kElements);
  backend->get_output(*y, out.data(), out.size() * sizeof(float));
  g_sink += static_cast<uint64_t>(out[0]);
  return best;
}

std::optional<double> measure_read_bandwidth_gbs(int threads) {
  if (threads < 1) throw engine::Error("a bandwidth probe needs at least one thread, got " + std::to_string(threads));
  const size_t available = engine::available_host_memory();
  if (available > 0 && available < 2 * read_probe_bytes()) return std::nullopt;
  size_t buffer_bytes = 0;
  return measure_read_bandwidth(threads, buffer_bytes);
}

HardwareProfile measure_local_cpu(int threads, const OpProbe& probe) {
  if (threads < 1) throw engine::Error("cpu-local needs at least one thread, got " + std::to_string(threads));
  const FmaKernel kernel = best_fma_kernel();
  size_t buffer_bytes = 0;
  HardwareProfile p;
  p.name = "cpu-local";
  p.mem_bw_gbs = measure_read_bandwidth(threads, buffer_bytes);
  p.peak_tflops_f32 = measure_fma_tflops(threads, kernel);
  const ClassFactors f = class_factors();
  p.peak_tflops_f16 = f.f16 * p.peak_tflops_f32;
  p.peak_tflops_bf16 = f.bf16 * p.peak_tflops_f32;
  p.peak_tflops_int8 = f.int8 * p.peak_tflops_f32;
  p.mem_gb = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1e9;
  // A backend this binary lacks, or one without that device, leaves the CPU backend's cost.
  OpProbe timed = probe;
  try {
    engine::check_backend(timed.backend, timed.device);
  } catch (const engine::Error&) {
    timed = OpProbe{};
  }
  const OpOverhead overhead = measure_op_overhead(threads, timed);
  p.op_overhead_us = overhead.us;
  p.profiled_op_overhead_us = overhead.profiled_us;
  p.description = "this machine, measured: " + std::to_string(threads) + (threads == 1 ? " thread, " : " threads, ") + kernel.isa +
                  " multiply-add, read of " + std::to_string(buffer_bytes >> 20) + " MiB, " +
                  fmt::format("{:.1f} us an op of the {} backend ({:.1f} us profiled)", p.op_overhead_us, timed.backend,
                              p.profiled_op_overhead_us);
  return p;
}

}  // namespace cost
