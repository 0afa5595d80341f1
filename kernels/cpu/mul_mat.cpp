// MUL_MAT on the CPU: dst[i01, i11, i12, i13] = dot(src0 row i01 of batch (i12/r2, i13/r3),
// src1 row (i11, i12, i13)). src1 rows are first converted to the weight's vec_dot format.
#include <algorithm>
#include <array>
#include <cstring>
#include <span>

#include "cpu/kernels.h"
#include "cpu/mul_mat_amx.h"
#include "cpu/repack.h"
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

// One activation column in one batch (a decode step's product): each thread converts the column
// itself, into its own copy, so that no thread waits for another before its dots (a worker that
// wakes late held up both).
bool one_column(const Tensor* b) { return b->ne[1] == 1 && b->ne[2] * b->ne[3] == 1; }

// One tile of a batch's multiply: output rows [row, row + rows) by activation columns
// [col, col + cols), dots of n elements in `order`.
struct TilePlace {
  DotOrder order;
  int64_t row, rows, col, cols, n;
};

// kMulMatCausal over a tile in batch order; its column j is the query at KV position
// causal_pos + t.col + j.
// k as a KV span (of whole kCausalSpanStep steps, or blocks): in groups of kCausalCols columns,
// the dots stop at the group's last query, rounded up to a step; past the query the activation
// is zero, so the sums are those of the whole span.
// Rows as KV positions: each group of kCausalRows rows is multiplied only by the columns whose
// query reaches it (a kernel prepares the rows it is given once, so rows are split, not
// columns); outputs past a query are left as they are.
// Calls tile(part) for each part it multiplies.
constexpr int64_t kCausalCols = 64;
constexpr int64_t kCausalSpanStep = 32;
constexpr int64_t kCausalRows = 32;

template <typename Fn>
void causal_tiles(DType weight, const TilePlace& t, int64_t causal_pos, bool kv_span, Fn tile) {
  const int64_t query0 = causal_pos + t.col;
  if (kv_span) {
    const int64_t step = std::max(kCausalSpanStep, dtype_info(weight).block_size);
    if (t.n % step != 0) return tile(t);  // a span cut short would change its order
    for (int64_t c = 0; c < t.cols; c += kCausalCols) {
      TilePlace part = t;
      part.col = t.col + c;
      part.cols = std::min(kCausalCols, t.cols - c);
      part.n = std::min(t.n, (query0 + c + part.cols - 1 + step) / step * step);
      tile(part);
    }
    return;
  }
  for (int64_t r = 0; r < t.rows; r += kCausalRows) {
    const int64_t first = std::max(int64_t{0}, t.row + r - query0);  // the first column reaching row r
    if (first >= t.cols) break;
    TilePlace part = t;
    part.row = t.row + r;
    part.rows = std::min(kCausalRows, t.rows - r);
    part.col = t.col + first;
    part.cols = t.cols - first;
    tile(part);
  }
}

// Calls tile(place) for each tile mul_mat_columns(dst, order, ..., row0, rows, c_begin, c_end)
// multiplies, in its order.
template <typename Fn>
void for_column_tiles(const Tensor* dst, DotOrder order, int64_t row0, int64_t rows, int64_t c_begin, int64_t c_end, Fn tile) {
  const Tensor* a = dst->src[0];
  const int64_t ne11 = dst->src[1]->ne[1];
  const MulMatParams mp = mul_mat_params(*dst);
  // Columns of one order at a time: a repacked multiply gives its leftover columns the row order.
  const int64_t split = column_order(a->type, order, ne11 - 1, ne11) == order ? ne11 : ne11 - ne11 % 4;
  const int64_t col_block = a->type == DType::F16 ? kColBlockF16 : kColBlock;
  for (int64_t c0 = c_begin; c0 < c_end; c0 += col_block) {
    const int64_t c1 = std::min(c_end, c0 + col_block);
    for (int64_t s0 = c0; s0 < c1;) {
      const int64_t s1 = s0 < split ? std::min(c1, split) : c1;
      const TilePlace t{column_order(a->type, order, s0, ne11), row0, rows, s0, s1 - s0, a->ne[0]};
      if (mp.causal && t.order == DotOrder::kBatch)
        causal_tiles(a->type, t, mp.causal_past, mp.kv_span, tile);
      else
        tile(t);
      s0 = s1;
    }
  }
}

