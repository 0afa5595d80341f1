#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>

#include "engine/error.h"

using namespace engine;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

SamplerParams params(float temperature, int top_k, float top_p, uint64_t seed = 1) {
  SamplerParams p;
  p.temperature = temperature;
  p.top_k = top_k;
  p.top_p = top_p;
  p.seed = seed;
  return p;
}

const std::vector<float> kLogits = {0.5f, 2.0f, -1.0f, 1.9f, 0.0f, 1.0f, 3.0f, 2.9f};
constexpr int32_t kArgmax = 6;

}  // namespace

TEST(Sampler, GreedyPicksArgmaxLowestIdOnTies) {
  Sampler greedy(params(0.0f, 40, 0.95f));
  EXPECT_EQ(greedy.sample(kLogits.data(), 8), kArgmax);
  const std::vector<float> tied = {1.0f, 3.0f, 2.0f, 3.0f};
  EXPECT_EQ(greedy.sample(tied.data(), 4), 1);
  Sampler negative(params(-1.0f, 0, 1.0f));
  EXPECT_EQ(negative.sample(tied.data(), 4), 1);
}

TEST(Sampler, TopKOneEqualsGreedyAtAnyTemperature) {
  for (float t : {0.1f, 1.0f, 5.0f, 1000.0f}) {
    Sampler s(params(t, 1, 1.0f));
    for (int i = 0; i < 50; ++i) EXPECT_EQ(s.sample(kLogits.data(), 8), kArgmax) << "temperature " << t;
  }
}

TEST(Sampler, TinyTopPPicksArgmax) {
  Sampler s(params(1.0f, 0, 1e-6f));
  for (int i = 0; i < 50; ++i) EXPECT_EQ(s.sample(kLogits.data(), 8), kArgmax);
}

TEST(Sampler, TopKKeepsOnlyTheKBest) {
  Sampler s(params(100.0f, 2, 1.0f));
  std::array<int, 8> seen{};
  for (int i = 0; i < 400; ++i) ++seen[s.sample(kLogits.data(), 8)];
  EXPECT_EQ(seen[6] + seen[7], 400);
  EXPECT_GT(seen[6], 0);
  EXPECT_GT(seen[7], 0);
}

TEST(Sampler, SameSeedSameDrawsDifferentSeedDiffers) {
  Sampler a(params(1.0f, 0, 1.0f, 7)), b(params(1.0f, 0, 1.0f, 7)), c(params(1.0f, 0, 1.0f, 8));
  bool differs = false;
  for (int i = 0; i < 200; ++i) {
    const int32_t x = a.sample(kLogits.data(), 8);
    EXPECT_EQ(x, b.sample(kLogits.data(), 8)) << "draw " << i;
    differs = differs || x != c.sample(kLogits.data(), 8);
  }
  EXPECT_TRUE(differs);
}

TEST(Sampler, DrawsFollowSoftmaxProbabilities) {
  const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  Sampler s(params(1.0f, 0, 1.0f, 123));
  constexpr int kDraws = 20000;
  std::array<int, 3> seen{};
  for (int i = 0; i < kDraws; ++i) ++seen[s.sample(logits.data(), 3)];
  EXPECT_NEAR(seen[0] / double(kDraws), 0.5, 0.03);
  EXPECT_NEAR(seen[1] / double(kDraws), 0.3, 0.03);
  EXPECT_NEAR(seen[2] / double(kDraws), 0.2, 0.03);
}

TEST(Sampler, TopPDropsTheUnlikelyTail) {
  // Probabilities 0.5, 0.3, 0.2: top_p 0.7 keeps the first two.
  const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  Sampler s(params(1.0f, 0, 0.7f, 5));
  std::array<int, 3> seen{};
  for (int i = 0; i < 2000; ++i) ++seen[s.sample(logits.data(), 3)];
  EXPECT_EQ(seen[2], 0);
  EXPECT_GT(seen[0], seen[1]);
  EXPECT_GT(seen[1], 0);
}

TEST(Sampler, NonFiniteLogitsDoNotCrash) {
  const std::vector<float> mixed = {kNaN, 1.0f, kInf, -kInf, 5.0f};
  Sampler greedy(params(0.0f, 0, 1.0f));
  EXPECT_EQ(greedy.sample(mixed.data(), 5), 2);
  Sampler s(params(1.0f, 0, 0.95f));
  for (int i = 0; i < 20; ++i) EXPECT_EQ(s.sample(mixed.data(), 5), 2);

  const std::vector<float> all_nan = {kNaN, kNaN, kNaN};
  const std::vector<float> all_neg_inf = {-kInf, -kInf, -kInf};
  for (const auto* logits : {&all_nan, &all_neg_inf}) {
    const int32_t id = s.sample(logits->data(), 3);
    EXPECT_GE(id, 0);
    EXPECT_LT(id, 3);
    EXPECT_EQ(greedy.sample(logits->data(), 3), 0);
  }
}

TEST(Sampler, RejectsEmptyVocab) {
  Sampler s(params(1.0f, 40, 0.95f));
  EXPECT_THROW(s.sample(kLogits.data(), 0), Error);
}
