// Timing each dtype's decode forms on this machine, and the per-CPU cache file of the choice.
#include "cpu/decode_tuning.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "cpu/cpu_device.h"
#include "cpu/host_buffer.h"
#include "cpu/repack.h"
#include "cpu/row_split.h"
#include "cpu/thread_pool.h"
#include "cpu/vec_dot.h"
#include "engine/backend.h"
#include "engine/error.h"
#include "engine/host_memory.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ENGINE_SANITIZED_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ENGINE_SANITIZED_BUILD 1
#endif
#endif
#ifndef ENGINE_SANITIZED_BUILD
#define ENGINE_SANITIZED_BUILD 0
#endif

namespace engine::cpu {
namespace {

// The number goes up with every change to a decode kernel: a file timed on older kernels is timed anew.
constexpr const char* kHeader = "engine cpu decode forms 21";
constexpr int64_t kTimedK = 4096;              // elements per weight row the forms are timed on
static_assert(std::find(kTimedRowElements.begin(), kTimedRowElements.end(), kTimedK) != kTimedRowElements.end(),
              "the forms are timed on the rows of one of the request classes");
constexpr size_t kTimedBytesPerThread = size_t{16} << 20;  // weight bytes per timing and thread,
constexpr size_t kTimedBytesMax = size_t{128} << 20;       // up to this in all
constexpr int kTimedPasses = 15;               // the median of these after one to warm up

// Chosen forms by DType id; kAvx512Bf16 stands for the best level in use.
struct ChosenForm {
  std::atomic<SimdLevel> level{SimdLevel::kAvx512Bf16};
  std::array<std::atomic<StreamRequests>, kRowClasses> requests;  // by row class
  ChosenForm() {
    for (auto& r : requests) r.store(StreamRequests::kNearAndFar);
  }
};
std::array<ChosenForm, kDTypeIds>& chosen() {
  static std::array<ChosenForm, kDTypeIds> forms;
  return forms;
}

std::mutex& forms_mutex() {
  static std::mutex m;
  return m;
}

std::vector<DecodeForm>& timed_forms() {  // the figures behind the choice, under forms_mutex
  static std::vector<DecodeForm> forms;
  return forms;
}

std::vector<DType> decode_dtypes() {
  std::vector<DType> types;
  for (uint32_t id = 0; id < kDTypeIds; ++id)
    if (const auto t = dtype_from_gguf(id); t && dot_supported(*t)) types.push_back(*t);
  return types;
}

// Weight bytes each timed pass streams on the threads of `pool`.
size_t timed_bytes(const ThreadPool& pool) {
  return std::min(kTimedBytesMax, kTimedBytesPerThread * static_cast<size_t>(pool.size()));
}

// Decode streams its weights from memory, not from a cache: so does each timed pass, reading the
// next window of a buffer of twice the last-level cache (256 MiB to 1 GiB), so that a window is
// long evicted when it comes round again (windows flushed with clflush instead still read 30-50 %
// faster than memory on the Zen 5 VM of docs/benchmarks.md). Its bytes are all 0x3C, a valid
// weight in every dtype (half float 1.05, float 0.0115, and any byte is a level or a scale):
// the kernels' speed does not depend on the values.
class ColdWindows {
 public:
  explicit ColdWindows(size_t window) : buffer_(buffer_bytes(window)) { std::memset(buffer_.data(), 0x3C, buffer_.size()); }
  // `bytes` (at most the window) not read for at least the buffer's size less them.
  const char* next(size_t bytes) {
    if (at_ + bytes > buffer_.size()) at_ = 0;
    const char* window = reinterpret_cast<const char*>(buffer_.data()) + at_;
    at_ += (bytes + 4095) / 4096 * 4096;
    return window;
  }