// The tile at `place` of a batch whose activation and output columns start at column c_begin.
DotTile tile_at(const Tensor* dst, const MulMatBatch& batch, int64_t c_begin, const TilePlace& place) {
  const size_t w_row = dst->src[0]->nb[1];
  const int64_t col = place.col - c_begin;
  DotTile tile{place.n,
                 batch.w + place.row * static_cast<int64_t>(w_row),
                 w_row,
                 place.rows,
                 batch.acts + col * static_cast<int64_t>(batch.act_row),
                 batch.act_row,
                 place.cols,
                 batch.out + place.row * static_cast<int64_t>(batch.out_row) + col * static_cast<int64_t>(batch.out_col),
                 batch.out_row,
                 batch.out_col,
                 batch.packed,
                 batch.work,
                 batch.work_size};
  tile.chunk_blocks = batch.chunk_blocks;
  return tile;
}

// The work memory the tile at `place` takes (dot_tile_work_size reads only its shape).
size_t tile_work_size(const Tensor* dst, bool packed, const TilePlace& place) {
  const Tensor* a = dst->src[0];
  DotTile tile{place.n, nullptr, a->nb[1], place.rows, nullptr, 0, place.cols, nullptr, 0, 0, packed};
  tile.chunk_blocks = held_chunk_blocks(*a, packed);
  return dot_tile_work_size(a->type, place.order, tile);
}

// Decode attention's query-key product, whose rows are KV positions (a head's row for one
// position lies a whole position's heads away from the next): from kMinKvSpanOrder positions
// on, work items are spans of kKvSpanRows positions taken span by span over every head, a
// thread's spans adjacent, so that each thread reads its part of the cache front to back
// (docs/benchmarks.md); with fewer, one head's positions per item (shorter tiles cost more than
// the reading order saves there).
constexpr int64_t kKvSpanRows = 16;
constexpr int64_t kMinKvSpanOrder = 128;

// How the second phase splits dst: work items of chunk_rows output rows within one (i12, i13)
// batch, or within `heads` batches taken as the columns of one tile; the dots in `order`.
// spans_first: an item's batch varies fastest (kKvSpanRows), else its chunk.
struct OutputSplit {
  int64_t chunk_rows, n_chunks, heads;
  DotOrder order;
  bool spans_first;
};

OutputSplit output_split(const Tensor* dst) {
  const Tensor* a = dst->src[0];
  const Tensor* b = dst->src[1];
  const int64_t ne01 = a->ne[1], ne11 = b->ne[1];
  const int64_t chunk_rows = kRowChunk;
  const DotOrder order = mul_mat_order(dst);
  // One column per batch, r2 batches on each src0 batch (decode attention, the query heads
  // sharing a K / V head): those batches become the columns of one tile, so each K / V row is
  // read once for all of them. Each output keeps its own dot, in the same order.
  const int64_t r2 = b->ne[2] / a->ne[2];
  const int64_t heads = ne11 == 1 && r2 > 1 && order != DotOrder::kBatch ? r2 : 1;
  const MulMatParams mp = mul_mat_params(*dst);
  if (heads > 1 && mp.causal && !mp.kv_span && ne01 >= kMinKvSpanOrder)
    return {kKvSpanRows, (ne01 + kKvSpanRows - 1) / kKvSpanRows, heads, order, true};
  return {chunk_rows, (ne01 + chunk_rows - 1) / chunk_rows, heads, order, false};
}

// The one tile of output rows [row0, row0 + rows) whose columns are `heads` query heads sharing a
// K / V head: the unfused nodes' tile and the fused decode pass's (attention.cpp) alike.
TilePlace heads_place(const Tensor* dst, DotOrder order, int64_t row0, int64_t rows, int64_t heads) {
  return TilePlace{order, row0, rows, 0, heads, dst->src[0]->ne[0]};
}

