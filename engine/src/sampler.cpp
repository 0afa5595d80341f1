#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "engine/error.h"

namespace engine {
namespace {

float sanitized(float logit) { return std::isnan(logit) ? -std::numeric_limits<float>::infinity() : logit; }

// Uniform in [0, 1) from the top 53 bits of one draw; std::uniform_real_distribution
// differs between standard libraries.
double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace

Sampler::Sampler(SamplerParams params) : params_(params), rng_(params.seed) {}

int32_t Sampler::sample(const float* logits, int32_t n_vocab) {
  if (n_vocab <= 0) throw Error("sampler: n_vocab must be positive, got " + std::to_string(n_vocab));

  if (!(params_.temperature > 0.0f)) {
    int32_t best = 0;
    for (int32_t i = 1; i < n_vocab; ++i) {
      if (sanitized(logits[i]) > sanitized(logits[best])) best = i;
    }
    return best;
  }

  candidates_.clear();
  for (int32_t i = 0; i < n_vocab; ++i) candidates_.push_back({i, sanitized(logits[i]), 0.0});
  const auto higher = [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  const size_t k = params_.top_k > 0 ? std::min<size_t>(params_.top_k, candidates_.size()) : candidates_.size();
  std::partial_sort(candidates_.begin(), candidates_.begin() + k, candidates_.end(), higher);
  candidates_.resize(k);

  // exp((logit - max) / T); equal-to-max terms are 1 so that +inf logits stay finite.
  const float max = candidates_.front().logit;
  if (max == -std::numeric_limits<float>::infinity()) return candidates_.front().id;
  double sum = 0;
  for (Candidate& c : candidates_) {
    c.weight = c.logit == max ? 1.0 : std::exp(static_cast<double>(c.logit - max) / params_.temperature);
    sum += c.weight;
  }

  // Nucleus: the shortest prefix whose probability reaches top_p (at least one token).
  size_t kept = 0;
  double kept_mass = 0;
  while (kept < k) {
    kept_mass += candidates_[kept].weight;
    ++kept;
    if (kept_mass >= params_.top_p * sum) break;
  }

  const double target = uniform01(rng_) * kept_mass;
  double cumulative = 0;
  for (size_t i = 0; i < kept; ++i) {
    cumulative += candidates_[i].weight;
    if (target < cumulative) return candidates_[i].id;
  }
  return candidates_[kept - 1].id;
}

}  // namespace engine