 private:
  // No more than a quarter of the memory available (a small host's windows come round sooner).
  static size_t buffer_bytes(size_t window) {
    const auto cache = static_cast<size_t>(std::max(sysconf(_SC_LEVEL3_CACHE_SIZE), 0L));
    size_t bytes = std::clamp(std::max(2 * cache, 8 * window), size_t{256} << 20, size_t{1} << 30);
    if (const size_t available = available_host_memory(); available > 0) bytes = std::min(bytes, available / 4);
    return std::max(bytes, 2 * window);
  }
  HostMemory buffer_;
  size_t at_ = 0;
};

// One-column products over `rows` rows of k elements of `weight` from `cold` on `level` with
// `requests`, every thread of `pool` streaming its share of the rows at once, as decode does: one
// thread alone streams otherwise (on a Zen 5, Q8_0 without requests read 8 % slower than with far
// ones on one thread, 11 % faster on two).
class TimedForm {
 public:
  TimedForm(DType weight, SimdLevel level, StreamRequests requests, int64_t k, int64_t rows, const void* act, std::vector<float>& out,
            ThreadPool& pool)
      : weight_(weight), level_(level), rows_(rows), row_size_(row_bytes(weight, k)), pool_(pool),
        work_(static_cast<size_t>(pool.size())), ends_(static_cast<size_t>(pool.size())) {
    const int threads = pool.size();
    const int64_t chunk_blocks = packed_chunk_blocks(weight, k, rows);  // as the backend packs
    const int64_t unit = packed_rows_unit(chunk_blocks);
    for (int ith = 0; ith < threads; ++ith) {  // whole packed groups (or runs) each
      const WorkRange units = split_work(rows / unit, ith, threads);
      const int64_t begin = units.begin * unit, end = units.end * unit;
      first_rows_.push_back(begin);
      DotTile t{k, nullptr, row_size_, end - begin,
                static_cast<const char*>(act), row_bytes(vec_dot_type(weight), k), 1,
                reinterpret_cast<char*>(out.data() + begin), sizeof(float), 0, has_packed_layout(weight)};
      t.requests = requests;
      t.chunk_blocks = chunk_blocks;
      HostBuffer& mine = work_[static_cast<size_t>(ith)];
      mine.reserve(dot_tile_work_size_at(level, weight, DotOrder::kRow, t));
      t.work = static_cast<char*>(mine.data());
      t.work_size = mine.size();
      tiles_.push_back(t);
    }
  }

  // Weight bytes per second of one pass over the next window of `cold`, timed from when every
  // thread has woken to the last one's end.
  double pass(ColdWindows& cold) {
    using Clock = std::chrono::steady_clock;
    const int threads = pool_.size();
    const char* w = cold.next(static_cast<size_t>(rows_) * row_size_);
    Barrier together(threads);
    Clock::time_point start;
    pool_.run(threads, [&](int ith) {
      together.wait();
      if (ith == 0) start = Clock::now();
      DotTile t = tiles_[static_cast<size_t>(ith)];
      t.w = w + first_rows_[static_cast<size_t>(ith)] * static_cast<int64_t>(row_size_);
      dot_tile_at(level_, weight_, DotOrder::kRow, t);
      ends_[static_cast<size_t>(ith)] = Clock::now();
    });
    const std::chrono::duration<double> s = *std::max_element(ends_.begin(), ends_.end()) - start;
    return static_cast<double>(rows_ * static_cast<int64_t>(row_size_)) / s.count() / 1e9;
  }