// Calls tile(place) for each tile of the work item of output rows [row0, row0 + rows).
template <typename Fn>
void for_item_tiles(const Tensor* dst, const OutputSplit& split, int64_t row0, int64_t rows, Fn tile) {
  if (split.heads > 1) return tile(heads_place(dst, split.order, row0, rows, split.heads));
  for_column_tiles(dst, split.order, row0, rows, 0, dst->src[1]->ne[1], tile);
}

// The work memory: the converted activations, shared, then per thread a slice that holds the
// gathered row of a strided activation in the first phase, its tiles' work in the second; and
// the split of the output the sizes were taken for.
struct MulMatWork {
  size_t acts, slice;
  OutputSplit split;
};

size_t gather_bytes(const Tensor* b) {
  return b->nb[0] != sizeof(float) ? work_bytes(static_cast<size_t>(b->ne[0]) * sizeof(float)) : 0;
}

MulMatWork mul_mat_work(const Tensor* dst, bool weight_packed) {
  const Tensor* a = dst->src[0];
  const Tensor* b = dst->src[1];
  // The first work item's tiles take the most: later ones have no more rows, nor causal tiles more columns.
  const OutputSplit split = output_split(dst);
  size_t tiles = 0;
  for_item_tiles(dst, split, 0, std::min(a->ne[1], split.chunk_rows),
                 [&](const TilePlace& t) { tiles = std::max(tiles, tile_work_size(dst, weight_packed, t)); });
  return {act_region_bytes(a, b), std::max(gather_bytes(b), tiles), split};
}

// A one-column product's weight as the backend packed it: its chunks (repack.h), 0 where not chunked.
int64_t chunk_blocks(const ColumnProduct& product) { return held_chunk_blocks(*product.dst->src[0], product.weight_packed); }
// The output rows a one-column product's threads take at a time: kRowBlock, or a chunked
// weight's runs of groups, which its kernels read whole; and how many such units it has.
int64_t row_unit(int64_t chunk_blocks) { return std::max(kRowBlock, packed_rows_unit(chunk_blocks)); }
int64_t row_units(const ColumnProduct& product, int64_t unit) { return (product.dst->src[0]->ne[1] + unit - 1) / unit; }

// One-column products' work memory: each thread's copy of the converted column, then its slice;
// and their output rows in units (row_unit), all products' units counted one after another.
struct ColumnWork {
  size_t acts, slice;
  int64_t groups;
};

ColumnWork column_work(std::span<const ColumnProduct> products, int nth) {
  const Tensor* first = products.front().dst;
  int64_t groups = 0, unit = kRowBlock;
  for (const ColumnProduct& product : products) {
    const int64_t its_unit = row_unit(chunk_blocks(product));
    groups += row_units(product, its_unit);
    unit = std::max(unit, its_unit);
  }
  // A piece a thread claims lies within one thread's even range of the units.
  const int64_t most_rows = (groups + nth - 1) / nth * unit;
  size_t tiles = 0;
  for (const ColumnProduct& product : products) {
    const Tensor* dst = product.dst;
    for_column_tiles(dst, mul_mat_order(dst), 0, std::min(dst->src[0]->ne[1], most_rows), 0, 1,
                     [&](const TilePlace& t) { tiles = std::max(tiles, tile_work_size(dst, product.weight_packed, t)); });
  }
  return {act_region_bytes(first->src[0], first->src[1]) * static_cast<size_t>(nth), std::max(gather_bytes(first->src[1]), tiles),
          groups};
}

