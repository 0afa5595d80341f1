// The decode products' stream requests learned from the steps' own times
// (kernels/cpu/requests_learner.h), fed steps whose speed each test sets.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <tuple>
#include <vector>

#include "cpu/decode_tuning.h"
#include "cpu/requests_learner.h"

namespace engine::cpu {
namespace {

constexpr DType kWeight = DType::Q8_0;
constexpr int64_t kRow = 2048;
constexpr size_t kBytes = size_t{1} << 24;

// Runs `steps` steps of one product job each, at gbs(step, way) GB/s; returns the ways the steps ran.
std::vector<StreamRequests> run_steps(RequestsLearner& learner, int steps, const std::function<double(int, StreamRequests)>& gbs,
                                      int first_step = 0) {
  std::vector<StreamRequests> ran;
  for (int s = first_step; s < first_step + steps; ++s) {
    const StreamRequests way = learner.requests(kWeight, kRow);
    learner.record(kWeight, kRow, kBytes, static_cast<uint64_t>(static_cast<double>(kBytes) / gbs(s, way)));
    learner.end_step();
    ran.push_back(way);
  }
  return ran;
}

StreamRequests another_way(StreamRequests way) { return way == StreamRequests::kNone ? StreamRequests::kFar : StreamRequests::kNone; }

TEST(RequestsLearner, TriesTheOtherWaysOneStepInAPeriodAndKeepsTheTimedOneWhenNoneIsFaster) {
  RequestsLearner learner(true);
  const StreamRequests timed = decode_requests(kWeight, kRow);
  const int steps = 8 * static_cast<int>(RequestsLearner::kTrialPeriod);
  const auto ran = run_steps(learner, steps, [](int, StreamRequests) { return 40.0; });
  std::set<StreamRequests> tried;
  size_t first_trials = 0;  // until both other ways have kMinTrials each, one step in kFirstTrialPeriod
  int later_trials = 0;     // then one step in kTrialPeriod at most
  for (int s = 0; s < steps; ++s) {
    if (ran[s] == timed) continue;
    tried.insert(ran[s]);
    const bool first = first_trials < 2 * RequestsLearner::kMinTrials;
    const uint64_t period = first ? RequestsLearner::kFirstTrialPeriod : RequestsLearner::kTrialPeriod;
    EXPECT_EQ(static_cast<uint64_t>(s) % period, period - 1) << "step " << s;
    if (first) {
      EXPECT_LT(static_cast<uint64_t>(s), 2 * RequestsLearner::kMinTrials * RequestsLearner::kFirstTrialPeriod) << "step " << s;
      ++first_trials;
    } else {
      ++later_trials;
    }
  }
  EXPECT_EQ(first_trials, 2 * RequestsLearner::kMinTrials);
  const int later_periods = (steps - static_cast<int>(2 * RequestsLearner::kMinTrials * RequestsLearner::kFirstTrialPeriod)) /
                            static_cast<int>(RequestsLearner::kTrialPeriod);
  EXPECT_GE(later_trials, later_periods - 2);
  EXPECT_LE(later_trials, later_periods + 1);
  EXPECT_EQ(tried.size(), 2u);  // both other ways
  EXPECT_EQ(learner.kept(kWeight, kRow), timed);
}

TEST(RequestsLearner, KeepsAWayThatStreamsFasterThanTheNoise) {
  std::vector<std::tuple<DType, int64_t, StreamRequests>> handed_on;
  RequestsLearner learner(true, [&](DType weight, int64_t row_elements, StreamRequests kept) {
    handed_on.emplace_back(weight, row_elements, kept);
  });
  const StreamRequests faster = another_way(decode_requests(kWeight, kRow));
  const auto gbs = [&](int, StreamRequests way) { return way == faster ? 46.0 : 40.0; };
  // Each other way is tried every second trial, one step in kFirstTrialPeriod at first;
  // kMinTrials of the faster one decide.
  const int enough = static_cast<int>(2 * RequestsLearner::kMinTrials * RequestsLearner::kFirstTrialPeriod);
  run_steps(learner, enough, gbs);
  EXPECT_EQ(learner.kept(kWeight, kRow), faster);
  ASSERT_EQ(handed_on.size(), 1u) << "the way kept is handed on once, for the next run to start from";
  EXPECT_EQ(handed_on[0], std::make_tuple(kWeight, kRow, faster));
  const auto after = run_steps(learner, static_cast<int>(RequestsLearner::kFirstTrialPeriod) - 1, gbs, enough);
  for (StreamRequests way : after) EXPECT_EQ(way, faster);
  // Another dtype's and another row class's products are their own.
  EXPECT_EQ(learner.kept(DType::Q4_0, kRow), decode_requests(DType::Q4_0, kRow));
  EXPECT_EQ(learner.kept(kWeight, 8192), decode_requests(kWeight, 8192));
}

TEST(RequestsLearner, AWayWithinTheNoiseIsNotKept) {
  RequestsLearner learner(true);
  const StreamRequests timed = decode_requests(kWeight, kRow);
  run_steps(learner, 20 * static_cast<int>(RequestsLearner::kTrialPeriod),
            [&](int, StreamRequests way) { return way == timed ? 40.0 : 40.8; });  // 2 % faster
  EXPECT_EQ(learner.kept(kWeight, kRow), timed);
}

TEST(RequestsLearner, TheMemorysChangeOfSpeedBetweenTrialsDoesNotCount) {
  // Every way streams alike, the host's memory 60 % faster in every other stretch of 37 steps: a
  // trial set against figures of the other speed would take a way for faster than it is.
  RequestsLearner learner(true);
  const StreamRequests timed = decode_requests(kWeight, kRow);
  for (int stretch = 0; stretch < 12; ++stretch) {
    run_steps(learner, 37, [&](int, StreamRequests) { return stretch % 2 ? 64.0 : 40.0; }, 37 * stretch);
    EXPECT_EQ(learner.kept(kWeight, kRow), timed) << "after stretch " << stretch;
  }
}

TEST(RequestsLearner, AClearlySlowerWayIsTriedMoreRarelyUntilItIsNot) {
  RequestsLearner learner(true);
  const StreamRequests timed = decode_requests(kWeight, kRow);
  const StreamRequests slow = another_way(timed);
  const int period = static_cast<int>(RequestsLearner::kTrialPeriod), steps = 64 * period;
  const auto ran = run_steps(learner, steps, [&](int, StreamRequests way) { return way == slow ? 20.0 : 40.0; });
  const auto count = [&](StreamRequests way) { return std::count(ran.begin(), ran.end(), way); };
  // Every other trial step at the usual spacing (32 trials); apart from the first few, one in
  // kMostSpacing of those.
  EXPECT_LE(count(slow), 12);
  EXPECT_GE(count(slow), 5);
  EXPECT_NEAR(static_cast<int>(steps - count(timed) - count(slow)), steps / period / 2, 3);  // the third way as usual
  EXPECT_EQ(learner.kept(kWeight, kRow), timed);
  // Once it streams faster, it is kept within a few of its sparse trials.
  run_steps(learner, 48 * period, [&](int, StreamRequests way) { return way == slow ? 48.0 : 40.0; }, steps);
  EXPECT_EQ(learner.kept(kWeight, kRow), slow);
}

TEST(RequestsLearner, OffKeepsTheTimedChoice) {
  RequestsLearner learner(false);
  const StreamRequests timed = decode_requests(kWeight, kRow);
  const StreamRequests faster = another_way(timed);
  const auto ran = run_steps(learner, 10 * static_cast<int>(RequestsLearner::kTrialPeriod),
                             [&](int, StreamRequests way) { return way == faster ? 80.0 : 40.0; });
  for (StreamRequests way : ran) EXPECT_EQ(way, timed);
  EXPECT_EQ(learner.kept(kWeight, kRow), timed);
}

}  // namespace
}  // namespace engine::cpu
