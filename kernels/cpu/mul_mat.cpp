// MUL_MAT on the CPU: dst[i01, i11, i12, i13] = dot(src0 row i01 of batch (i12/r2, i13/r3),
// src1 row (i11, i12, i13)). src1 rows are first converted to the weight's vec_dot format.
#include <algorithm>
#include <cstring>

#include "cpu/kernels.h"
#include "cpu/mul_mat_amx.h"
#include "cpu/row_split.h"
#include "cpu/vec_dot.h"
#include "engine/op_params.h"

namespace engine::cpu {
namespace {

constexpr int64_t kRowBlock = 16;  // a multiple of every kernel's row block and of the packed groups
constexpr int64_t kRowChunk = 128;  // output rows per work item: a tile's per-column work (Q4_0 block sums) spreads over them
// Activation rows per tile: a tile's prepared weight rows (unpacked quantized blocks, widened
// F16) are reused across them; widened F16 rows cost more to make, so they get more columns.
constexpr int64_t kColBlock = 64;
constexpr int64_t kColBlockF16 = 128;

const char* bytes(const void* p) { return static_cast<const char*>(p); }

size_t act_region_bytes(const Tensor* a, const Tensor* b) {
  return work_bytes(row_bytes(vec_dot_type(a->type), b->ne[0]) * static_cast<size_t>(b->nrows()));
}

// kMulMatCausal over a tile whose rows start at row0 and columns at col0 (batch order); column j
// is the query at KV position causal_pos + col0 + j.
// k as a KV span (of whole kCausalSpanStep steps, or blocks): in groups of kCausalCols columns,
// the dots stop at the group's last query, rounded up to a step; past the query the activation
// is zero, so the sums are those of the whole span.
// Rows as KV positions: each group of kCausalRows rows is multiplied only by the columns whose
// query reaches it (a kernel prepares the rows it is given once, so rows are split, not
// columns); outputs past a query are left as they are.
constexpr int64_t kCausalCols = 64;
constexpr int64_t kCausalSpanStep = 32;
constexpr int64_t kCausalRows = 32;

void causal_tile(DType weight, const DotTile& t, int64_t row0, int64_t col0, int64_t causal_pos, bool kv_span) {
  const int64_t query0 = causal_pos + col0;
  if (kv_span) {
    const int64_t step = std::max(kCausalSpanStep, dtype_info(weight).block_size);
    if (t.n % step != 0) return dot_tile(weight, DotOrder::kBatch, t);  // a span cut short would change its order
    for (int64_t c = 0; c < t.cols; c += kCausalCols) {
      DotTile part = t;
      part.cols = std::min(kCausalCols, t.cols - c);
      part.a += c * static_cast<int64_t>(t.a_stride);
      part.out += c * static_cast<int64_t>(t.out_col);
      part.n = std::min(t.n, (query0 + c + part.cols - 1 + step) / step * step);
      dot_tile(weight, DotOrder::kBatch, part);
    }
    return;
  }
  for (int64_t r = 0; r < t.rows; r += kCausalRows) {
    const int64_t first = std::max(int64_t{0}, row0 + r - query0);  // the first column reaching row r
    if (first >= t.cols) break;
    DotTile part = t;
    part.rows = std::min(kCausalRows, t.rows - r);
    part.w += r * static_cast<int64_t>(t.w_stride);
    part.cols = t.cols - first;
    part.a += first * static_cast<int64_t>(t.a_stride);
    part.out += r * static_cast<int64_t>(t.out_row) + first * static_cast<int64_t>(t.out_col);
    dot_tile(weight, DotOrder::kBatch, part);
  }
}

}  // namespace

void mul_mat_columns(const Tensor* dst, DotOrder order, const MulMatBatch& batch, int64_t row0, int64_t rows, int64_t c_begin,
                     int64_t c_end) {
  const Tensor* a = dst->src[0];
  const int64_t ne11 = dst->src[1]->ne[1];
  const MulMatParams mp = mul_mat_params(*dst);
  const bool kv_span = mp.kv_span, causal = mp.causal;
  const int64_t causal_pos = mp.causal_past;
  // Columns of one order at a time: a repacked multiply gives its leftover columns the row order.
  const int64_t split = column_order(a->type, order, ne11 - 1, ne11) == order ? ne11 : ne11 - ne11 % 4;
  const int64_t col_block = a->type == DType::F16 ? kColBlockF16 : kColBlock;
  for (int64_t c0 = c_begin; c0 < c_end; c0 += col_block) {
    const int64_t c1 = std::min(c_end, c0 + col_block);
    for (int64_t s0 = c0; s0 < c1;) {
      const int64_t s1 = s0 < split ? std::min(c1, split) : c1;
      const DotTile tile{a->ne[0],
                         batch.w + row0 * static_cast<int64_t>(a->nb[1]),
                         a->nb[1],
                         rows,
                         batch.acts + (s0 - c_begin) * static_cast<int64_t>(batch.act_row),
                         batch.act_row,
                         s1 - s0,
                         batch.out + row0 * static_cast<int64_t>(batch.out_row) + (s0 - c_begin) * static_cast<int64_t>(batch.out_col),
                         batch.out_row,
                         batch.out_col,
                         batch.packed};
      const DotOrder tile_order = column_order(a->type, order, s0, ne11);
      if (causal && tile_order == DotOrder::kBatch)
        causal_tile(a->type, tile, row0, s0, causal_pos, kv_span);
      else
        dot_tile(a->type, tile_order, tile);
      s0 = s1;
    }
  }
}

bool mul_mat_supports(DType weight) { return dot_supported(weight); }

size_t mul_mat_work_size(const Tensor* dst, int nth) {
  if (mul_mat_amx_applies(dst)) return mul_mat_amx_work_size(dst, nth);
  const Tensor* a = dst->src[0];
  const Tensor* b = dst->src[1];
  // Converted activations, then one row of gathered floats per thread for strided src1.
  return act_region_bytes(a, b) + static_cast<size_t>(nth) * work_bytes(static_cast<size_t>(b->ne[0]) * sizeof(float));
}

void mul_mat(const ComputeParams& p, Tensor* dst) {
  if (mul_mat_amx_applies(dst) && p.wsize >= mul_mat_amx_work_size(dst, p.nth)) return mul_mat_amx(p, dst);
  const Tensor* a = dst->src[0];
  const Tensor* b = dst->src[1];
  require_work(p, mul_mat_work_size(dst, p.nth), dst);

  const int64_t K = a->ne[0];
  const size_t act_row = row_bytes(vec_dot_type(a->type), K);
  char* acts = static_cast<char*>(p.wdata);
  auto* gather = reinterpret_cast<float*>(thread_work(p, act_region_bytes(a, b), work_bytes(static_cast<size_t>(K) * sizeof(float))));

  // Phase 1: convert src1 rows, in (i11, i12, i13) order, into the weight's vec_dot format.
  const int64_t ne11 = b->ne[1], ne12 = b->ne[2];
  const WorkRange rows = split_work(b->nrows(), p.ith, p.nth);
  for (int64_t r = rows.begin; r < rows.end; ++r) {
    const int64_t i11 = r % ne11, i12 = (r / ne11) % ne12, i13 = r / (ne11 * ne12);
    const char* src = bytes(b->data) + i11 * b->nb[1] + i12 * b->nb[2] + i13 * b->nb[3];
    const float* row = reinterpret_cast<const float*>(src);
    if (b->nb[0] != sizeof(float)) {
      for (int64_t k = 0; k < K; ++k) std::memcpy(&gather[k], src + k * b->nb[0], sizeof(float));
      row = gather;
    }
    quantize_activation(a->type, row, acts + r * act_row, K);
  }
  if (p.nth > 1) barrier_wait(p);

  // Phase 2: work items are chunks of output rows within one (i12, i13) batch.
  const int64_t ne01 = a->ne[1];
  const int64_t r2 = ne12 / a->ne[2], r3 = b->ne[3] / a->ne[3];
  // One activation column (decode): each thread takes one even, contiguous run of rows, so its
  // kernels see long row ranges to stream and prefetch; otherwise row chunks are reused per column.
  const int64_t chunk_rows = ne11 == 1 && ne12 * b->ne[3] == 1
                                 ? std::max(kRowBlock, ((ne01 + p.nth - 1) / p.nth + kRowBlock - 1) / kRowBlock * kRowBlock)
                                 : kRowChunk;
  const int64_t n_chunks = (ne01 + chunk_rows - 1) / chunk_rows;
  const DotOrder order = dot_order(a->type, K, ne01, ne11, mul_mat_params(*dst).kv_span);
  // One column per batch, r2 batches on each src0 batch (decode attention, the query heads
  // sharing a K / V head): those batches become the columns of one tile, so each K / V row is
  // read once for all of them. Each output keeps its own dot, in the same order.
  const int64_t heads = ne11 == 1 && r2 > 1 && order != DotOrder::kBatch ? r2 : 1;
  const int64_t batches = ne12 / heads;
  const WorkRange items = split_work(n_chunks * batches * b->ne[3], p.ith, p.nth);
  for (int64_t item = items.begin; item < items.end; ++item) {
    const int64_t chunk = item % n_chunks, i12 = (item / n_chunks) % batches * heads, i13 = item / (n_chunks * batches);
    const char* w_batch = bytes(a->data) + (i12 / r2) * a->nb[2] + (i13 / r3) * a->nb[3];
    const char* act_batch = acts + (i13 * ne12 + i12) * ne11 * static_cast<int64_t>(act_row);
    char* dst_batch = static_cast<char*>(dst->data) + i12 * dst->nb[2] + i13 * dst->nb[3];
    const int64_t row0 = chunk * chunk_rows, rows = std::min(ne01, row0 + chunk_rows) - row0;
    if (heads > 1) {
      dot_tile(a->type, order,
               DotTile{K, w_batch + row0 * static_cast<int64_t>(a->nb[1]), a->nb[1], rows, act_batch, act_row, heads,
                       dst_batch + row0 * static_cast<int64_t>(dst->nb[0]), dst->nb[0], dst->nb[2], p.weight_packed});
      continue;
    }
    mul_mat_columns(dst, order, MulMatBatch{w_batch, act_batch, act_row, dst_batch, dst->nb[0], dst->nb[1], p.weight_packed},
                    row0, rows, 0, ne11);
  }
}

}  // namespace engine::cpu