// One-column products of one column on thread p.ith: its own copy of the converted column, then
// rows in whole units (row_unit), the products' units one after another: its range and others'
// tails as p.claims hands them out, else its even share.
void mul_mat_one_column(const ComputeParams& p, std::span<const ColumnProduct> products, const ColumnWork& work) {
  const Tensor* first = products.front().dst;
  const Tensor* b = first->src[1];
  const DType weight = first->src[0]->type;
  char* acts = static_cast<char*>(p.wdata) + static_cast<size_t>(p.ith) * (work.acts / static_cast<size_t>(p.nth));
  char* mine = thread_work(p, work.acts, work.slice);
  convert_activation(weight, bytes(b->data), b->nb[0], b->ne[0], reinterpret_cast<float*>(mine), acts);
  const size_t act_row = row_bytes(vec_dot_type(weight), b->ne[0]);
  const auto run = [&](WorkRange g) {
    int64_t base = 0;  // the first group of `product`
    for (const ColumnProduct& product : products) {
      const Tensor* dst = product.dst;
      const Tensor* a = dst->src[0];
      const int64_t chunk = chunk_blocks(product), unit = row_unit(chunk), units = row_units(product, unit);
      const int64_t begin = std::max(g.begin, base) - base, end = std::min(g.end, base + units) - base;
      base += units;
      if (begin >= end) continue;
      const int64_t row0 = begin * unit, rows = std::min(a->ne[1], end * unit) - row0;
      const MulMatBatch batch{bytes(a->data), acts, act_row, static_cast<char*>(dst->data), dst->nb[0], dst->nb[1],
                              product.weight_packed, mine, work.slice, chunk};
      for_column_tiles(dst, mul_mat_order(dst), row0, rows, 0, 1, [&](const TilePlace& t) {
        const DotTile tile = tile_at(dst, batch, 0, t);
        if (p.column_requests) return dot_column(a->type, t.order, tile, *p.column_requests);
        dot_tile(a->type, t.order, tile);
      });
    }
  };
  if (!p.claims) return run(split_work(work.groups, p.ith, p.nth));
  while (const std::optional<WorkRange> piece = p.claims->next(p.ith, work.groups)) run(*piece);
}

}  // namespace

void mul_mat_columns(const Tensor* dst, DotOrder order, const MulMatBatch& batch, int64_t row0, int64_t rows, int64_t c_begin,
                     int64_t c_end) {
  const DType weight = dst->src[0]->type;
  for_column_tiles(dst, order, row0, rows, c_begin, c_end,
                   [&](const TilePlace& t) { dot_tile(weight, t.order, tile_at(dst, batch, c_begin, t)); });
}

size_t mul_mat_columns_work_size(const Tensor* dst, DotOrder order, bool packed, int64_t row0, int64_t rows, int64_t c_begin,
                                 int64_t c_end) {
  size_t most = 0;
  for_column_tiles(dst, order, row0, rows, c_begin, c_end,
                   [&](const TilePlace& t) { most = std::max(most, tile_work_size(dst, packed, t)); });
  return most;
}

void mul_mat_heads(const Tensor* dst, DotOrder order, const MulMatBatch& batch, int64_t row0, int64_t rows, int64_t heads) {
  dot_tile(dst->src[0]->type, order, tile_at(dst, batch, 0, heads_place(dst, order, row0, rows, heads)));
}

size_t mul_mat_heads_work_size(const Tensor* dst, DotOrder order, int64_t rows, int64_t heads) {
  return tile_work_size(dst, false, heads_place(dst, order, 0, rows, heads));
}

DotOrder mul_mat_order(const Tensor* dst) {
  const Tensor* a = dst->src[0];
  return dot_order(a->type, a->ne[0], a->ne[1], dst->src[1]->ne[1], mul_mat_params(*dst).kv_span);
}

bool mul_mat_supports(DType weight) { return dot_supported(weight); }

void convert_activation(DType weight, const char* src, size_t nb0, int64_t k, float* gather, char* out) {
  const float* row = reinterpret_cast<const float*>(src);
  if (nb0 != sizeof(float)) {
    for (int64_t i = 0; i < k; ++i) std::memcpy(&gather[i], src + i * nb0, sizeof(float));
    row = gather;
  }
  quantize_activation(weight, row, out, k);
}

size_t mul_mat_work_size(const Tensor* dst, int nth, bool weight_packed) {
  if (mul_mat_amx_applies(dst)) return mul_mat_amx_work_size(dst, nth);
  if (one_column(dst->src[1])) return mul_mat_column_group_work_size(std::array{ColumnProduct{dst, weight_packed}}, nth);
  const MulMatWork work = mul_mat_work(dst, weight_packed);
  return work.acts + static_cast<size_t>(nth) * work.slice;
}

bool mul_mat_is_column_product(const Tensor* dst) { return one_column(dst->src[1]) && !mul_mat_amx_applies(dst); }