 private:
  DType weight_;
  SimdLevel level_;
  int64_t rows_;
  size_t row_size_;
  ThreadPool& pool_;
  std::vector<DotTile> tiles_;
  std::vector<int64_t> first_rows_;
  std::vector<HostBuffer> work_;  // tiles_ point into their memory, which a move of this keeps
  std::vector<std::chrono::steady_clock::time_point> ends_;
};

// Each form's median rate in GB/s over kTimedPasses passes after one to warm up, the forms taking
// turns pass by pass, so that a host whose bandwidth drifts during the timing favours none of them.
// On the Zen 5 VM of docs/benchmarks.md one form timed as two candidates read 2.8 % apart on
// average this way (90 % of pairs within 5 %), against 16 % with the fastest of the passes
// timed one candidate after the other.
std::vector<double> time_in_turns(std::vector<TimedForm>& forms, ColdWindows& cold) {
  std::vector<std::vector<double>> rates(forms.size());
  for (int pass = 0; pass <= kTimedPasses; ++pass)
    for (size_t i = 0; i < forms.size(); ++i) {
      const double gbs = forms[i].pass(cold);
      if (pass > 0) rates[i].push_back(gbs);
    }
  std::vector<double> medians;
  for (std::vector<double>& r : rates) {
    std::nth_element(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(r.size() / 2), r.end());
    medians.push_back(r[r.size() / 2]);
  }
  return medians;
}

// One-column products of `weight` on rows of k elements, as many rows as a timed pass streams
// (whole runs of packed groups, so long rows lie chunked as the backend packs them), against one
// activation column.
class TimedShape {
 public:
  TimedShape(DType weight, int64_t k, ThreadPool& pool)
      : weight_(weight), k_(k),
        rows_(std::max<int64_t>(kRunRows, static_cast<int64_t>(timed_bytes(pool)) / static_cast<int64_t>(row_bytes(weight, k)) /
                                               kRunRows * kRunRows)),
        act_(row_bytes(vec_dot_type(weight), k)), out_(static_cast<size_t>(rows_)), pool_(pool) {
    std::vector<float> x(static_cast<size_t>(k));
    uint32_t state = 12345;
    for (float& v : x) {
      state = state * 1664525u + 1013904223u;
      v = static_cast<float>(state >> 8) / 16777216.0f - 0.5f;
    }
    quantize_activation(weight, x.data(), act_.data(), k);
  }
  TimedForm form(SimdLevel level, StreamRequests requests) {
    return TimedForm(weight_, level, requests, k_, rows_, act_.data(), out_, pool_);
  }

