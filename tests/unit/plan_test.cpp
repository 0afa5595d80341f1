#include "engine/plan.h"

#include <gtest/gtest.h>

#include <unordered_map>

#include "engine/arch.h"
#include "test_models.h"

using namespace engine;

namespace {

const Tensor* storage_of(const Tensor* t) { return t->view_src ? t->view_src : t; }

}  // namespace

TEST(Plan, TensorsLiveAtTheSameTimeNeverOverlap) {
  auto model = Model::load(test_models::synthetic_model(DType::F32));
  KVCache kv(model->hparams(), 128, DType::F16);
  for (int64_t n_tokens : {1, 7, 64}) {
    StepGraph step = build_step_graph(*model, kv, StepShape{n_tokens, 16, 1});
    const Plan plan = Plan::make(*step.graph);
    const auto& nodes = step.graph->nodes();
    // Lifetime of each placed tensor: [defining node, last reading node].
    std::unordered_map<const Tensor*, std::pair<size_t, size_t>> life;
    for (const auto& [t, off] : plan.offsets) life[t] = {0, 0};
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (life.count(nodes[i]) && nodes[i]->op != Op::NONE) life[nodes[i]] = {i, i};
      for (const Tensor* s : nodes[i]->src)
        if (s && life.count(storage_of(s))) life[storage_of(s)].second = i;
    }
    life[step.logits].second = nodes.size();
    // A node taking over its source's storage shares it exactly, at the one node both are live.
    std::unordered_map<const Tensor*, const Tensor*> taken_over;
    for (const Lifetime& l : Plan::lifetimes(*step.graph))
      if (l.in_place_of) {
        taken_over[l.tensor] = l.in_place_of;
        EXPECT_EQ(plan.offsets.at(l.tensor), plan.offsets.at(l.in_place_of)) << l.tensor->name;
        EXPECT_EQ(life.at(l.in_place_of).second, life.at(l.tensor).first) << l.tensor->name;
      }
    for (const auto& [a, la] : life)
      for (const auto& [b, lb] : life) {
        if (a == b || la.second < lb.first || lb.second < la.first) continue;
        if ((taken_over.count(a) && taken_over.at(a) == b) || (taken_over.count(b) && taken_over.at(b) == a)) continue;
        const size_t a0 = plan.offsets.at(a), b0 = plan.offsets.at(b);
        EXPECT_TRUE(a0 + a->nbytes() <= b0 || b0 + b->nbytes() <= a0) << a->name << " overlaps " << b->name;
      }
    for (const auto& [t, off] : plan.offsets) EXPECT_LE(off + t->nbytes(), plan.buffer_size);
  }
}

TEST(Plan, SoftMaxTakesOverItsScoresOnlyAsTheirLastReader) {
  for (bool scores_read_later : {false, true}) {
    Graph g;
    Tensor* x = g.new_tensor_2d(DType::F32, 64, 8, "x");  // also the mask: live through the softmax
    x->flags |= kInput;
    Tensor* scores = g.scale(x, 0.5f);
    Tensor* probs = g.soft_max(scores, x, 1.0f);
    Tensor* out = scores_read_later ? g.add(probs, scores) : probs;
    out->flags |= kOutput;
    g.expand(out);
    const Plan plan = Plan::make(g);
    const size_t block = 64 * 8 * sizeof(float);
    if (scores_read_later) {  // x, scores and probs live at once; out then reuses x's block
      EXPECT_NE(plan.offsets.at(probs), plan.offsets.at(scores));
      EXPECT_EQ(plan.buffer_size, 3 * block);
    } else {  // x and scores, which probs takes over
      EXPECT_EQ(plan.offsets.at(probs), plan.offsets.at(scores));
      EXPECT_EQ(plan.buffer_size, 2 * block);
    }
  }
  // Not where the node reads its source through another operand too (here as its mask).
  Graph g;
  Tensor* x = g.new_tensor_2d(DType::F32, 64, 8, "x");
  x->flags |= kInput;
  Tensor* scores = g.scale(x, 0.5f);
  Tensor* probs = g.soft_max(scores, scores, 1.0f);
  probs->flags |= kOutput;
  g.expand(probs);
  EXPECT_NE(Plan::make(g).offsets.at(probs), Plan::make(g).offsets.at(scores));
}

TEST(Plan, ViewsAliasTheirSourceAfterBind) {
  auto model = Model::load(test_models::synthetic_model(DType::F32));
  KVCache kv(model->hparams(), 64, DType::F16);
  StepGraph step = build_step_graph(*model, kv, StepShape{4, 0, 1});
  auto backend = make_cpu_backend(1);  // binds the weight and KV leaves, then the plan
  backend->load_weights(*model);
  backend->allocate_kv(kv);
  backend->allocate(*step.graph, Plan::make(*step.graph));
  for (const Tensor* n : step.graph->nodes()) {
    ASSERT_NE(n->data, nullptr) << n->name;
    if (n->view_src) {
      EXPECT_EQ(n->data, static_cast<uint8_t*>(n->view_src->data) + n->view_offs) << n->name;
    }
  }
}
