// Sessions on several threads over one loaded model: each produces, bit for bit, the logits a
// session alone produces for its prompt (no state crosses between sessions).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include "engine/session.h"
#include "test_models.h"

using namespace engine;

namespace {

// The logits after the prompt and after each of n greedy decode steps.
std::vector<std::vector<float>> greedy_logits(Session& s, const std::vector<int32_t>& prompt, int n) {
  std::vector<std::vector<float>> out;
  std::span<const float> logits = s.prefill(prompt);
  for (int i = 0;; ++i) {
    out.emplace_back(logits.begin(), logits.end());
    if (i == n) return out;
    const auto next = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    logits = s.decode(next);
  }
}

}  // namespace

TEST(ConcurrentSessions, ShareOneModelAndMatchASessionAlone) {
  const std::shared_ptr<const Model> model = Model::load(test_models::synthetic_model(DType::Q4_0));
  SessionParams params;
  params.n_ctx = 64;
  params.n_threads = 2;  // each session its own pool of workers
  const std::vector<std::vector<int32_t>> prompts = {{1, 300, 17}, {1, 42, 99, 7, 250}, {1, 5}, {1, 260, 261, 262, 263, 264}};
  constexpr int kSteps = 12;
  std::vector<std::vector<std::vector<float>>> alone;
  for (const auto& prompt : prompts) alone.push_back(greedy_logits(*Session::create(model, params), prompt, kSteps));

  std::vector<std::vector<std::vector<float>>> together(prompts.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < prompts.size(); ++i)
    threads.emplace_back([&, i] {
      const auto session = Session::create(model, params);
      for (int round = 0; round < 3; ++round) {  // a session reused after reset() too
        together[i] = greedy_logits(*session, prompts[i], kSteps);
        session->reset();
      }
    });
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < prompts.size(); ++i) {
    ASSERT_EQ(together[i].size(), alone[i].size());
    for (size_t step = 0; step < alone[i].size(); ++step)
      EXPECT_EQ(together[i][step], alone[i][step]) << "prompt " << i << " step " << step;
  }
  EXPECT_NE(alone[0].back(), alone[1].back());
}