 private:
  DType weight_;
  int64_t k_, rows_;
  std::vector<char> act_;
  std::vector<float> out_;
  ThreadPool& pool_;
};

// The ways of requesting a stream, from more requests to fewer (CpuRequestRates' order).
constexpr std::array<StreamRequests, 3> kMoreToFewer = {StreamRequests::kNearAndFar, StreamRequests::kFar, StreamRequests::kNone};
std::array<double, 3> more_to_fewer(const CpuRequestRates& r) { return {r.near_and_far_gbs, r.far_only_gbs, r.no_requests_gbs}; }

// The forms this CPU has, in CpuFormRates' order: AVX2, AVX2 with VNNI, the best AVX-512 level.
std::vector<SimdLevel> timed_levels() {
  std::vector<SimdLevel> levels = {SimdLevel::kAvx2};
  if (cpu_simd_level() >= SimdLevel::kAvx2Vnni) levels.push_back(SimdLevel::kAvx2Vnni);
  if (cpu_simd_level() >= SimdLevel::kAvx512) levels.push_back(cpu_simd_level());
  return levels;
}

// `level`'s three ways of requesting its stream, timed in turns on `shape`'s threads.
CpuRequestRates time_requests(TimedShape& shape, SimdLevel level, ColdWindows& cold) {
  std::vector<TimedForm> ways;
  for (StreamRequests way : kMoreToFewer) ways.push_back(shape.form(level, way));
  const std::vector<double> gbs = time_in_turns(ways, cold);
  return {gbs[0], gbs[1], gbs[2]};
}

// Each form of `shape`'s dtype this CPU has with each way of requesting, all timed in turns on
// `shape`'s threads; by form in CpuFormRates' order (0 where the CPU lacks it).
std::array<CpuRequestRates, 3> time_pairs(TimedShape& shape, ColdWindows& cold) {
  const std::vector<SimdLevel> levels = timed_levels();
  std::vector<TimedForm> pairs;
  for (SimdLevel level : levels)
    for (StreamRequests way : kMoreToFewer) pairs.push_back(shape.form(level, way));
  const std::vector<double> gbs = time_in_turns(pairs, cold);
  std::array<CpuRequestRates, 3> rates{};
  for (size_t f = 0; f < levels.size(); ++f) rates[f] = {gbs[3 * f], gbs[3 * f + 1], gbs[3 * f + 2]};
  return rates;
}

// Times every form of `weight` with every way of requesting on rows of kTimedK, on every thread of
// `pool` and on the one of `alone`, and keeps each form's way, then the form; then times the kept
// form's ways on each other class of rows the same two ways.
DecodeForm time_forms(DType weight, ThreadPool& pool, ThreadPool& alone, ColdWindows& cold) {
  DecodeForm form{weight, cpu_simd_level()};
  const bool one_pool = pool.size() == 1;  // its one thread is all threads
  std::vector<TimedShape> classes, alone_classes;
  for (int64_t k : kTimedRowElements) {
    classes.emplace_back(weight, k, pool);
    if (!one_pool) alone_classes.emplace_back(weight, k, alone);
  }
  std::vector<TimedShape>& alone_shapes = one_pool ? classes : alone_classes;
  const size_t timed_class = row_class(kTimedK);
  const std::array<CpuRequestRates, 3> all = time_pairs(classes[timed_class], cold);
  const std::array<CpuRequestRates, 3> one = one_pool ? all : time_pairs(alone_shapes[timed_class], cold);
  std::array<StreamRequests, 3> ways{};
  std::array<double, 3> all_gbs{}, one_gbs{};
  for (size_t f = 0; f < ways.size(); ++f) {
    ways[f] = faster_requests(all[f], one[f]);
    all_gbs[f] = requests_rate(all[f], ways[f]);
    one_gbs[f] = requests_rate(one[f], ways[f]);
  }
  form.all_threads = CpuFormRates{all_gbs[0], all_gbs[1], all_gbs[2]};
  form.one_thread = CpuFormRates{one_gbs[0], one_gbs[1], one_gbs[2]};
  form.level = faster_form(form.all_threads, form.one_thread);
  const auto forms = form_rates(form.all_threads);
  const auto kept = static_cast<size_t>(
      std::find_if(forms.begin(), forms.end(), [&](const auto& f) { return f.first == form.level; }) - forms.begin());
  for (size_t c = 0; c < kRowClasses; ++c) {
    if (c == timed_class) {
      form.rows[c] = RequestsTiming{ways[kept], all[kept], one[kept]};
      continue;
    }
    const CpuRequestRates on_all = time_requests(classes[c], form.level, cold);
    const CpuRequestRates on_one = one_pool ? on_all : time_requests(alone_shapes[c], form.level, cold);
    form.rows[c] = RequestsTiming{faster_requests(on_all, on_one), on_all, on_one};
  }
  return form;
}

void apply(const std::vector<DecodeForm>& forms) {
  for (const DecodeForm& f : forms) {
    chosen()[static_cast<uint32_t>(f.weight)].level.store(f.level);
    for (size_t c = 0; c < kRowClasses; ++c) chosen()[static_cast<uint32_t>(f.weight)].requests[c].store(f.rows[c].chosen);
  }
  std::lock_guard lock(forms_mutex());
  timed_forms() = forms;
}

// The key's letters and digits, each run of anything else one '-'.
std::string cache_file_name(const std::string& key) {
  std::string name = "cpu-decode-";
  for (char c : key)
    if (std::isalnum(static_cast<unsigned char>(c)))
      name += c;
    else if (name.back() != '-')
      name += '-';
  if (name.back() == '-') name.pop_back();
  return name + ".txt";
}

// Writes through a file of its own (per process and write: a timing and a kept way may write at
// once) and a rename, so a process reading it never sees half of it.
void write_cache(const std::string& path, const std::vector<DecodeForm>& forms) {
  static std::atomic<uint64_t> writes{0};
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string temp = path + ".tmp" + std::to_string(getpid()) + "-" + std::to_string(writes++);
  {
    std::ofstream out(temp);
    out << decode_tuning_text(forms);
    if (!out.flush()) {
      spdlog::info("cpu: could not write the decode forms to {}; they will be timed again next time", path);
      std::filesystem::remove(temp, ec);
      return;
    }
  }
  std::filesystem::rename(temp, path, ec);
  if (ec) std::filesystem::remove(temp, ec);
}

}  // namespace

size_t faster_way(std::span<const double> all_threads, std::span<const double> one_thread) {
  const double fastest = all_threads.empty() ? 0 : *std::max_element(all_threads.begin(), all_threads.end());
  const auto candidate = [&](size_t i) { return all_threads[i] > 0 && all_threads[i] * kAllThreadsSwing >= fastest; };
  bool alone_timed = true;
  for (size_t i = 0; i < all_threads.size(); ++i)
    if (candidate(i) && (i >= one_thread.size() || one_thread[i] <= 0)) alone_timed = false;
  const std::span<const double> rates = alone_timed ? one_thread : all_threads;
  std::optional<size_t> kept;
  for (size_t i = 0; i < all_threads.size(); ++i)
    if (candidate(i) && (!kept || rates[i] > rates[*kept] * kTimingNoise)) kept = i;
  return kept.value_or(0);
}

std::array<std::pair<SimdLevel, double>, 3> form_rates(const CpuFormRates& rates) {
  return {{{SimdLevel::kAvx2, rates.avx2_gbs}, {SimdLevel::kAvx2Vnni, rates.avx2_vnni_gbs}, {cpu_simd_level(), rates.avx512_gbs}}};
}

double requests_rate(const CpuRequestRates& rates, StreamRequests way) {
  return more_to_fewer(rates)[static_cast<size_t>(std::find(kMoreToFewer.begin(), kMoreToFewer.end(), way) - kMoreToFewer.begin())];
}

SimdLevel faster_form(const CpuFormRates& all_threads, const CpuFormRates& one_thread) {
  auto all = form_rates(all_threads), one = form_rates(one_thread);
  std::reverse(all.begin(), all.end());  // wide to narrow
  std::reverse(one.begin(), one.end());
  std::array<double, 3> all_gbs{}, one_gbs{};
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].first <= cpu_simd_level()) {  // a form the CPU lacks is no candidate
      all_gbs[i] = all[i].second;
      one_gbs[i] = one[i].second;
    }
  return all[faster_way(all_gbs, one_gbs)].first;
}

