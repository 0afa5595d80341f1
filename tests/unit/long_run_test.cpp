// Long library use: sessions made and dropped in a loop over one model, and generations run to the
// context limit again and again, keep the process's resident memory flat once warm; a full context
// refuses another token with an Error and reads nothing past the KV cache (the ASan build checks that).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "engine/error.h"
#include "engine/session.h"
#include "test_models.h"

using namespace engine;

namespace {

// Resident memory now (/proc/self/statm), in bytes.
size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

int32_t greedy(std::span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

// AddressSanitizer keeps freed memory in quarantine: resident memory grows there by design.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMemoryFigures = false;
#else
constexpr bool kMemoryFigures = true;
#endif
constexpr size_t kMiB = 1 << 20;

}  // namespace

TEST(LongRun, SessionsMadeAndDroppedInALoopKeepMemoryFlat) {
  const std::shared_ptr<const Model> model = Model::load(test_models::synthetic_model(DType::Q4_0));
  SessionParams params;
  params.n_ctx = 64;
  params.n_threads = 2;
  const std::vector<int32_t> prompt = {1, 300, 17, 42, 99};
  auto one_session = [&] {
    auto session = Session::create(model, params);
    int32_t token = greedy(session->prefill(prompt));
    for (int i = 0; i < 27; ++i) token = greedy(session->decode(token));
    return token;
  };
  constexpr int kWarmUp = 10, kSessions = 100;
  int32_t first = 0;
  for (int i = 0; i < kWarmUp; ++i) first = one_session();
  const size_t warm = resident_bytes();
  for (int i = 0; i < kSessions; ++i) ASSERT_EQ(one_session(), first) << "session " << i << " generated differently";
  const size_t after = resident_bytes();
  std::printf("resident memory: %zu bytes after %d sessions, %zu after %d more (32 tokens each)\n", warm, kWarmUp,
              after, kSessions);
  if (kMemoryFigures) {
    EXPECT_LT(after, warm + kMiB) << "resident memory grew over " << kSessions << " sessions";
  }
}

TEST(LongRun, GenerationsToTheContextLimitEndCleanlyAndKeepMemoryFlat) {
  const std::shared_ptr<const Model> model = Model::load(test_models::synthetic_model(DType::Q4_0));
  SessionParams params;
  params.n_ctx = 1024;
  params.n_threads = 2;
  auto session = Session::create(model, params);
  constexpr int kPasses = 3;
  size_t after_first = 0;
  for (int pass = 0; pass < kPasses; ++pass) {
    session->reset();
    int32_t token = greedy(session->prefill(std::vector<int32_t>{1, 300, 17}));
    while (session->n_past() < session->n_ctx()) token = greedy(session->decode(token));
    EXPECT_THROW(
        {
          try {
            session->decode(token);
          } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("context of 1024 tokens is full"), std::string::npos) << e.what();
            throw;
          }
        },
        Error);
    EXPECT_EQ(session->n_past(), session->n_ctx()) << "a refused token moved the position";
    EXPECT_THROW(session->prefill(std::vector<int32_t>{1}), Error);
    if (pass == 0) after_first = resident_bytes();
  }
  const size_t after = resident_bytes();
  std::printf("resident memory: %zu bytes after one generation of %lld tokens, %zu after %d\n", after_first,
              static_cast<long long>(session->n_ctx()), after, kPasses);
  if (kMemoryFigures) {
    EXPECT_LT(after, after_first + kMiB) << "resident memory grew over " << kPasses << " generations";
  }
}
