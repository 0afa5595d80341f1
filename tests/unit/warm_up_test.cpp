// Session::warm_up leaves no trace: on every backend built in, the prompt and the decode steps
// after it compute the logits of a session that never warmed up, bit for bit, though its tokens
// sit in the KV cache positions they reuse; its steps are gone from the timings and the profile;
// and it refuses to run once the session has run a step of its own.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "backend_param.h"
#include "engine/error.h"
#include "engine/session.h"
#include "test_models.h"

namespace {

using namespace engine;

SessionParams small_session(bool profile = false, const std::string& backend = "cpu") {
  SessionParams params;
  params.backend = backend;
  params.n_ctx = 64;
  params.n_threads = 2;
  params.profile = profile;
  return params;
}

// The logits of a 5-token prompt (shorter than the warm-up's, so its attention span covers
// positions the warm-up wrote) and of 4 decode steps after it.
std::vector<std::vector<float>> logits_after(const std::string& backend, const std::string& path, bool warm_up) {
  auto session = Session::create(path, small_session(false, backend));
  if (warm_up) session->warm_up();
  std::vector<std::vector<float>> out;
  auto keep = [&](std::span<const float> logits) { out.emplace_back(logits.begin(), logits.end()); };
  keep(session->prefill(std::vector<int32_t>{3, 41, 7, 99, 12}));
  for (int32_t token = 100; token < 104; ++token) keep(session->decode(token));
  return out;
}

class WarmUpOn : public test_backends::EachBackend {};

TEST_P(WarmUpOn, LaterStepsComputeWhatASessionWithoutItComputes) {
  for (const std::string& path : {test_models::synthetic_model(DType::Q4_0), test_models::synthetic_gpt2_model(true)}) {
    SCOPED_TRACE(path);
    EXPECT_EQ(logits_after(GetParam(), path, true), logits_after(GetParam(), path, false));
  }
}

INSTANTIATE_TEST_SUITE_P(EveryKnownBackend, WarmUpOn, ::testing::ValuesIn(known_backends()), test_backends::param_name);

TEST(WarmUp, ItsStepsAreGoneFromTheTimingsAndTheProfile) {
  auto session = Session::create(test_models::synthetic_model(DType::Q4_0), small_session(true));
  const double ms = session->warm_up();
  EXPECT_GT(ms, 0.0);
  EXPECT_EQ(session->timings().warm_up_ms, ms);
  EXPECT_GT(session->timings().load_ms, 0.0);
  EXPECT_EQ(session->timings().prefill_tokens, 0);
  EXPECT_EQ(session->timings().decode_tokens, 0);
  EXPECT_EQ(session->n_past(), 0);
  EXPECT_TRUE(session->steps().empty());
  EXPECT_TRUE(session->profiler().records().empty());
  session->prefill(std::vector<int32_t>{3, 41, 7});
  EXPECT_EQ(session->steps().size(), 1u);
}

TEST(WarmUp, IsRefusedAfterTheSessionsOwnSteps) {
  auto session = Session::create(test_models::synthetic_model(DType::Q4_0), small_session());
  session->decode(5);
  session->reset();
  EXPECT_THROW(session->warm_up(), Error);
}

}  // namespace