StreamRequests faster_requests(const CpuRequestRates& all_threads, const CpuRequestRates& one_thread) {
  return kMoreToFewer[faster_way(more_to_fewer(all_threads), more_to_fewer(one_thread))];
}

const char* requests_name(StreamRequests requests) {
  switch (requests) {
    case StreamRequests::kNone: return "none";
    case StreamRequests::kFar: return "far";
    case StreamRequests::kNearAndFar: break;
  }
  return "near+far";
}

size_t row_class(int64_t row_elements) {
  size_t c = 0;
  while (c + 1 < kRowClasses && row_elements >= kTimedRowElements[c + 1]) ++c;
  return c;
}

StreamRequests decode_requests(DType weight, int64_t row_elements) {
  const auto id = static_cast<uint32_t>(weight);
  if (id >= kDTypeIds) return StreamRequests::kNearAndFar;
  return chosen()[id].requests[row_class(row_elements)].load(std::memory_order_relaxed);
}

void keep_learned_requests(DType weight, int64_t row_elements, StreamRequests requests) {
  const auto id = static_cast<uint32_t>(weight);
  if (id >= kDTypeIds) return;
  const size_t c = row_class(row_elements);
  chosen()[id].requests[c].store(requests, std::memory_order_relaxed);
  // Written under the lock, so that of two sessions' ways kept at once the file ends with the later.
  std::lock_guard lock(forms_mutex());
  const auto form = std::find_if(timed_forms().begin(), timed_forms().end(), [&](const DecodeForm& f) { return f.weight == weight; });
  if (form == timed_forms().end()) return;  // nothing timed nor read: no file to keep it in
  form->rows[c].chosen = requests;
  if (const std::string path = decode_tuning_path(); !path.empty()) write_cache(path, timed_forms());
}

