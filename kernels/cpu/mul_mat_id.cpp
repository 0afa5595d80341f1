// MUL_MAT_ID on the CPU: the slots (i, t) routed to each expert are gathered, multiplied by that
// expert's matrix as the columns of one MUL_MAT, and scattered back to dst[:, i, t]. Only the
// experts some slot chose are read. Dots run in the one-row order (llama.cpp's mul_mat_id is a
// vec_dot per row and column).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cpu/kernels.h"
#include "cpu/row_split.h"
#include "engine/error.h"

namespace engine::cpu {
namespace {

constexpr int64_t kRowChunk = 64;  // an expert's output rows per work item
constexpr DotOrder kOrder = DotOrder::kRow;

const char* bytes(const void* p) { return static_cast<const char*>(p); }

// The slots of each expert, in slot order: slots[offset[e] .. offset[e + 1]) (slot s = i + t * n_used).
struct Routing {
  int64_t* offset;  // n_expert + 1
  int32_t* slots;   // n_used * n_tokens
};

size_t routing_bytes(const Tensor* dst) {
  const int64_t n_expert = dst->src[0]->ne[2], n_slots = dst->ne[1] * dst->ne[2];
  return work_bytes(static_cast<size_t>(n_expert + 1) * sizeof(int64_t)) + work_bytes(static_cast<size_t>(n_slots) * sizeof(int32_t));
}

// Every thread routes alone (a bad id throws on all of them, before any barrier).
Routing route(const Tensor* dst, char* at) {
  const Tensor* ids = dst->src[2];
  const int64_t n_expert = dst->src[0]->ne[2], n_used = dst->ne[1], n_slots = n_used * dst->ne[2];
  Routing r{reinterpret_cast<int64_t*>(at),
            reinterpret_cast<int32_t*>(at + work_bytes(static_cast<size_t>(n_expert + 1) * sizeof(int64_t)))};
  const auto expert_of = [&](int64_t s) {
    int32_t e;
    std::memcpy(&e, bytes(ids->data) + (s % n_used) * ids->nb[0] + (s / n_used) * ids->nb[1], sizeof e);
    if (e < 0 || e >= n_expert)
      throw Error("mul_mat_id '" + dst->name + "': expert " + std::to_string(e) + " is outside the " +
                  std::to_string(n_expert) + " of '" + dst->src[0]->name + "'");
    return e;
  };
  std::fill(r.offset, r.offset + n_expert + 1, 0);
  for (int64_t s = 0; s < n_slots; ++s) ++r.offset[expert_of(s) + 1];
  for (int64_t e = 0; e < n_expert; ++e) r.offset[e + 1] += r.offset[e];
  for (int64_t s = 0; s < n_slots; ++s) r.slots[r.offset[expert_of(s)]++] = static_cast<int32_t>(s);
  for (int64_t e = n_expert; e > 0; --e) r.offset[e] = r.offset[e - 1];  // filling advanced each to the next's start
  r.offset[0] = 0;
  return r;
}

// One expert's multiply as a MUL_MAT node of `cols` columns, for mul_mat_columns.
struct ExpertMatMul {
  Tensor w, acts, dst;
  ExpertMatMul(const Tensor* node, int64_t cols) {
    const Tensor* as = node->src[0];
    w.type = as->type;
    w.ne[0] = as->ne[0];
    w.ne[1] = as->ne[1];
    w.nb[1] = as->nb[1];
    acts.type = DType::F32;
    acts.ne[0] = as->ne[0];
    acts.ne[1] = cols;
    dst.op = Op::MUL_MAT;
    dst.ne[0] = as->ne[1];
    dst.ne[1] = cols;
    dst.src[0] = &w;
    dst.src[1] = &acts;
  }
};

struct IdWork {
  size_t acts, outs, slice, tiles;  // shared converted activations and outputs; per thread routing + tiles
};

IdWork id_work(const Tensor* dst, bool packed) {
  const Tensor* as = dst->src[0];
  const Tensor* b = dst->src[1];
  const int64_t n_slots = dst->ne[1] * dst->ne[2], n_tokens = dst->ne[2];
  const ExpertMatMul most(dst, n_tokens);  // an expert takes each token at most once
  const size_t tiles = mul_mat_columns_work_size(&most.dst, kOrder, packed, 0, std::min(as->ne[1], kRowChunk), 0, n_tokens);
  const size_t gather = b->nb[0] != sizeof(float) ? work_bytes(static_cast<size_t>(b->ne[0]) * sizeof(float)) : 0;
  return {work_bytes(row_bytes(vec_dot_type(as->type), as->ne[0]) * static_cast<size_t>(n_slots)),
          work_bytes(static_cast<size_t>(as->ne[1] * n_slots) * sizeof(float)), routing_bytes(dst) + std::max(tiles, gather),
          std::max(tiles, gather)};
}

}  // namespace

size_t mul_mat_id_work_size(const Tensor* dst, int nth, bool weight_packed) {
  const IdWork w = id_work(dst, weight_packed);
  return w.acts + w.outs + static_cast<size_t>(nth) * w.slice;
}

void mul_mat_id(const ComputeParams& p, Tensor* dst) {
  const Tensor* as = dst->src[0];
  const Tensor* b = dst->src[1];
  const IdWork work = id_work(dst, p.weight_packed);
  require_work(p, work.acts + work.outs + static_cast<size_t>(p.nth) * work.slice, dst);
  char* acts = static_cast<char*>(p.wdata);
  char* outs = acts + work.acts;
  char* mine = thread_work(p, work.acts + work.outs, work.slice);
  char* tiles = mine + routing_bytes(dst);
  const Routing r = route(dst, mine);

  const int64_t K = as->ne[0], N = as->ne[1], n_expert = as->ne[2], n_used = dst->ne[1], n_slots = n_used * dst->ne[2];
  const size_t act_row = row_bytes(vec_dot_type(as->type), K), out_col = static_cast<size_t>(N) * sizeof(float);
  const auto slot_at = [&](int64_t c) {
    const int64_t s = r.slots[c];
    return std::pair{s % n_used, s / n_used};
  };

  // Phase 1: each gathered slot's activation row in the experts' dot format.
  const WorkRange gathered = split_work(n_slots, p.ith, p.nth);
  for (int64_t c = gathered.begin; c < gathered.end; ++c) {
    const auto [i, t] = slot_at(c);
    convert_activation(as->type, bytes(b->data) + (b->ne[1] == 1 ? 0 : i) * b->nb[1] + t * b->nb[2], b->nb[0], K,
                       reinterpret_cast<float*>(tiles), acts + c * act_row);
  }
  if (p.nth > 1) barrier_wait(p);

  // Phase 2: work items are chunks of one chosen expert's output rows.
  const int64_t n_chunks = (N + kRowChunk - 1) / kRowChunk;
  std::vector<int32_t> chosen;
  for (int64_t e = 0; e < n_expert; ++e)
    if (r.offset[e + 1] > r.offset[e]) chosen.push_back(static_cast<int32_t>(e));
  const WorkRange items = split_work(static_cast<int64_t>(chosen.size()) * n_chunks, p.ith, p.nth);
  for (int64_t item = items.begin; item < items.end; ++item) {
    const int64_t e = chosen[item / n_chunks], chunk = item % n_chunks;
    const int64_t first = r.offset[e], cols = r.offset[e + 1] - first;
    const ExpertMatMul mm(dst, cols);
    const MulMatBatch batch{bytes(as->data) + e * as->nb[2], acts + first * act_row, act_row, outs + first * out_col,
                            sizeof(float), out_col, p.weight_packed, tiles, work.tiles};
    const int64_t row0 = chunk * kRowChunk;
    mul_mat_columns(&mm.dst, kOrder, batch, row0, std::min(N, row0 + kRowChunk) - row0, 0, cols);
  }
  if (p.nth > 1) barrier_wait(p);

  // Phase 3: each slot's output column to its place.
  for (int64_t c = gathered.begin; c < gathered.end; ++c) {
    const auto [i, t] = slot_at(c);
    std::memcpy(static_cast<char*>(dst->data) + i * dst->nb[1] + t * dst->nb[2], outs + c * out_col, out_col);
  }
}

}  // namespace engine::cpu
