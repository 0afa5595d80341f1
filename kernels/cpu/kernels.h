#pragma once
// CPU kernels, one per op. Each computes its share of `dst` (split by ith / nth) from
// dst->src[]; all tensors have their data bound. Kernels needing work memory declare its size
// (the *_work_size functions below, node_work_size in scratch.h) and receive it in
// ComputeParams::wdata, shared by all threads, each thread using its own slice of it.
#include <cstddef>
#include <optional>
#include <span>

#include "cpu/row_split.h"
#include "cpu/vec_dot.h"
#include "cpu/work_memory.h"
#include "engine/tensor.h"

namespace engine::cpu {

class Barrier;

struct ComputeParams {
  int ith = 0;                // this thread's index
  int nth = 1;                // thread count
  void* wdata = nullptr;      // work memory shared by all threads of this node, kWorkAlign-aligned
  size_t wsize = 0;
  Barrier* barrier = nullptr; // waits until all nth threads arrive
  bool weight_packed = false; // MUL_MAT: src0 is a weight the backend holds regrouped (repack.h)
  RowClaims* claims = nullptr; // one-column MUL_MAT: rows taken piece by piece; none: an even share
  // One-column MUL_MAT: how the weight is requested ahead (the backend's learned way,
  // requests_learner.h); none: as tuned (decode_tuning.h).
  std::optional<StreamRequests> column_requests;
};

void barrier_wait(const ComputeParams& p);

// Throws unless p.wdata holds `bytes` of aligned work memory for `node`.
void require_work(const ComputeParams& p, size_t bytes, const Tensor* node);
// Thread p.ith's slice of work memory: after `shared` bytes all threads use, slices of `slice`
// bytes (both whole pieces, work_memory.h) in thread order.
inline char* thread_work(const ComputeParams& p, size_t shared, size_t slice) {
  return static_cast<char*>(p.wdata) + shared + static_cast<size_t>(p.ith) * slice;
}

// Work memory bytes a MUL_MAT node needs with nth threads, its weight packed or not (as
// ComputeParams::weight_packed): activations converted to the weight type's dot-product format,
// and per thread its tiles' work memory (dot_tile_work_size).
size_t mul_mat_work_size(const Tensor* dst, int nth, bool weight_packed);
// Work memory bytes of SOFT_MAX and ROPE with nth threads: a slice per thread.
size_t soft_max_work_size(const Tensor* dst, int nth);
size_t rope_work_size(const Tensor* dst, int nth);
// Work memory bytes of MUL_MAT_ID with nth threads: the routed activations and outputs, and per
// thread the routing and its tiles' work memory.
size_t mul_mat_id_work_size(const Tensor* dst, int nth, bool weight_packed);

void get_rows(const ComputeParams& p, Tensor* dst);
void add(const ComputeParams& p, Tensor* dst);
void mul(const ComputeParams& p, Tensor* dst);
void div(const ComputeParams& p, Tensor* dst);
void sum_rows(const ComputeParams& p, Tensor* dst);
void argsort(const ComputeParams& p, Tensor* dst);
void mul_mat_id(const ComputeParams& p, Tensor* dst);
void scale(const ComputeParams& p, Tensor* dst);
void rms_norm(const ComputeParams& p, Tensor* dst);
void norm(const ComputeParams& p, Tensor* dst);
void mul_mat(const ComputeParams& p, Tensor* dst);
void rope(const ComputeParams& p, Tensor* dst);
void soft_max(const ComputeParams& p, Tensor* dst);
void cont(const ComputeParams& p, Tensor* dst);  // CONT and CPY: strided copy with dtype conversion
void silu(const ComputeParams& p, Tensor* dst);
void gelu(const ComputeParams& p, Tensor* dst);

// One activation row of k floats at src, elements nb0 bytes apart, in weight's dot format at
// out; a strided row is first gathered into `gather` (k floats of work memory).
void convert_activation(DType weight, const char* src, size_t nb0, int64_t k, float* gather, char* out);

// One (i12, i13) batch of a MUL_MAT: its weight, its activation rows in the weight's dot
// format (act_row bytes apart, the first column of the range first), and its output for that
// column at row 0 (out_row / out_col: byte strides); the calling thread's work memory for each
// tile (DotTile::work).
struct MulMatBatch {
  const char* w;
  const char* acts;
  size_t act_row;
  char* out;
  size_t out_row, out_col;
  bool packed = false;  // w is regrouped (repack.h)
  char* work = nullptr;
  size_t work_size = 0;
  int64_t chunk_blocks = 0;  // packed: DotTile::chunk_blocks
};
// Output rows [row0, row0 + rows) of one batch for activation columns [c_begin, c_end), in the
// tiles and orders mul_mat gives them (kMulMatCausal / kMulMatKvSpan included).
void mul_mat_columns(const Tensor* dst, DotOrder order, const MulMatBatch& batch, int64_t row0, int64_t rows, int64_t c_begin,
                     int64_t c_end);
// The most work memory one tile of that call takes: the batch's work_size it needs.
size_t mul_mat_columns_work_size(const Tensor* dst, DotOrder order, bool packed, int64_t row0, int64_t rows, int64_t c_begin,
                                 int64_t c_end);
// Decode attention's products: output rows [row0, row0 + rows) of one tile whose columns are the
// `heads` query heads sharing one K / V head (activations act_row apart, outputs out_col apart),
// as mul_mat gives a one-token batch of such heads, in `order` (mul_mat_order); and the work
// memory such a tile takes.
void mul_mat_heads(const Tensor* dst, DotOrder order, const MulMatBatch& batch, int64_t row0, int64_t rows, int64_t heads);
size_t mul_mat_heads_work_size(const Tensor* dst, DotOrder order, int64_t rows, int64_t heads);
// The order mul_mat takes dst's dots in, all its columns together.
DotOrder mul_mat_order(const Tensor* dst);

// Decode's products of one activation column by several weights (a layer's Q, K and V; its gate
// and up; schedule.h): one job in which each thread converts the column once, then takes
// its share of all their output rows as one range, the products' rows one after another. Each
// output's bits are mul_mat's.
struct ColumnProduct {
  const Tensor* dst;
  bool weight_packed;  // as ComputeParams::weight_packed
};
void mul_mat_column_group(const ComputeParams& p, std::span<const ColumnProduct> products);
// Whether mul_mat runs dst as a group of one (a decode product, ComputeParams::column_requests).
bool mul_mat_is_column_product(const Tensor* dst);
size_t mul_mat_column_group_work_size(std::span<const ColumnProduct> products, int nth);
// Whether the column group kernel can run dst with `first`, siblings of one chain
// (Plan::first_siblings: products of the same column): both in one dot format, outside the AMX
// path. Which siblings may run early is the schedule's to say (schedule.h).
bool mul_mat_joins_column_group(const Tensor* first, const Tensor* dst);

// SOFT_MAX of one row: d[0..n) = softmax(x * scale + m), reading x and m (nullptr: no mask)
// only before `live`, the end of the mask row's unmasked prefix (mask_live_prefix); w is n
// floats of work memory.
void soft_max_row(const float* x, const float* m, int64_t live, float scale, float* d, int64_t n, float* w);
int64_t mask_live_prefix(const float* m, int64_t n);

// Dtypes accepted as MUL_MAT src0 / GET_ROWS table / CPY destination.
bool mul_mat_supports(DType weight);
bool get_rows_supports(DType table);
bool copy_supports(DType from, DType to);

}  // namespace engine::cpu