SimdLevel decode_level(DType weight) {
  const auto id = static_cast<uint32_t>(weight);
  return std::min(id < kDTypeIds ? chosen()[id].level.load(std::memory_order_relaxed) : SimdLevel::kAvx512Bf16, simd_level());
}

std::string decode_tuning_text(const std::vector<DecodeForm>& forms) {
  std::ostringstream text;
  text << kHeader << "\ncpu " << cpu_model_key() << "\n";
  for (const DecodeForm& f : forms) {
    text << dtype_name(f.weight) << ' ' << simd_level_name(f.level);
    for (const RequestsTiming& r : f.rows) text << ' ' << requests_name(r.chosen);
    for (const CpuFormRates& r : {f.all_threads, f.one_thread}) text << ' ' << r.avx2_gbs << ' ' << r.avx2_vnni_gbs << ' ' << r.avx512_gbs;
    for (const RequestsTiming& r : f.rows)
      for (const CpuRequestRates& rates : {r.all_threads, r.one_thread})
        text << ' ' << rates.near_and_far_gbs << ' ' << rates.far_only_gbs << ' ' << rates.no_requests_gbs;
    text << "\n";
  }
  return text.str();
}

std::optional<std::vector<DecodeForm>> parse_decode_tuning(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kHeader) return std::nullopt;
  if (!std::getline(in, line) || line != "cpu " + cpu_model_key()) return std::nullopt;
  std::vector<DecodeForm> forms;
  const auto requests_named = [](const std::string& name) -> std::optional<StreamRequests> {
    for (StreamRequests r : {StreamRequests::kNone, StreamRequests::kFar, StreamRequests::kNearAndFar})
      if (name == requests_name(r)) return r;
    return std::nullopt;
  };
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string type_name, level_name, rest;
    std::array<std::string, kRowClasses> request_names;
    DecodeForm f{};
    std::vector<double> figures(6 + 6 * kRowClasses);
    fields >> type_name >> level_name;
    for (std::string& name : request_names) fields >> name;
    for (double& x : figures) fields >> x;
    if (!fields || (fields >> rest)) return std::nullopt;
    const auto type = dtype_from_name(type_name);
    const auto level = simd_level_from_name(level_name);
    const auto same_type = [&](const DecodeForm& other) { return type && other.weight == *type; };
    if (!type || !dot_supported(*type) || std::any_of(forms.begin(), forms.end(), same_type) || !level || *level < SimdLevel::kAvx2 ||
        *level > cpu_simd_level() || !std::all_of(figures.begin(), figures.end(), [](double x) { return std::isfinite(x); }))
      return std::nullopt;
    f.weight = *type;
    f.level = *level;
    f.all_threads = CpuFormRates{figures[0], figures[1], figures[2]};
    f.one_thread = CpuFormRates{figures[3], figures[4], figures[5]};
    for (size_t c = 0; c < kRowClasses; ++c) {
      const auto kind = requests_named(request_names[c]);
      if (!kind) return std::nullopt;
      const double* at = &figures[6 + 6 * c];
      f.rows[c] = RequestsTiming{*kind, {at[0], at[1], at[2]}, {at[3], at[4], at[5]}};
    }
    forms.push_back(f);
  }
  if (forms.size() != decode_dtypes().size()) return std::nullopt;
  return forms;
}

