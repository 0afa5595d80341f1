#pragma once
// Dot products of one weight row with one activation row, as ggml computes them: the
// activation is first converted to the weight type's "vec_dot" format (Q8_0, Q8_1, Q8_K,
// F16, BF16 or F32) and the product runs on the integer / half values.
#include <cstddef>
#include <cstdint>

#include "cpu/cpu_features.h"
#include "engine/dtype.h"

namespace engine::cpu {

// True when `weight` has a CPU dot product.
bool dot_supported(DType weight);
// The activation format the dot product of `weight` reads; throws for unsupported dtypes.
DType vec_dot_type(DType weight);
// Converts n floats (a whole number of blocks) into vec_dot_type(weight) at dst.
void quantize_activation(DType weight, const float* x, void* dst, int64_t n);
// How a matrix multiply reaches its dot products. llama.cpp's CPU backend evaluates them in
// a different floating-point order for a batch of activation columns (its tiled GEMM) than
// for a single column (one vec_dot per row); the engine follows both so logits agree.
enum class DotOrder {
  kRow,        // one activation column: per-row vec_dot order
  kRowPadded,  // per-row order over a KV span that llama.cpp pads with zeros to 256 positions
  kBatch,      // two or more activation columns: tiled GEMM order
};

// The order llama.cpp's mul_mat would use for a weight of `rows` rows of k elements times
// `cols` activation columns: kBatch when its tiled GEMM takes the multiply, else kRow
// (kRowPadded when k is a KV span, see kMulMatKvSpan).
DotOrder dot_order(DType weight, int64_t k, int64_t rows, int64_t cols, bool kv_span = false);

// The order of activation column `col` of `cols` in a multiply of order `order`: llama.cpp's
// repacked multiply (Q4_0, Q4_K, Q2_K) gives whole groups of four columns of each batch to its
// GEMM and the leftover columns, one at a time, to its GEMV (the single-column order).
DotOrder column_order(DType weight, DotOrder order, int64_t col, int64_t cols);

// How a tile's streamed weight is requested ahead of its reads (prefetch_stream): not at all (the
// hardware prefetcher alone), into L2 far ahead, or besides that into L1 a short way ahead. Which
// streams fastest differs by CPU and dtype (decode_tuning.h); each asks for no more than the next.
enum class StreamRequests : uint8_t { kNone, kFar, kNearAndFar };

// Dot of n elements: w_row in `weight`, act_row in vec_dot_type(weight). For tests and
// benchmarks: its work memory (dot_tile_work_size) is allocated on each call.
float dot(DType weight, int64_t n, const void* w_row, const void* act_row, DotOrder order = DotOrder::kRow);

// A block of a matrix multiply: `rows` weight rows (w_stride bytes apart) times `cols`
// activation rows in vec_dot_type (a_stride bytes apart), each dot of n elements; the result of
// (row r, column c) is the float at out + r * out_row + c * out_col (byte strides). With
// `packed`, the weight is in repack.h's layout and w is the start of a group of its rows (of a
// run of groups where chunk_blocks, packed_chunk_blocks, is not 0).
// `work` is work_size bytes of work memory (work_memory.h) for the tile alone, at least
// dot_tile_work_size; a tile given less throws.
struct DotTile {
  int64_t n;
  const char* w;
  size_t w_stride;
  int64_t rows;
  const char* a;
  size_t a_stride;
  int64_t cols;
  char* out;
  size_t out_row;
  size_t out_col;
  bool packed = false;
  char* work = nullptr;
  size_t work_size = 0;
  StreamRequests requests = StreamRequests::kNearAndFar;
  int64_t chunk_blocks = 0;  // packed: the weight's chunks (repack.h), 0 where its groups lie whole
};

// Float tiled dots this short (attention's q.k over a head) take a kernel without a horizontal
// sum per output: it loads two vectors per FMA, which only short dots repay.
constexpr int64_t kShortDot = 128;
inline bool short_dot(int64_t n) { return n <= kShortDot && n % 16 == 0; }

// Every dot of the tile in `order` (column_order already applied: one order for all columns),
// on the instruction set in use (one column: the dtype's tuned form and stream requests,
// decode_tuning.h);
// bit-identical to calling dot() for each.
void dot_tile(DType weight, DotOrder order, const DotTile& t);
// A one-column tile on the dtype's tuned form, its weight requested ahead as `requests` says
// rather than as tuned (the CPU backend's learned way, requests_learner.h).
void dot_column(DType weight, DotOrder order, const DotTile& t, StreamRequests requests);
// Bytes of DotTile::work that dot_tile(weight, order, t) takes, whichever form it runs on,
// reading only t's shape (n, w_stride, rows, cols, packed); never less for more rows or columns.
size_t dot_tile_work_size(DType weight, DotOrder order, const DotTile& t);
// The same on a given instruction set (at most cpu_simd_level()): decode_tuning.cpp times the forms.
void dot_tile_at(SimdLevel level, DType weight, DotOrder order, const DotTile& t);
size_t dot_tile_work_size_at(SimdLevel level, DType weight, DotOrder order, const DotTile& t);

// Forces the portable scalar code (true) or the fastest the CPU supports (false). The default
// is the fastest unless the environment sets ENGINE_CPU_SCALAR=1. Meant for tests.
void set_cpu_features_override(bool scalar_only);
// True when a SIMD instruction set is in use (see cpu_features.h for the levels).
bool simd_active();

}  // namespace engine::cpu
