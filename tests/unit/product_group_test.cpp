// Decode's products of one column run as one job on the CPU (kernels/cpu/schedule.h): the plan
// keeps them live from the first, the schedule groups them only where that is safe, and each
// output has the bits of its product run alone.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cpu/schedule.h"
#include "cpu/vec_dot.h"
#include "engine/arch.h"
#include "engine/backend.h"
#include "engine/graph.h"
#include "engine/plan.h"
#include "engine/quants.h"
#include "random_floats.h"
#include "test_models.h"

using namespace engine;

namespace {

constexpr int64_t kK = 256;

// Leaves with storage of their own: dense random rows.
struct Leaves {
  std::vector<std::vector<uint8_t>> bytes;

  Tensor* add(Tensor* t, uint32_t seed) {
    bytes.emplace_back(t->nbytes(), 0);
    t->data = bytes.back().data();
    const auto x = random_floats(static_cast<size_t>(t->nelements()), seed);
    for (int64_t r = 0; r < t->nrows(); ++r)
      quantize_row(t->type, x.data() + r * t->ne[0], static_cast<char*>(t->data) + r * t->nb[1], t->ne[0]);
    return t;
  }
};

struct WeightSpec {
  DType type;
  int64_t rows;
};

// Products of one column x by each weight, a node reading the first product between the first
// and the second, as a layer's Q, its rope, then K and V: nodes 0, 1, 2, 3, ...
struct Siblings {
  Graph g;
  Leaves leaves;
  std::vector<Tensor*> products;
  Tensor* between;

  explicit Siblings(const std::vector<WeightSpec>& weights, int64_t columns = 1) {
    Tensor* x = leaves.add(g.new_tensor_2d(DType::F32, kK, columns, "x"), 1);
    for (size_t i = 0; i < weights.size(); ++i) {
      Tensor* w = leaves.add(g.new_tensor_2d(weights[i].type, kK, weights[i].rows, "w" + std::to_string(i)),
                             static_cast<uint32_t>(2 + i));
      products.push_back(g.mul_mat(w, x));
      if (i == 0) between = g.scale(products[0], 0.5f);
      Tensor* out = i == 0 ? between : products[i];
      out->flags |= kOutput;
      g.expand(out);
    }
  }

  std::vector<size_t> indices() const {
    std::vector<size_t> out;
    for (const Tensor* p : products)
      for (size_t i = 0; i < g.nodes().size(); ++i)
        if (g.nodes()[i] == p) out.push_back(i);
    return out;
  }
};

std::vector<uint8_t> bits(const Tensor* t) {
  const auto* p = static_cast<const uint8_t*>(t->data);
  return {p, p + t->nbytes()};
}

// Runs `g` on `threads` threads as the plan places it; the backend is returned: it owns the storage.
std::unique_ptr<Backend> run(Graph& g, int threads, Profiler* profiler = nullptr) {
  auto backend = make_cpu_backend(threads);
  backend->allocate(g, Plan::make(g));
  backend->compute(g, profiler);
  return backend;
}

// Product i of `weights` alone in a graph of its own.
std::vector<uint8_t> alone(const std::vector<WeightSpec>& weights, size_t i, int threads) {
  Siblings one({weights[i]});
  // The same random rows as in the group: weight i was seeded 2 + i there.
  Tensor* w = one.products[0]->src[0];
  const auto x = random_floats(static_cast<size_t>(w->nelements()), static_cast<uint32_t>(2 + i));
  for (int64_t r = 0; r < w->nrows(); ++r)
    quantize_row(w->type, x.data() + r * w->ne[0], static_cast<char*>(w->data) + r * w->nb[1], w->ne[0]);
  const auto backend = run(one.g, threads);
  return bits(one.products[0]);
}

}  // namespace

TEST(ProductGroup, PlanKeepsSiblingsLiveFromTheFirst) {
  Siblings s({{DType::Q4_0, 64}, {DType::Q4_0, 32}, {DType::Q8_0, 32}});
  const std::vector<size_t> at = s.indices();
  ASSERT_EQ(at, (std::vector<size_t>{0, 2, 3}));
  const std::vector<size_t> first = Plan::first_siblings(s.g.nodes());
  for (size_t j : at) EXPECT_EQ(first[j], 0u);
  EXPECT_EQ(first[1], 1u) << "the scale is no product";
  for (const Lifetime& l : Plan::lifetimes(s.g)) {
    if (l.tensor == s.products[1] || l.tensor == s.products[2]) {
      EXPECT_EQ(l.first, 0u) << l.tensor->name;
    }
  }

  Siblings two_columns({{DType::Q4_0, 64}, {DType::Q4_0, 32}}, 2);
  EXPECT_EQ(Plan::first_siblings(two_columns.g.nodes())[2], 2u) << "a prompt's products are no siblings";
}