std::string decode_tuning_path() {
  if (const char* file = std::getenv("ENGINE_CPU_TUNE_FILE"); file && *file) return file;
  std::filesystem::path dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    dir = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home)
    dir = std::filesystem::path(home) / ".cache";
  else
    return "";
  return (dir / "engine" / cache_file_name(cpu_model_key())).string();
}

std::vector<DecodeForm> tune_decode_forms() {
  std::vector<DecodeForm> forms;
  if (cpu_simd_level() < SimdLevel::kAvx2) return forms;
  ThreadPool pool(cpu_thread_count(0)), alone(1);
  ColdWindows cold(timed_bytes(pool));
  for (DType t : decode_dtypes()) forms.push_back(time_forms(t, pool, alone, cold));
  apply(forms);
  if (const std::string path = decode_tuning_path(); !path.empty()) write_cache(path, forms);
  return forms;
}

bool decode_choice_measured() {
  const char* env = std::getenv("ENGINE_CPU_TUNE");
  return !ENGINE_SANITIZED_BUILD && !(env && std::string(env) == "0") && simd_level() >= SimdLevel::kAvx2;
}

void ensure_decode_tuning() {
  static std::once_flag once;
  std::call_once(once, [] {
    const bool avx2_forced = simd_level() == SimdLevel::kAvx2 && cpu_simd_level() > SimdLevel::kAvx2;
    if (!decode_choice_measured() || avx2_forced) return;
    const std::string path = decode_tuning_path();
    if (!path.empty()) {
      std::ifstream in(path);
      std::stringstream text;
      text << in.rdbuf();
      if (const auto forms = parse_decode_tuning(text.str())) {
        apply(*forms);
        return;
      }
    }
    const auto start = std::chrono::steady_clock::now();
    try {
      tune_decode_forms();
    } catch (const Error& e) {  // the timing's buffer: without it every dtype stays on the widest form
      spdlog::warn("cpu: decode forms not timed ({}); each dtype runs on {}", e.what(), simd_level_name(simd_level()));
      return;
    }
    const std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
    spdlog::info("cpu: decode forms timed in {:.2f} s, kept in {}", s.count(), path.empty() ? "no file" : path);
  });
}

std::vector<DecodeForm> decode_forms() {
  std::vector<DecodeForm> forms;
  {
    std::lock_guard lock(forms_mutex());
    forms = timed_forms();
  }
  if (forms.empty())
    for (DType t : decode_dtypes()) forms.push_back(DecodeForm{t, decode_level(t)});
  for (DecodeForm& f : forms) {
    f.level = decode_level(f.weight);
    for (size_t c = 0; c < kRowClasses; ++c) f.rows[c].chosen = decode_requests(f.weight, kTimedRowElements[c]);
  }
  return forms;
}

}  // namespace engine::cpu

namespace engine {

std::vector<CpuDecodeForm> cpu_decode_forms(bool retime) {
  if (retime)
    cpu::tune_decode_forms();
  else
    cpu::ensure_decode_tuning();
  std::vector<CpuDecodeForm> forms;
  for (const cpu::DecodeForm& f : cpu::decode_forms()) {
    CpuDecodeForm form{f.weight, cpu::simd_level_name(f.level), f.all_threads, f.one_thread, {}};
    for (size_t c = 0; c < cpu::kRowClasses; ++c) {
      const cpu::RequestsTiming& r = f.rows[c];
      form.rows.push_back(CpuStreamRequests{cpu::kTimedRowElements[c], cpu::requests_name(r.chosen), r.all_threads, r.one_thread});
    }
    forms.push_back(std::move(form));
  }
  return forms;
}

std::string cpu_decode_forms_path() { return cpu::decode_tuning_path(); }

}  // namespace engine
