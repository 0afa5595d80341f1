// The CPU backend's fused attention (prefill and decode) against the three nodes run one by one:
// the same output bits, the pass taken only where nothing else reads the scores, and one timing
// per node.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/graph.h"
#include "engine/op_params.h"
#include "engine/plan.h"
#include "engine/quants.h"
#include "random_floats.h"

using namespace engine;

namespace {

constexpr int64_t kHead = 64, kHeads = 4, kKvHeads = 2;

// q.k under a causal mask, softmax, V product: the nodes a llama layer's attention makes.
struct Attention {
  Graph g;
  std::vector<std::vector<uint8_t>> leaves;
  Tensor* kq;
  Tensor* probs;
  Tensor* kqv;
  std::unique_ptr<Backend> backend;

  Attention(int64_t n_tokens, int64_t n_past, int64_t n_kv, int64_t heads = kHeads, int64_t kv_heads = kKvHeads) {
    const int64_t kne[3] = {kHead, n_kv, kv_heads}, qne[3] = {kHead, n_tokens, heads}, vne[3] = {n_kv, kHead, kv_heads};
    const int64_t mne[2] = {n_kv, n_tokens};
    Tensor* k = leaf(g.new_tensor(DType::F16, 3, kne, "k"), 1);
    Tensor* q = leaf(g.new_tensor(DType::F32, 3, qne, "q"), 2);
    Tensor* v = leaf(g.new_tensor(DType::F16, 3, vne, "v"), 3);
    Tensor* mask = leaf(g.new_tensor(DType::F32, 2, mne, "KQ_mask"), 0);
    auto* m = static_cast<float*>(mask->data);
    for (int64_t t = 0; t < n_tokens; ++t)
      for (int64_t j = 0; j < n_kv; ++j) m[t * n_kv + j] = j <= n_past + t ? 0.0f : -std::numeric_limits<float>::infinity();
    kq = g.mul_mat(k, q);
    set_mul_mat_params(*kq, MulMatParams{false, true, static_cast<int32_t>(n_past)});
    probs = g.soft_max(kq, mask, 0.125f);
    kqv = g.mul_mat(v, probs);
    set_mul_mat_params(*kqv, MulMatParams{true, true, static_cast<int32_t>(n_past)});
    g.expand(kqv);
    kqv->flags |= kOutput;
  }

  // Own storage for a leaf: dense random rows (seed > 0) or zeros (the mask, filled by the
  // constructor).
  Tensor* leaf(Tensor* t, uint32_t seed) {
    leaves.emplace_back(t->nbytes(), 0);
    t->data = leaves.back().data();
    if (seed == 0) return t;
    const auto x = random_floats(static_cast<size_t>(t->nelements()), seed);
    for (int64_t r = 0; r < t->nrows(); ++r)
      quantize_row(t->type, x.data() + r * t->ne[0], static_cast<char*>(t->data) + r * t->nb[1], t->ne[0]);
    return t;
  }

  // Runs the graph, each node in a slot of its own; returns kqv's bits. The scores are
  // NaN-filled first, so a pass that skips writing them leaves them NaN.
  std::vector<uint8_t> run(int threads, Profiler* profiler = nullptr) {
    Plan plan;
    for (const Tensor* node : g.nodes()) {
      plan.offsets[node] = plan.buffer_size;
      plan.buffer_size += (node->nbytes() + Plan::kAlignment - 1) / Plan::kAlignment * Plan::kAlignment;
    }
    backend = make_cpu_backend(threads);  // kept: it owns the nodes' storage
    backend->allocate(g, plan);
    std::memset(kq->data, 0xff, kq->nbytes());
    backend->compute(g, profiler);
    const auto* p = static_cast<const uint8_t*>(kqv->data);
    return {p, p + kqv->nbytes()};
  }

  bool scores_written() const {
    const auto* f = static_cast<const float*>(kq->data);
    return !std::isnan(f[0]);
  }
};

}  // namespace

