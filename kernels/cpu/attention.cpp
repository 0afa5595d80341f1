// Attention's q.k scores, their softmax and the V product run back to back on one thread, the
// scores staying in that thread's cache instead of going through the kq and softmax tensors, with
// the kernels (and so the orders) of those nodes: in prefill one (head, block of queries) at a
// time, in decode one K / V head and the query heads sharing it.
#include "cpu/attention.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "common/graph_walk.h"
#include "cpu/row_split.h"
#include "cpu/rows.h"
#include "cpu/vec_dot.h"
#include "engine/op_params.h"

namespace engine::cpu {
namespace {

// Queries per work item: the V product's causal spans follow groups of this many columns.
constexpr int64_t kQueryBlock = 64;

// The orders of the pass's two multiplies, as the unfused nodes take them.
DotOrder scores_order(const Tensor* kq) { return dot_order(kq->src[0]->type, kq->src[0]->ne[0], kq->ne[0], kq->ne[1]); }
DotOrder output_order(const Tensor* kq, const Tensor* kqv) {
  return dot_order(kqv->src[0]->type, kq->ne[0], kqv->src[0]->ne[1], kq->ne[1], true);
}

// The pass's work memory: shared by the threads, every query in K's dot format, then each
// query's mask live prefix; then per thread a block's scores, its probabilities in V's dot
// format, softmax's row of scaled scores, and the work memory of its multiplies' tiles.
struct AttentionWork {
  size_t queries, shared;                      // bytes of the queries, of both shared parts
  size_t scores, probs, softmax, tiles, slice;  // bytes of a thread's parts, of its whole slice
};

AttentionWork attention_work(const Tensor* kq, const Tensor* kqv) {
  const Tensor* k = kq->src[0];
  const Tensor* v = kqv->src[0];
  const int64_t n_kv = kq->ne[0], n_tokens = kq->ne[1], block = std::min(kQueryBlock, n_tokens);
  AttentionWork w{};
  w.queries = work_bytes(row_bytes(vec_dot_type(k->type), k->ne[0]) * static_cast<size_t>(n_tokens * kq->ne[2]));
  w.shared = w.queries + work_bytes(static_cast<size_t>(n_tokens) * sizeof(int64_t));
  w.scores = work_bytes(static_cast<size_t>(block * n_kv) * sizeof(float));
  w.probs = work_bytes(static_cast<size_t>(block) * row_bytes(vec_dot_type(v->type), n_kv));
  w.softmax = work_bytes(static_cast<size_t>(n_kv) * sizeof(float));
  for (int64_t c0 = 0; c0 < n_tokens; c0 += kQueryBlock) {
    const int64_t c1 = std::min(n_tokens, c0 + kQueryBlock);
    w.tiles = std::max({w.tiles, mul_mat_columns_work_size(kq, scores_order(kq), false, 0, n_kv, c0, c1),
                        mul_mat_columns_work_size(kqv, output_order(kq, kqv), false, 0, v->ne[1], c0, c1)});
  }
  w.slice = w.scores + w.probs + w.softmax + w.tiles;
  return w;
}

// Decode: K rows per tile, taken span by span over the K heads a thread holds at once, so that
// its part of each cache row (the heads are adjacent in a row) is read in one piece.
constexpr int64_t kDecodeSpan = 16;

// K heads a thread holds the scores of at once: at most kQueryBlock query heads' rows, so that the
// decode pass needs no more work memory than a prefill block's.
int64_t heads_together(int64_t group) { return std::max<int64_t>(1, kQueryBlock / group); }

// The decode pass's work memory: shared, every query head in K's dot format and the mask's live
// prefix; per thread the scores of the query heads of the K heads it holds at once, one K head's
// probabilities in V's dot format, softmax's row of scaled scores and the work memory of its tiles.
AttentionWork decode_work(const Tensor* kq, const Tensor* kqv, int nth) {
  const Tensor* k = kq->src[0];
  const Tensor* v = kqv->src[0];
  const int64_t n_kv = kq->ne[0], heads = kq->ne[2], group = heads / k->ne[2];
  const int64_t held = std::min((k->ne[2] + nth - 1) / nth, heads_together(group));
  AttentionWork w{};
  w.queries = work_bytes(row_bytes(vec_dot_type(k->type), k->ne[0]) * static_cast<size_t>(heads));
  w.shared = w.queries + work_bytes(sizeof(int64_t));
  w.scores = work_bytes(static_cast<size_t>(held * group * n_kv) * sizeof(float));
  w.probs = work_bytes(static_cast<size_t>(group) * row_bytes(vec_dot_type(v->type), n_kv));
  w.softmax = work_bytes(static_cast<size_t>(n_kv) * sizeof(float));
  w.tiles = std::max(mul_mat_heads_work_size(kq, mul_mat_order(kq), kDecodeSpan, group),
                     mul_mat_heads_work_size(kqv, mul_mat_order(kqv), v->ne[1], group));
  w.slice = w.scores + w.probs + w.softmax + w.tiles;
  return w;
}

// A thread's slice of the pass's work memory, in AttentionWork's order.
struct AttentionSlice {
  float* scores;
  char* probs;
  float* softmax;
  char* tiles;
};

AttentionSlice attention_slice(const ComputeParams& p, const AttentionWork& work, const Tensor* kq) {
  require_work(p, work.shared + static_cast<size_t>(p.nth) * work.slice, kq);
  char* mine = thread_work(p, work.shared, work.slice);
  char* probs = mine + work.scores;
  return {reinterpret_cast<float*>(mine), probs, reinterpret_cast<float*>(probs + work.probs), probs + work.probs + work.softmax};
}

// Nanoseconds a thread spends on each node's share of the pass, a lap at the end of each share.
struct PartClock {
  int64_t ns[3] = {};
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
  void lap(int part) {
    const auto now = std::chrono::steady_clock::now();
    ns[part] += std::chrono::duration_cast<std::chrono::nanoseconds>(now - last).count();
    last = now;
  }
};

// The checks both passes share: the three nodes' links, 3-d operands, dense queries and mask
// rows, and kqv placed over none of K, V and the mask (outputs are written while they are still
// read; the queries are read first), e.g. the last mask, which dies with these nodes.
bool attention_operands_fit(const Tensor* kq, const Tensor* soft_max, const Tensor* kqv, const Plan& plan) {
  if (kq->op != Op::MUL_MAT || soft_max->op != Op::SOFT_MAX || kqv->op != Op::MUL_MAT) return false;
  if (soft_max->src[0] != kq || kqv->src[1] != soft_max) return false;
  const Tensor* k = kq->src[0];
  const Tensor* q = kq->src[1];
  const Tensor* v = kqv->src[0];
  const Tensor* mask = soft_max->src[1];
  const int64_t n_kv = kq->ne[0], n_tokens = kq->ne[1], heads = kq->ne[2];
  if (kq->ne[3] != 1 || k->ne[3] != 1 || v->ne[3] != 1 || q->ne[3] != 1) return false;
  if (q->type != DType::F32 || q->nb[0] != sizeof(float) || soft_max->ne[0] != n_kv || v->ne[0] != n_kv) return false;
  if (kqv->ne[1] != n_tokens || kqv->ne[2] != heads || heads % k->ne[2] != 0 || heads % v->ne[2] != 0) return false;
  if (mask && (mask->type != DType::F32 || mask->nb[0] != sizeof(float) || mask->ne[0] != n_kv || mask->ne[1] < n_tokens))
    return false;
  for (const Tensor* input : {k, v, mask})
    if (input && plan.overlap(kqv, input)) return false;
  return true;
}

// One token's attention on nth threads: each takes whole K / V heads (K and V pair up head for
// head), so there must be as many as threads; the nodes make each head's group of query heads
// the columns of one tile only where a group has several heads and their orders are per row; a
// group of more than kQueryBlock heads would need more work memory than a prefill block.
bool decode_attention_fits(const Tensor* kq, const Tensor* soft_max, const Tensor* kqv, const Plan& plan, int nth) {
  if (!attention_operands_fit(kq, soft_max, kqv, plan) || kq->ne[1] != 1) return false;
  const Tensor* k = kq->src[0];
  const Tensor* v = kqv->src[0];
  const int64_t group = kq->ne[2] / k->ne[2];
  return k->ne[2] == v->ne[2] && k->ne[2] >= nth && group > 1 && group <= kQueryBlock && mul_mat_order(kq) != DotOrder::kBatch &&
         mul_mat_order(kqv) != DotOrder::kBatch;
}

void decode_attention(const ComputeParams& p, Tensor* kq, const Tensor* soft_max, Tensor* kqv, AttentionTimes& times) {
  const Tensor* k = kq->src[0];
  const Tensor* q = kq->src[1];
  const Tensor* v = kqv->src[0];
  const Tensor* mask = soft_max->src[1];
  const int64_t n_kv = kq->ne[0], heads = kq->ne[2], group = heads / k->ne[2], head_dim = k->ne[0];
  const size_t q_row = row_bytes(vec_dot_type(k->type), head_dim), p_row = row_bytes(vec_dot_type(v->type), n_kv);
  const DotOrder kq_order = mul_mat_order(kq), kqv_order = mul_mat_order(kqv);
  const float scale = scale_param(*soft_max);

  const AttentionWork work = decode_work(kq, kqv, p.nth);
  const AttentionSlice mine = attention_slice(p, work, kq);

  // Every query is converted before any output is written: kqv may lie where the queries were.
  char* q_all = static_cast<char*>(p.wdata);
  const WorkRange q_heads = split_work(heads, p.ith, p.nth);
  for (int64_t h = q_heads.begin; h < q_heads.end; ++h)
    quantize_activation(k->type, reinterpret_cast<const float*>(row_ptr(q, 0, h, 0)), q_all + h * q_row, head_dim);
  auto* live_at = reinterpret_cast<int64_t*>(q_all + work.queries);
  const auto* m = mask ? reinterpret_cast<const float*>(row_ptr(mask, 0, 0, 0)) : nullptr;
  if (p.ith == 0) *live_at = m ? mask_live_prefix(m, n_kv) : n_kv;
  if (p.nth > 1) barrier_wait(p);
  const int64_t live = *live_at;

  PartClock clock;
  const WorkRange kv_heads = split_work(k->ne[2], p.ith, p.nth);
  for (int64_t g0 = kv_heads.begin; g0 < kv_heads.end; g0 += heads_together(group)) {
    const int64_t g1 = std::min(kv_heads.end, g0 + heads_together(group));
    const auto head_scores = [&](int64_t g) { return mine.scores + (g - g0) * group * n_kv; };
    // Scores past the mask's live prefix are not computed: softmax does not read them.
    for (int64_t r = 0; r < live; r += kDecodeSpan)
      for (int64_t g = g0; g < g1; ++g) {
        const MulMatBatch batch{row_ptr(k, 0, g, 0), q_all + g * group * static_cast<int64_t>(q_row), q_row,
                                reinterpret_cast<char*>(head_scores(g)), sizeof(float), n_kv * sizeof(float), false,
                                mine.tiles, work.tiles};
        mul_mat_heads(kq, kq_order, batch, r, std::min(kDecodeSpan, live - r), group);
      }
    clock.lap(0);
    for (int64_t g = g0; g < g1; ++g) {
      for (int64_t j = 0; j < group; ++j) {
        float* row = head_scores(g) + j * n_kv;
        soft_max_row(row, m, live, scale, row, n_kv, mine.softmax);
        quantize_activation(v->type, row, mine.probs + j * static_cast<int64_t>(p_row), n_kv);
      }
      clock.lap(1);
      const MulMatBatch batch{row_ptr(v, 0, g, 0), mine.probs, p_row, row_ptr(kqv, 0, g * group, 0), kqv->nb[0], kqv->nb[2],
                              false, mine.tiles, work.tiles};
      mul_mat_heads(kqv, kqv_order, batch, 0, v->ne[1], group);
      clock.lap(2);
    }
  }
  times.add(clock.ns);
}

}  // namespace

bool fused_attention_fits(const Tensor* kq, const Tensor* soft_max, const Tensor* kqv, const Plan& plan, int nth) {
  if (kq->ne[1] == 1) return decode_attention_fits(kq, soft_max, kqv, plan, nth);
  if (!attention_operands_fit(kq, soft_max, kqv, plan)) return false;
  const MulMatParams qk = mul_mat_params(*kq), pv = mul_mat_params(*kqv);
  if (qk.kv_span || !qk.causal || !pv.kv_span || !pv.causal || qk.causal_past != pv.causal_past) return false;
  const Tensor* k = kq->src[0];
  const Tensor* v = kqv->src[0];
  const int64_t n_kv = kq->ne[0], n_tokens = kq->ne[1];
  return dot_order(k->type, k->ne[0], n_kv, n_tokens) == DotOrder::kBatch &&
         dot_order(v->type, n_kv, v->ne[1], n_tokens, true) == DotOrder::kBatch;
}

bool fuses_attention(const std::vector<Tensor*>& nodes, size_t i, const Plan& plan, int nth) {
  return attention_chain(nodes, i) && fused_attention_fits(nodes[i], nodes[i + 1], nodes[i + 2], plan, nth);
}

size_t fused_attention_work_size(const Tensor* kq, const Tensor* kqv, int nth) {
  const AttentionWork w = kq->ne[1] == 1 ? decode_work(kq, kqv, nth) : attention_work(kq, kqv);
  return w.shared + static_cast<size_t>(nth) * w.slice;
}

void fused_attention(const ComputeParams& p, Tensor* kq, const Tensor* soft_max, Tensor* kqv, AttentionTimes& times) {
  if (kq->ne[1] == 1) return decode_attention(p, kq, soft_max, kqv, times);
  const Tensor* k = kq->src[0];
  const Tensor* q = kq->src[1];
  const Tensor* v = kqv->src[0];
  const Tensor* mask = soft_max->src[1];
  const int64_t n_kv = kq->ne[0], n_tokens = kq->ne[1], heads = kq->ne[2], head_dim = k->ne[0], v_rows = v->ne[1];
  const int64_t k_share = heads / k->ne[2], v_share = heads / v->ne[2];
  const size_t q_row = row_bytes(vec_dot_type(k->type), head_dim), p_row = row_bytes(vec_dot_type(v->type), n_kv);
  const DotOrder kq_order = scores_order(kq), kqv_order = output_order(kq, kqv);
  const float scale = scale_param(*soft_max);

  const AttentionWork work = attention_work(kq, kqv);
  const AttentionSlice mine = attention_slice(p, work, kq);
  float* scores = mine.scores;

  PartClock clock;
  // Every query is converted (and every mask row's live prefix found) before any output is
  // written: the planner may place kqv where the queries were, as it may for unfused nodes.
  char* q_all = static_cast<char*>(p.wdata);
  const WorkRange q_rows = split_work(n_tokens * heads, p.ith, p.nth);
  for (int64_t r = q_rows.begin; r < q_rows.end; ++r) {
    const int64_t t = r % n_tokens, h = r / n_tokens;
    quantize_activation(k->type, reinterpret_cast<const float*>(row_ptr(q, t, h, 0)), q_all + r * q_row,
                        head_dim);
  }
  auto* live = reinterpret_cast<int64_t*>(q_all + work.queries);
  const WorkRange mask_rows = split_work(n_tokens, p.ith, p.nth);
  for (int64_t t = mask_rows.begin; t < mask_rows.end; ++t)
    live[t] = mask ? mask_live_prefix(reinterpret_cast<const float*>(row_ptr(mask, t, 0, 0)), n_kv) : n_kv;
  if (p.nth > 1) barrier_wait(p);
  const int64_t blocks = (n_tokens + kQueryBlock - 1) / kQueryBlock;
  const WorkRange items = split_work(heads * blocks, p.ith, p.nth);
  for (int64_t item = items.begin; item < items.end; ++item) {
    const int64_t h = item / blocks, c0 = item % blocks * kQueryBlock, c1 = std::min(n_tokens, c0 + kQueryBlock);
    const char* q_acts = q_all + (h * n_tokens + c0) * q_row;
    // Scores of query t at column t - c0, one KV position per float; past a query they are
    // left unwritten, and the softmax reads only up to its mask's live prefix.
    const MulMatBatch kq_batch{row_ptr(k, 0, h / k_share, 0), q_acts, q_row, reinterpret_cast<char*>(scores),
                               sizeof(float), n_kv * sizeof(float), false, mine.tiles, work.tiles};
    mul_mat_columns(kq, kq_order, kq_batch, 0, n_kv, c0, c1);
    clock.lap(0);
    for (int64_t t = c0; t < c1; ++t) {
      float* row = scores + (t - c0) * n_kv;
      const auto* m = mask ? reinterpret_cast<const float*>(row_ptr(mask, t, 0, 0)) : nullptr;
      soft_max_row(row, m, live[t], scale, row, n_kv, mine.softmax);
    }
    clock.lap(1);
    for (int64_t t = c0; t < c1; ++t)
      quantize_activation(v->type, scores + (t - c0) * n_kv, mine.probs + (t - c0) * p_row, n_kv);
    const MulMatBatch kqv_batch{row_ptr(v, 0, h / v_share, 0), mine.probs, p_row, row_ptr(kqv, c0, h, 0), kqv->nb[0],
                                kqv->nb[1], false, mine.tiles, work.tiles};
    mul_mat_columns(kqv, kqv_order, kqv_batch, 0, v_rows, c0, c1);
    clock.lap(2);
  }
  times.add(clock.ns);
}

}  // namespace engine::cpu
