#pragma once
// Which SIMD form runs each weight dtype's one-column products (decode), chosen by timing the
// forms on the machine itself, not by the CPU's name: where a CPU splits 512-bit operations into
// two 256-bit halves (AMD Zen 4) a dtype's 256-bit forms can outrun its AVX-512 one, elsewhere
// mostly the reverse; on AVX-VNNI cores without AVX-512 the 256-bit VNNI form is the one past
// AVX2. The chosen form is then timed once more streaming its weight without the near requests
// into L1 (DotTile::near_requests), which slowed most dtypes' streams on an AMD Zen 5 and were
// worth about 1 % on the Xeon they were added on. Every form gives the same bits
// (cpu_features.h), so the choice changes speed only.
// It is kept per CPU model in a small file, so only the first run on a machine pays the timing.
#include <optional>
#include <string>
#include <vector>

#include "cpu/cpu_features.h"
#include "engine/dtype.h"

namespace engine::cpu {

// A dtype's form and how fast each candidate streamed its weights when timed (0: not timed).
struct DecodeForm {
  DType weight;
  SimdLevel level;
  double avx2_gbs = 0, avx2_vnni_gbs = 0, avx512_gbs = 0;  // 0: not timed (the CPU lacks it)
  double far_only_gbs = 0;     // `level` without the near requests
  bool near_requests = true;

  // The rate of `level`, with near requests.
  double level_gbs() const {
    return level == SimdLevel::kAvx2 ? avx2_gbs : level == SimdLevel::kAvx2Vnni ? avx2_vnni_gbs : avx512_gbs;
  }
};

// The form kept for a dtype timed at these rates: the widest this CPU has, unless a narrower one
// is faster by more than the timing's noise (3 %), looking from wide to narrow. Within that the
// forms are equals on one thread, and the wider, issuing fewer instructions, stays ahead when
// several threads share the memory (decode runs so).
SimdLevel faster_form(double avx2_gbs, double avx2_vnni_gbs, double avx512_gbs);

// Whether the chosen form, streaming at `near_gbs`, keeps its near requests: unless it streamed
// faster than the noise (3 %) without them, at `far_only_gbs`.
bool keeps_near_requests(double near_gbs, double far_only_gbs);

// The level one-column products of `weight` run on: its chosen form, capped by simd_level();
// and whether they request their weight into L1 as well as into L2.
SimdLevel decode_level(DType weight);
bool decode_near_requests(DType weight);
// How the cache file and the logs name the two ways of requesting a stream.
const char* requests_name(bool near_requests);

// Chooses the forms once per process: from this CPU's cache file, else by timing them (about a
// second) and writing the file. Leaves every dtype on simd_level() where there is no choice (AVX2
// alone), where ENGINE_CPU_TUNE=0, and in sanitized builds (their timings say nothing).
void ensure_decode_tuning();

// Times every dtype's forms now, keeps the fastest of each and rewrites the cache file.
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
