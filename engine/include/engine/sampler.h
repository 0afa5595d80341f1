#pragma once
// Picks the next token from a logits vector: greedy, or top-k -> temperature softmax ->
// top-p, drawn from a seeded generator so the same seed gives the same tokens everywhere.
#include <cstdint>
#include <random>
#include <vector>

namespace engine {

struct SamplerParams {
  float temperature = 0.8f;  // <= 0: greedy argmax
  int top_k = 40;            // <= 0: all tokens
  float top_p = 0.95f;       // keep the smallest most-likely set with this much probability
  uint64_t seed = 42;
};

class Sampler {
 public:
  explicit Sampler(SamplerParams params);

  // The chosen id in [0, n_vocab). NaN logits count as -inf; ties pick the lowest id.
  // Throws Error when n_vocab <= 0.
  int32_t sample(const float* logits, int32_t n_vocab);

  const SamplerParams& params() const { return params_; }

 private:
  struct Candidate {
    int32_t id;
    float logit;
    double weight;  // unnormalized probability
  };

  SamplerParams params_;
  std::mt19937_64 rng_;
  std::vector<Candidate> candidates_;  // reused between calls
};

}  // namespace engine