TEST(FusedAttention, SameBitsAsTheNodesOneByOne) {
  for (int64_t n_past : {0, 37})
    for (int64_t n_tokens : {2, 64, 150})
      for (int threads : {1, 2, 3}) {
        const int64_t n_kv = (n_past + n_tokens + 31) / 32 * 32;
        SCOPED_TRACE("n_past " + std::to_string(n_past) + " tokens " + std::to_string(n_tokens) + " threads " +
                     std::to_string(threads));
        Attention fused(n_tokens, n_past, n_kv), nodes(n_tokens, n_past, n_kv);
        nodes.kq->flags |= kOutput;  // a reader outside the three nodes: they run one by one
        const auto want = nodes.run(threads), got = fused.run(threads);
        EXPECT_TRUE(nodes.scores_written());
        EXPECT_FALSE(fused.scores_written()) << "the fused pass did not run";
        ASSERT_EQ(want.size(), got.size());
        EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size()));
      }
}

// One token over the cache: each thread takes whole K / V heads and their query heads' group as
// one tile's columns, the cache past the token masked (groups of 32 heads: a thread holds two K
// heads' scores at a time); with more threads than K heads the nodes run one by one.
TEST(FusedAttention, DecodeGivesTheNodesBits) {
  for (int64_t group : {2, 4, 32})
    for (int64_t n_past : {0, 37, 200})
      for (int threads : {1, 2, 3, 5}) {
        constexpr int64_t kv_heads = 4;
        const int64_t n_kv = (n_past + 1 + 31) / 32 * 32;
        SCOPED_TRACE("group " + std::to_string(group) + " n_past " + std::to_string(n_past) + " threads " +
                     std::to_string(threads));
        Attention fused(1, n_past, n_kv, group * kv_heads, kv_heads), nodes(1, n_past, n_kv, group * kv_heads, kv_heads);
        nodes.kq->flags |= kOutput;
        const auto want = nodes.run(threads), got = fused.run(threads);
        EXPECT_TRUE(nodes.scores_written());
        EXPECT_EQ(threads <= kv_heads, !fused.scores_written()) << "the fused pass runs where every thread has a K head";
        ASSERT_EQ(want.size(), got.size());
        EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size()));
      }
}

// A K head per query head has no group to make a tile of; 80 query heads on one K head would need
// more work memory than a prefill block.
TEST(FusedAttention, DecodeRunsTheNodesWithoutGroupsOrWithOnesTooLarge) {
  for (int64_t heads : {int64_t{kKvHeads}, 80 * int64_t{kKvHeads}}) {
    Attention a(1, 20, 32, heads, kKvHeads);
    a.run(2);
    EXPECT_TRUE(a.scores_written()) << heads << " query heads";
  }
}

// A node after the three reading the scores or the probabilities needs them written.
TEST(FusedAttention, NotWhereALaterNodeReadsTheScoresOrProbabilities) {
  for (bool scores : {true, false})
    for (int64_t n_tokens : {int64_t{1}, int64_t{96}}) {
      Attention a(n_tokens, 0, 96, 8, 2);
      Tensor* reader = a.g.scale(scores ? a.kq : a.probs, 2.0f);
      reader->flags |= kOutput;
      a.g.expand(reader);
      a.run(2);
      EXPECT_TRUE(a.scores_written()) << (scores ? "scores" : "probabilities") << " read, " << n_tokens << " tokens";
    }
}

TEST(FusedAttention, RecordsOneTimingPerNode) {
  Attention a(96, 0, 96);
  Profiler profiler;
  a.run(2, &profiler);
  ASSERT_FALSE(a.scores_written());
  const auto& nodes = a.g.nodes();
  ASSERT_EQ(profiler.records().size(), nodes.size());
  uint64_t attention_ns = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_EQ(profiler.records()[i].name, nodes[i]->name);
    attention_ns += profiler.records()[i].ns;
  }
  EXPECT_GT(attention_ns, 0u);
}