TEST(ProductGroup, PlanChainsSiblingsWithinTheWindowOfTheLastOne) {
  Graph g;
  Leaves leaves;
  Tensor* x = leaves.add(g.new_tensor_1d(DType::F32, kK, "x"), 1);
  const auto product = [&](uint32_t seed) {
    Tensor* y = g.mul_mat(leaves.add(g.new_tensor_2d(DType::Q8_0, kK, 32, "w"), seed), x);
    y->flags |= kOutput;
    g.expand(y);
    return g.nodes().size() - 1;
  };
  const auto unrelated = [&](size_t n) {
    for (size_t i = 0; i < n; ++i) g.expand(g.scale(leaves.add(g.new_tensor_1d(DType::F32, 8, "z"), 9), 2.0f));
  };
  const size_t first = product(2);
  unrelated(Plan::kSiblingWindow - 1);
  const size_t second = product(3);  // kSiblingWindow after the first
  unrelated(Plan::kSiblingWindow - 1);
  const size_t third = product(4);  // 2 * kSiblingWindow after the first, kSiblingWindow after the second
  unrelated(Plan::kSiblingWindow);
  const size_t alone = product(5);  // kSiblingWindow + 1 after the third
  const std::vector<size_t> chain = Plan::first_siblings(g.nodes());
  EXPECT_EQ(chain[second], first);
  EXPECT_EQ(chain[third], first);
  EXPECT_EQ(chain[alone], alone);
}

// Weights in one dot format run together whatever their rows (not whole row blocks included);
// a weight in another format runs alone, at its own place.
TEST(ProductGroup, EachOutputHasTheBitsOfItsProductAlone) {
  const std::vector<std::vector<WeightSpec>> sets = {
      {{DType::Q4_0, 160}, {DType::Q4_0, 48}, {DType::Q8_0, 40}},
      {{DType::Q4_K, 96}, {DType::Q6_K, 64}, {DType::Q4_K, 32}},
      {{DType::Q4_1, 64}, {DType::Q4_1, 200}},
      {{DType::F16, 80}, {DType::F16, 16}, {DType::F16, 33}},
      {{DType::F32, 64}, {DType::F32, 64}},
      {{DType::Q4_0, 64}, {DType::Q4_K, 64}, {DType::Q4_0, 64}},
  };
  for (const auto& weights : sets)
    for (int threads : {1, 2, 3}) {
      std::string name;
      for (const WeightSpec& w : weights) name += std::string(dtype_name(w.type)) + "x" + std::to_string(w.rows) + " ";
      SCOPED_TRACE(name + "threads " + std::to_string(threads));
      Siblings s(weights);
      const Plan plan = Plan::make(s.g);
      std::vector<size_t> expected;
      for (size_t i = 0; i < weights.size(); ++i)
        if (cpu::vec_dot_type(weights[i].type) == cpu::vec_dot_type(weights[0].type)) expected.push_back(s.indices()[i]);
      EXPECT_EQ(cpu::schedule(s.g.nodes(), plan, threads).groups[0], expected);
      const auto backend = run(s.g, threads);
      for (size_t i = 0; i < weights.size(); ++i) EXPECT_EQ(bits(s.products[i]), alone(weights, i, threads)) << "product " << i;
    }
}

TEST(ProductGroup, NotWhereANodeBetweenUsesTheBytesOfALaterOutput) {
  Siblings s({{DType::Q8_0, 64}, {DType::Q8_0, 16}, {DType::Q8_0, 16}});
  Plan plan = Plan::make(s.g);
  EXPECT_EQ(cpu::schedule(s.g.nodes(), plan, 2).groups[0], (std::vector<size_t>{0, 2, 3}));
  plan.offsets[s.products[2]] = plan.offsets.at(s.between);  // the last product over the scale's output
  EXPECT_EQ(cpu::schedule(s.g.nodes(), plan, 2).groups[0], (std::vector<size_t>{0, 2}));
  EXPECT_FALSE(cpu::schedule(s.g.nodes(), plan, 2).grouped[3]);
}

TEST(ProductGroup, RecordsOneTimingPerNode) {
  Siblings s({{DType::Q8_0, 512}, {DType::Q8_0, 256}, {DType::Q8_0, 256}});
  Profiler profiler;
  const auto backend = run(s.g, 2, &profiler);
  const auto& nodes = s.g.nodes();
  ASSERT_EQ(profiler.records().size(), nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_EQ(profiler.records()[i].node, static_cast<int>(i));
    EXPECT_EQ(profiler.records()[i].name, nodes[i]->name);
  }
  EXPECT_GT(profiler.records()[0].ns, 0u);
  EXPECT_GT(profiler.records()[2].ns, 0u) << "a product run early has its share of the job's time";
}

// A llama decode step groups each layer's Q, K and V, and its gate and up.
TEST(ProductGroup, LlamaDecodeGroupsQkvAndGateUp) {
  auto model = Model::load(test_models::synthetic_model(DType::Q4_0));
  KVCache kv(model->hparams(), 64, DType::F16);
  for (int64_t tokens : {1, 8}) {
    StepGraph step = build_step_graph(*model, kv, StepShape{tokens, 0, 1});
    const auto& nodes = step.graph->nodes();
    const cpu::Schedule together = cpu::schedule(nodes, Plan::make(*step.graph), 2);
    std::vector<std::string> groups;
    for (const auto& group : together.groups) {
      if (group.empty()) continue;
      std::string names;
      for (size_t m : group) names += nodes[m]->name + " ";
      groups.push_back(names);
    }
    const std::vector<std::string> decode = {"Qcur-0 Kcur-0 Vcur-0 ", "ffn_gate-0 ffn_up-0 ", "Qcur-1 Kcur-1 Vcur-1 ",
                                             "ffn_gate-1 ffn_up-1 "};
    // A prompt's last layer keeps only the token whose logits are asked for from its attention on.
    EXPECT_EQ(groups, tokens == 1 ? decode : std::vector<std::string>{"ffn_gate-1 ffn_up-1 "}) << tokens << " tokens";
  }
}