bool mul_mat_joins_column_group(const Tensor* first, const Tensor* dst) {
  return vec_dot_type(dst->src[0]->type) == vec_dot_type(first->src[0]->type) && !mul_mat_amx_applies(dst) &&
         !mul_mat_amx_applies(first);
}

size_t mul_mat_column_group_work_size(std::span<const ColumnProduct> products, int nth) {
  const ColumnWork work = column_work(products, nth);
  return work.acts + static_cast<size_t>(nth) * work.slice;
}

void mul_mat_column_group(const ComputeParams& p, std::span<const ColumnProduct> products) {
  const ColumnWork work = column_work(products, p.nth);
  require_work(p, work.acts + static_cast<size_t>(p.nth) * work.slice, products.front().dst);
  mul_mat_one_column(p, products, work);
}

void mul_mat(const ComputeParams& p, Tensor* dst) {
  if (mul_mat_amx_applies(dst)) {
    require_work(p, mul_mat_amx_work_size(dst, p.nth), dst);
    return mul_mat_amx(p, dst);
  }
  const Tensor* a = dst->src[0];
  const Tensor* b = dst->src[1];
  if (one_column(b)) return mul_mat_column_group(p, std::array{ColumnProduct{dst, p.weight_packed}});
  const MulMatWork work = mul_mat_work(dst, p.weight_packed);
  require_work(p, work.acts + static_cast<size_t>(p.nth) * work.slice, dst);

  const int64_t K = a->ne[0];
  const size_t act_row = row_bytes(vec_dot_type(a->type), K);
  char* acts = static_cast<char*>(p.wdata);
  char* mine = thread_work(p, work.acts, work.slice);

  // Phase 1: convert src1 rows, in (i11, i12, i13) order, into the weight's vec_dot format.
  const int64_t ne11 = b->ne[1], ne12 = b->ne[2];
  const WorkRange rows = split_work(b->nrows(), p.ith, p.nth);
  for (int64_t r = rows.begin; r < rows.end; ++r) {
    const int64_t i11 = r % ne11, i12 = (r / ne11) % ne12, i13 = r / (ne11 * ne12);
    convert_activation(a->type, bytes(b->data) + i11 * b->nb[1] + i12 * b->nb[2] + i13 * b->nb[3], b->nb[0], K,
                       reinterpret_cast<float*>(mine), acts + r * act_row);
  }
  if (p.nth > 1) barrier_wait(p);

  // Phase 2: work items are chunks of output rows within one (i12, i13) batch (or `heads` of them).
  const int64_t ne01 = a->ne[1];
  const int64_t r2 = ne12 / a->ne[2], r3 = b->ne[3] / a->ne[3];
  const OutputSplit& split = work.split;
  const int64_t batches = ne12 / split.heads;
  const WorkRange items = split_work(split.n_chunks * batches * b->ne[3], p.ith, p.nth);
  for (int64_t item = items.begin; item < items.end; ++item) {
    const int64_t chunk = split.spans_first ? item / batches % split.n_chunks : item % split.n_chunks,
                  i12 = (split.spans_first ? item % batches : item / split.n_chunks % batches) * split.heads,
                  i13 = item / (split.n_chunks * batches);
    const MulMatBatch batch{bytes(a->data) + (i12 / r2) * a->nb[2] + (i13 / r3) * a->nb[3],
                            acts + (i13 * ne12 + i12) * ne11 * static_cast<int64_t>(act_row),
                            act_row,
                            static_cast<char*>(dst->data) + i12 * dst->nb[2] + i13 * dst->nb[3],
                            dst->nb[0],
                            split.heads > 1 ? dst->nb[2] : dst->nb[1],
                            p.weight_packed,
                            mine,
                            work.slice,
                            held_chunk_blocks(*a, p.weight_packed)};
    static_assert(kRowChunk % kRunRows == 0, "a work item's rows are whole runs of a chunked weight");
    const int64_t row0 = chunk * split.chunk_rows, rows = std::min(ne01, row0 + split.chunk_rows) - row0;
    for_item_tiles(dst, split, row0, rows, [&](const TilePlace& t) { dot_tile(a->type, t.order, tile_at(dst, batch, 0, t)); });
  }
}

}  // namespace engine::cpu
