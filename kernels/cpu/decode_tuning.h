#pragma once
// Which SIMD form runs each weight dtype's one-column products (decode), and how it requests its
// weight ahead (DotTile::requests), chosen by timing them on the machine itself, not by the CPU's
// name: where a CPU splits 512-bit operations into two 256-bit halves (AMD Zen 4) a dtype's
// 256-bit forms can outrun its AVX-512 one, elsewhere mostly the reverse; on AVX-VNNI cores
// without AVX-512 the 256-bit VNNI form is the one past AVX2. Form and requests are timed
// together: on the Zen 4 VM of docs/benchmarks.md one thread streamed Q4_0 at 32 GB/s in its
// AVX-512 form without requests and at 24 with far ones, in its AVX2 form at 31 either way. The
// requests: near ones into L1 as well as far ones into L2 (worth about 1 % on the Xeon they were
// added on, slower on an AMD Zen 5), far ones only, or none (the hardware prefetcher alone). Each
// pair is timed on all threads at once as decode streams (engine-run's default thread count) and
// on one thread alone (faster_way). The kept form's requests are then timed on each class of row
// length (kTimedRowElements): on the Zen 5, Q8_0 rows of 2048 streamed about 20 % faster without
// requests and rows of 4096 13-15 % faster with near and far ones.
// Every form gives the same bits (cpu_features.h), so the choice changes speed only.
// It is kept per CPU model in a small file, so only the first run on a machine pays the timing.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cpu/cpu_features.h"
#include "cpu/vec_dot.h"
#include "engine/backend.h"
#include "engine/dtype.h"

namespace engine::cpu {

// The row lengths (elements) the stream requests are timed on: as in 1B models, 7B-8B models, and
// the down projections of both. A row takes the requests timed on the longest of these it reaches
// (shorter rows the first's).
constexpr std::array<int64_t, 3> kTimedRowElements = {2048, 4096, 8192};
// DType ids (GGUF's) are below this: the choices are kept in tables indexed by id.
constexpr uint32_t kDTypeIds = 32;
constexpr size_t kRowClasses = kTimedRowElements.size();
// Rates closer than this are equals to a timing of the forms or of the requests (3 %).
constexpr double kTimingNoise = 1.03;
// The class of rows of `row_elements`: its index in kTimedRowElements.
size_t row_class(int64_t row_elements);

// How a form requests its weight ahead on one class of rows, and what each way streamed when timed
// in turns on all threads and on one (the median of its passes in GB/s; 0: not timed).
struct RequestsTiming {
  StreamRequests chosen = StreamRequests::kNearAndFar;
  CpuRequestRates all_threads{}, one_thread{};
};

// A dtype's form, how fast each candidate form streamed its weights when timed with the requests
// kept for it (GB/s, 0: not timed), and the kept form's requests on each class of rows.
struct DecodeForm {
  DType weight;
  SimdLevel level;
  CpuFormRates all_threads{};  // 0: not timed (the CPU lacks it)
  CpuFormRates one_thread{};   // the same forms on one thread (a one-thread pool: all_threads)
  std::array<RequestsTiming, kRowClasses> rows{};  // `level`'s requests on each class of rows (kTimedRowElements)
};

// Of candidate ways timed at these rates (GB/s each; a candidate is not one where its all-thread
// rate is 0), listed from the most preferred, the index of the one kept. Where the threads
// together stream at the memory's limit every way ties, within swings of several percent on a
// shared host; the one thread that streams alone shows how much of its time each way leaves to
// memory, which decides as soon as memory is faster (the Zen 4 VM of docs/benchmarks.md at times
// nearly doubles its bandwidth, each thread then streaming what one streams alone). So: of the
// candidates within kAllThreadsSwing of the fastest on all threads, the first, unless a later one
// is faster on one thread by more than the noise. Where one of those was not timed alone (0),
// their all-thread rates decide the same way.
constexpr double kAllThreadsSwing = 1.10;
size_t faster_way(std::span<const double> all_threads, std::span<const double> one_thread);

// A CpuFormRates' forms with their rates, in its order: AVX2, AVX2 + VNNI, and this CPU's best
// level (its AVX-512 one, the last rate 0 on a CPU without).
std::array<std::pair<SimdLevel, double>, 3> form_rates(const CpuFormRates& rates);
// The rate of `way` among a form's timed ways.
double requests_rate(const CpuRequestRates& rates, StreamRequests way);

// The form kept for a dtype timed at these rates: faster_way from wide to narrow (within the
// noise the wider, issuing fewer instructions, leaves more of the core to the other work of a step).
SimdLevel faster_form(const CpuFormRates& all_threads, const CpuFormRates& one_thread);

// The requests a form keeps, timed at these rates: faster_way from more requests to fewer.
StreamRequests faster_requests(const CpuRequestRates& all_threads, const CpuRequestRates& one_thread);

// The level one-column products of `weight` run on: its chosen form, capped by simd_level();
// and how they request their weight ahead on rows of `row_elements`.
SimdLevel decode_level(DType weight);
StreamRequests decode_requests(DType weight, int64_t row_elements);
// How the cache file and the logs name the ways of requesting a stream: "near+far", "far", "none".
const char* requests_name(StreamRequests requests);
// A way decode found faster on rows of that class while running (requests_learner.h): backends
// made later start from it, and the cache file, where there is one, keeps it for later runs (its
// timed figures unchanged), so a run starts from what the last one learned.
void keep_learned_requests(DType weight, int64_t row_elements, StreamRequests requests);

// Whether decode's choices are measured here (the forms, where there are several, and the requests,
// requests_learner.h): not where ENGINE_CPU_TUNE=0, in sanitized builds, nor on the scalar code.
bool decode_choice_measured();

// Chooses the forms once per process: from this CPU's cache file, else by timing them (about a
// second) and writing the file; on a CPU with AVX2 alone only the requests have a choice. Leaves
// every dtype on simd_level() with its default requests where ENGINE_CPU_TUNE=0, in sanitized
// builds (their timings say nothing), and where the AVX2 forms are forced on a CPU with more
// (ENGINE_CPU_SIMD=avx2: a replay of that form, not a choice).
void ensure_decode_tuning();

// Times every dtype's forms (those this CPU has) now, keeps the fastest of each and rewrites the
// cache file.
std::vector<DecodeForm> tune_decode_forms();

// The forms in use, one per dtype with a CPU dot product.
std::vector<DecodeForm> decode_forms();

// The cache file's text for `forms`, and the forms read back from such a text (nullopt when it is
// not one, or names a form this CPU lacks: the file is then timed anew and rewritten).
std::string decode_tuning_text(const std::vector<DecodeForm>& forms);
std::optional<std::vector<DecodeForm>> parse_decode_tuning(const std::string& text);

// Where the choice is cached: ENGINE_CPU_TUNE_FILE, else $XDG_CACHE_HOME (or ~/.cache)
// /engine/cpu-decode-<CPU model>.txt; empty when there is no such folder to use.
std::string decode_tuning_path();

}  // namespace engine::cpu
