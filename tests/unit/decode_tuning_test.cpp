// The decode forms' choice by timing (kernels/cpu/decode_tuning.h): it keeps the fastest form of
// each dtype, writes a cache file that reads back the same, and refuses a cache file it cannot use.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>
#include <unistd.h>

#include "cpu/cpu_features.h"
#include "cpu/decode_tuning.h"
#include "cpu/vec_dot.h"

namespace engine::cpu {
namespace {

std::vector<DecodeForm> some_forms() {
  std::vector<DecodeForm> forms;
  for (uint32_t id = 0; id < 32; ++id)
    if (const auto t = dtype_from_gguf(id); t && dot_supported(*t)) {
      DecodeForm f{*t, id % 3 == 0 ? SimdLevel::kAvx2 : id % 3 == 1 ? std::min(SimdLevel::kAvx2Vnni, cpu_simd_level()) : cpu_simd_level(),
                   {10.0 + id, 15.25 + id, 20.5 + id}, {5.5 + id, 7.75 + id, 9.125 + id}};
      for (size_t c = 0; c < kRowClasses; ++c)
        f.rows[c] = RequestsTiming{static_cast<StreamRequests>((id + c) % 3),
                                   {25.5 + id + 20 * c, 30.75 + id + 20 * c, 40.125 + id + 20 * c},
                                   {21.5 + id + 20 * c, 26.25 + id + 20 * c, 48.375 + id + 20 * c}};
      forms.push_back(f);
    }
  return forms;
}

TEST(DecodeTuning, CacheTextReadsBackTheSameForms) {
  if (cpu_simd_level() < SimdLevel::kAvx2) GTEST_SKIP() << "no SIMD forms on this CPU";
  const auto forms = some_forms();
  const auto back = parse_decode_tuning(decode_tuning_text(forms));
  ASSERT_TRUE(back.has_value());
  ASSERT_EQ(back->size(), forms.size());
  for (size_t i = 0; i < forms.size(); ++i) {
    EXPECT_EQ((*back)[i].weight, forms[i].weight);
    EXPECT_EQ((*back)[i].level, forms[i].level) << dtype_name(forms[i].weight);
    for (const auto& [read, written] : {std::pair{(*back)[i].all_threads, forms[i].all_threads}, std::pair{(*back)[i].one_thread, forms[i].one_thread}}) {
      EXPECT_DOUBLE_EQ(read.avx2_gbs, written.avx2_gbs);
      EXPECT_DOUBLE_EQ(read.avx2_vnni_gbs, written.avx2_vnni_gbs);
      EXPECT_DOUBLE_EQ(read.avx512_gbs, written.avx512_gbs);
    }
    for (size_t c = 0; c < kRowClasses; ++c) {
      const RequestsTiming &read = (*back)[i].rows[c], &written = forms[i].rows[c];
      for (const auto& [got, put] : {std::pair{read.all_threads, written.all_threads}, std::pair{read.one_thread, written.one_thread}}) {
        EXPECT_DOUBLE_EQ(got.near_and_far_gbs, put.near_and_far_gbs);
        EXPECT_DOUBLE_EQ(got.far_only_gbs, put.far_only_gbs);
        EXPECT_DOUBLE_EQ(got.no_requests_gbs, put.no_requests_gbs);
      }
      EXPECT_EQ(read.chosen, written.chosen) << dtype_name(forms[i].weight);
    }
  }
}

TEST(DecodeTuning, CacheTextItCannotUseIsRefused) {
  if (cpu_simd_level() < SimdLevel::kAvx2) GTEST_SKIP() << "no SIMD forms on this CPU";
  const std::string good = decode_tuning_text(some_forms());
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  const std::string first_line = good.substr(0, good.find('\n'));
  const std::string dtype_line = "\nf16 ";
  EXPECT_FALSE(parse_decode_tuning(""));
  EXPECT_FALSE(parse_decode_tuning(replaced(first_line, "engine cpu decode forms 0"))) << "another format";
  EXPECT_FALSE(parse_decode_tuning(replaced("\ncpu ", "\ncpu another "))) << "another CPU";
  // Virtual machines give Zen 4 and Zen 5 one name; the packed layout follows the L1's size.
  if (good.find(", family ") != std::string::npos) {  // x86: CPUID's family in the key
    EXPECT_FALSE(parse_decode_tuning(replaced(", family ", ", family 1"))) << "the same name, another family";
  }
  EXPECT_FALSE(parse_decode_tuning(replaced(", L1d ", ", L1d 1"))) << "the same name, another L1";
  EXPECT_FALSE(parse_decode_tuning(replaced(dtype_line, "\nq9_9 "))) << "unknown dtype";
  EXPECT_FALSE(parse_decode_tuning(replaced(dtype_line, "\nq8_K "))) << "a dtype with no dot";
  EXPECT_FALSE(parse_decode_tuning(good.substr(0, good.rfind('\n', good.size() - 2) + 1))) << "a dtype missing";
  EXPECT_FALSE(parse_decode_tuning(good + "f16 avx2 far far far 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24\n"))
      << "a dtype twice";
  EXPECT_FALSE(parse_decode_tuning(replaced(" 88.375\n", "\n"))) << "a figure missing";
  for (const char* requests : {" far ", " near+far ", " none "}) {
    EXPECT_FALSE(parse_decode_tuning(replaced(requests, " near "))) << "unknown requests";
    EXPECT_FALSE(parse_decode_tuning(replaced(requests, " "))) << "requests missing";
  }
  EXPECT_FALSE(parse_decode_tuning(replaced(" avx2 ", " scalar "))) << "not a SIMD form";
  EXPECT_FALSE(parse_decode_tuning(replaced(" avx2 ", " avx9 "))) << "unknown form";
  EXPECT_FALSE(parse_decode_tuning(replaced(" 11 ", " nan "))) << "a figure not finite";
  EXPECT_FALSE(parse_decode_tuning(replaced(" 11 ", " 11 extra "))) << "a field too many";
  if (cpu_simd_level() < SimdLevel::kAvx512Bf16) {
    EXPECT_FALSE(parse_decode_tuning(replaced(" avx2 ", " avx512-bf16 "))) << "a form this CPU lacks";
  }
}

TEST(DecodeTuning, CacheFileIsNamedAfterTheWholeModelKey) {
  // The two variables the path reads, set for the test and put back as they were.
  std::vector<std::pair<std::string, std::optional<std::string>>> kept;
  for (const char* name : {"ENGINE_CPU_TUNE_FILE", "XDG_CACHE_HOME"})
    kept.emplace_back(name, std::getenv(name) ? std::optional<std::string>(std::getenv(name)) : std::nullopt);
  unsetenv("ENGINE_CPU_TUNE_FILE");
  ASSERT_EQ(setenv("XDG_CACHE_HOME", "/cache home", 1), 0);
  const std::filesystem::path path = decode_tuning_path();
  for (const auto& [name, value] : kept) value ? setenv(name.c_str(), value->c_str(), 1) : unsetenv(name.c_str());
  EXPECT_EQ(path.parent_path(), std::filesystem::path("/cache home/engine"));
  const std::string name = path.filename().string();
  EXPECT_EQ(name.rfind("cpu-decode-", 0), 0u) << name;
  EXPECT_EQ(name.find("--"), std::string::npos) << name;
  EXPECT_EQ(name.find(' '), std::string::npos) << name;
  EXPECT_NE(name.find("-L1d-"), std::string::npos) << name;
  EXPECT_TRUE(name.size() > 4 && name.substr(name.size() - 4) == ".txt" && name[name.size() - 5] != '-') << name;
}

// All threads' rates alone: one thread's not timed (0) or as fast as all of them.
SimdLevel form_at(double avx2, double avx2_vnni, double avx512) { return faster_form({avx2, avx2_vnni, avx512}, {}); }

TEST(DecodeTuning, ANarrowerFormOnlyWhenClearlyFaster) {
  if (cpu_simd_level() < SimdLevel::kAvx2Vnni) GTEST_SKIP() << "AVX2 alone: one form per dtype, nothing to time";
  if (cpu_simd_level() == SimdLevel::kAvx2Vnni) {  // no AVX-512: its rate is never timed
    EXPECT_EQ(form_at(12.0, 10.0, 0), SimdLevel::kAvx2);
    EXPECT_EQ(form_at(10.0, 12.0, 0), SimdLevel::kAvx2Vnni);
    EXPECT_EQ(form_at(10.2, 10.0, 0), SimdLevel::kAvx2Vnni) << "2 % is the timing's noise";
    return;
  }
  EXPECT_EQ(form_at(12.0, 10.0, 10.0), SimdLevel::kAvx2);
  EXPECT_EQ(form_at(10.0, 12.0, 10.0), SimdLevel::kAvx2Vnni);
  EXPECT_EQ(form_at(10.0, 10.0, 12.0), cpu_simd_level());
  EXPECT_EQ(form_at(10.2, 10.2, 10.0), cpu_simd_level()) << "2 % is the timing's noise";
  EXPECT_EQ(form_at(10.0, 10.0, 10.0), cpu_simd_level());
  EXPECT_EQ(form_at(12.2, 12.0, 10.0), SimdLevel::kAvx2Vnni) << "AVX2 within the noise of the VNNI form";
  EXPECT_EQ(form_at(13.0, 12.0, 10.0), SimdLevel::kAvx2) << "AVX2 clearly past both";
}

TEST(DecodeTuning, OneThreadDecidesBetweenFormsLevelOnAllThreads) {
  if (cpu_simd_level() < SimdLevel::kAvx512) GTEST_SKIP() << "no AVX-512 form on this CPU";
  // The Zen 4 VM's Q6_K: level on two threads at the memory's limit, the VNNI form 13 % faster alone.
  EXPECT_EQ(faster_form({15.1, 52.7, 51.9}, {7.7, 28.8, 25.5}), SimdLevel::kAvx2Vnni);
  EXPECT_EQ(faster_form({15.1, 52.7, 51.9}, {7.7, 26.0, 25.5}), cpu_simd_level()) << "2 % alone is the noise too";
  EXPECT_EQ(faster_form({15.1, 52.7, 48.0}, {7.7, 25.5, 28.8}), cpu_simd_level()) << "within the swings on all threads";
  EXPECT_EQ(faster_form({15.1, 52.7, 47.0}, {7.7, 25.5, 28.8}), SimdLevel::kAvx2Vnni) << "clearly slower on all threads";
  EXPECT_EQ(faster_form({34.1, 33.8, 32.9}, {19.4, 19.7, 27.5}), cpu_simd_level()) << "the Zen 4 VM's Q5_K";
  EXPECT_EQ(faster_form({51.5, 52.7, 51.9}, {30.0, 25.5, 28.8}), SimdLevel::kAvx2) << "all three level; AVX2 clearly past both alone";
  EXPECT_EQ(faster_form({51.5, 52.7, 51.9}, {0, 0, 28.8}), cpu_simd_level()) << "not all timed alone: the all-thread rates decide";
}

// All threads' rates alone: one thread's not timed.
StreamRequests requests_at(double near_and_far, double far_only, double none) { return faster_requests({near_and_far, far_only, none}, {}); }

TEST(DecodeTuning, FewerRequestsOnlyWhenClearlyFaster) {
  EXPECT_EQ(requests_at(10.0, 10.2, 10.2), StreamRequests::kNearAndFar) << "2 % is the timing's noise";
  EXPECT_EQ(requests_at(10.0, 9.0, 9.0), StreamRequests::kNearAndFar);
  EXPECT_EQ(requests_at(10.0, 10.5, 9.0), StreamRequests::kFar);
  EXPECT_EQ(requests_at(10.0, 9.0, 10.5), StreamRequests::kNone);
  EXPECT_EQ(requests_at(10.0, 10.5, 10.7), StreamRequests::kFar) << "none within the noise of far";
  EXPECT_EQ(requests_at(10.0, 10.5, 11.0), StreamRequests::kNone) << "none clearly past both";
}

TEST(DecodeTuning, OneThreadDecidesBetweenRequestsLevelOnAllThreads) {
  // The Zen 4 VM's Q4_0 in its AVX-512 form: level on two threads, far requests a quarter slower alone.
  EXPECT_EQ(faster_requests({33.5, 32.4, 35.3}, {23.7, 23.3, 32.5}), StreamRequests::kNone);
  EXPECT_EQ(faster_requests({33.5, 32.4, 35.3}, {31.7, 31.7, 31.0}), StreamRequests::kNearAndFar) << "level alone too";
  // The Zen 5 VM's Q8_0: far 8 % faster alone, none 11 % faster on two threads.
  EXPECT_EQ(faster_requests({30.0, 30.0, 33.3}, {27.0, 27.0, 25.0}), StreamRequests::kNone) << "clearly slower on all threads";
  EXPECT_EQ(faster_requests({31.0, 31.0, 33.3}, {25.0, 27.0, 25.0}), StreamRequests::kFar) << "within the swings on all threads";
  EXPECT_EQ(faster_requests({31.0, 31.0, 33.3}, {25.0, 0, 25.0}), StreamRequests::kNone) << "not all timed alone";
}

TEST(DecodeTuning, KeepsTheFasterFormOfEachDtypeAndCachesIt) {
  if (cpu_simd_level() < SimdLevel::kAvx2) GTEST_SKIP() << "no SIMD forms on this CPU";
  const std::string path = (std::filesystem::temp_directory_path() / ("engine-tune-" + std::to_string(getpid()) + ".txt")).string();
  ASSERT_EQ(setenv("ENGINE_CPU_TUNE_FILE", path.c_str(), 1), 0);
  const auto forms = tune_decode_forms();
  unsetenv("ENGINE_CPU_TUNE_FILE");
  ASSERT_EQ(forms.size(), some_forms().size());
  for (const DecodeForm& f : forms) {
    // Each form's figures are at the requests it keeps: the kept form's, its requests on the timed rows.
    const RequestsTiming& timed = f.rows[row_class(4096)];
    const auto kept_form_gbs = [&](const CpuFormRates& r) {
      for (const auto& [level, gbs] : form_rates(r))
        if (level == f.level) return gbs;
      return -1.0;
    };
    for (const auto& [r, requests] : {std::pair{f.all_threads, timed.all_threads}, std::pair{f.one_thread, timed.one_thread}}) {
      EXPECT_GT(r.avx2_gbs, 0) << dtype_name(f.weight);
      EXPECT_EQ(r.avx2_vnni_gbs > 0, cpu_simd_level() >= SimdLevel::kAvx2Vnni) << dtype_name(f.weight);
      EXPECT_EQ(r.avx512_gbs > 0, cpu_simd_level() >= SimdLevel::kAvx512) << dtype_name(f.weight);
      EXPECT_DOUBLE_EQ(kept_form_gbs(r), requests_rate(requests, timed.chosen)) << dtype_name(f.weight);
    }
    EXPECT_EQ(f.level, faster_form(f.all_threads, f.one_thread)) << dtype_name(f.weight);
    EXPECT_EQ(decode_level(f.weight), std::min(f.level, simd_level())) << dtype_name(f.weight);
    const auto& [first, second, last] = f.rows;
    for (const auto& [rows, r] : {std::pair{int64_t{1}, first}, std::pair{kTimedRowElements[1] - 1, first},
                                  std::pair{kTimedRowElements[1], second}, std::pair{kTimedRowElements[2] - 1, second},
                                  std::pair{kTimedRowElements[2], last}, std::pair{4 * kTimedRowElements[2], last}}) {
      for (const CpuRequestRates& rates : {r.all_threads, r.one_thread}) {
        EXPECT_GT(rates.near_and_far_gbs, 0) << dtype_name(f.weight);
        EXPECT_GT(rates.far_only_gbs, 0) << dtype_name(f.weight);
        EXPECT_GT(rates.no_requests_gbs, 0) << dtype_name(f.weight);
      }
      EXPECT_EQ(r.chosen, faster_requests(r.all_threads, r.one_thread)) << dtype_name(f.weight);
      EXPECT_EQ(decode_requests(f.weight, rows), r.chosen) << dtype_name(f.weight) << " rows of " << rows;
    }
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove(path);
  const auto cached = parse_decode_tuning(text.str());
  ASSERT_TRUE(cached.has_value()) << path << ":\n" << text.str();
  for (size_t i = 0; i < forms.size(); ++i) {
    EXPECT_EQ((*cached)[i].level, forms[i].level);
    for (size_t c = 0; c < kRowClasses; ++c) EXPECT_EQ((*cached)[i].rows[c].chosen, forms[i].rows[c].chosen);
  }
}

TEST(DecodeTuning, AWayLearnedWhileRunningIsKeptForLaterRuns) {
  if (cpu_simd_level() < SimdLevel::kAvx2) GTEST_SKIP() << "no SIMD forms on this CPU: nothing timed, no cache file";
  const std::string path = (std::filesystem::temp_directory_path() / ("engine-learned-" + std::to_string(getpid()) + ".txt")).string();
  ASSERT_EQ(setenv("ENGINE_CPU_TUNE_FILE", path.c_str(), 1), 0);
  const auto forms = tune_decode_forms();
  const auto q8_0 = std::find_if(forms.begin(), forms.end(), [](const DecodeForm& f) { return f.weight == DType::Q8_0; });
  ASSERT_NE(q8_0, forms.end());
  const StreamRequests timed = q8_0->rows[row_class(8192)].chosen;
  const StreamRequests learned = timed == StreamRequests::kNone ? StreamRequests::kFar : StreamRequests::kNone;
  keep_learned_requests(DType::Q8_0, 8192, learned);
  unsetenv("ENGINE_CPU_TUNE_FILE");
  EXPECT_EQ(decode_requests(DType::Q8_0, 8192), learned) << "backends made from now on start from it";
  EXPECT_EQ(decode_requests(DType::Q8_0, 2048), q8_0->rows[row_class(2048)].chosen) << "another row class's way is its own";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove(path);
  std::vector<DecodeForm> expected = forms;  // the timed figures and every other choice as they were
  std::find_if(expected.begin(), expected.end(), [](const DecodeForm& f) { return f.weight == DType::Q8_0; })->rows[row_class(8192)].chosen =
      learned;
  EXPECT_EQ(text.str(), decode_tuning_text(expected));
}

}  // namespace
}  // namespace engine::cpu
