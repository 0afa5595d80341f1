// Part of the SIMD kernel bodies (simd_kernels_impl.h lists the parts, in order): the vector
// vocabulary's shared names, tile iteration, work memory and prefetching.

using engine::quant::BlockQ4_0;
using engine::quant::BlockQ4_1;
using engine::quant::BlockQ5_0;
using engine::quant::BlockQ5_1;
using engine::quant::BlockQ8_0;
using engine::quant::BlockQ8_1;
using engine::quant::BlockQ8_K;
using engine::quant::KBlockInts;
using engine::quant::kQK;
using engine::quant::kQK_K;

constexpr int kVecLanes = 16;

inline int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }

// Row / column pointers of a tile block, clamped to the tile (edge blocks recompute the last
// row or column; only valid outputs are stored).
template <int N>
void block_ptrs(const char* base, size_t stride, int64_t first, int64_t count, const char* (&p)[N]) {
  for (int i = 0; i < N; ++i) p[i] = base + min_i64(first + i, count - 1) * static_cast<int64_t>(stride);
}

inline void store_out(const DotTile& t, int64_t r, int64_t c, float v) {
  if (r < t.rows && c < t.cols) std::memcpy(t.out + r * t.out_row + c * t.out_col, &v, sizeof v);
}

// Block i of the tile's activation column c.
template <typename Act>
const Act& act_block(const DotTile& t, int64_t c, int64_t i) {
  return reinterpret_cast<const Act*>(t.a + c * static_cast<int64_t>(t.a_stride))[i];
}

// Block i of the packed group (repack.h) that holds tile row r, chunked or not.
inline const char* packed_block(const DotTile& t, int64_t r, int64_t i, size_t block_bytes) {
  return t.w + packed_block_offset(r, i, block_bytes, t.w_stride, t.chunk_blocks);
}
// The same for the dtypes whose groups always lie whole (packed_chunk_blocks never chunks Q2_K,
// Q3_K, Q5_K, Q6_K): their one-column kernels take a block per register, and the chunk test
// cost Q6_K's and Q5_K's 2-3 % from L2.
inline const char* whole_packed_block(const DotTile& t, int64_t r, int64_t i, size_t block_bytes) {
  return t.w + packed_block_offset(r, i, block_bytes, t.w_stride, 0);
}

// column_passes on a chunked weight: out of line, so the whole-group loop keeps its registers.
template <typename Acc, typename Block, typename Store>
[[gnu::noinline]] void column_passes_chunked(const DotTile& t, int64_t pass_rows, int64_t nb, size_t block_bytes, Block block,
                                             Store store) {
  constexpr int64_t kMostPasses = kRunRows / kRowLanes;  // passes hold at least a register's rows
  const int64_t step = kPackRows * static_cast<int64_t>(block_bytes), passes = kRunRows / pass_rows;
  for (int64_t r0 = 0; r0 < t.rows; r0 += kRunRows) {
    Acc acc[kMostPasses]{};
    for (int64_t i0 = 0; i0 < nb; i0 += t.chunk_blocks)
      for (int64_t p = 0; p < passes; ++p) {
        Acc here = acc[p];
        const char* blk = packed_block(t, r0 + p * pass_rows, i0, block_bytes);
        for (int64_t i = i0; i < min_i64(nb, i0 + t.chunk_blocks); ++i, blk += step) block(r0 + p * pass_rows, i, blk, here);
        acc[p] = here;
      }
    for (int64_t p = 0; p < passes; ++p) store(r0 + p * pass_rows, acc[p]);
  }
}

// A one-column kernel's walk over a packed tile, pass_rows rows a pass (the rows its registers
// hold, within one group): per pass from tile row r0, block(r0, i, blk, acc) for its nb blocks i
// in order (blk: block i of the pass's group, blocks of block_bytes a row), then store(r0, acc).
// On a chunked weight (repack.h) a run's passes go chunk by chunk in the order the chunks lie,
// each pass keeping its accumulators between its chunks: the same sums in the same order as a
// whole pass, read as one stream.
template <typename Acc, typename Block, typename Store>
[[gnu::always_inline]] inline void column_passes(const DotTile& t, int64_t pass_rows, int64_t nb, size_t block_bytes, Block block,
                                                 Store store) {
  if (t.chunk_blocks != 0) return column_passes_chunked<Acc>(t, pass_rows, nb, block_bytes, block, store);
  const int64_t step = kPackRows * static_cast<int64_t>(block_bytes);
  for (int64_t r0 = 0; r0 < t.rows; r0 += pass_rows) {
    Acc acc{};
    const char* blk = packed_block(t, r0, 0, block_bytes);
    for (int64_t i = 0; i < nb; ++i, blk += step) block(r0, i, blk, acc);
    store(r0, acc);
  }
}

// Bytes of n objects of T in a tile's work memory: whole pieces (work_memory.h), so the next
// piece is aligned for any vector type too.
template <typename T>
size_t piece_bytes(int64_t n) {
  static_assert(alignof(T) <= kWorkAlign);
  return work_bytes(static_cast<size_t>(n) * sizeof(T));
}

// The tile's work memory (DotTile::work), handed out piece by piece from its start; each kernel's
// *_work_size counts the pieces it takes. Taking more than the tile was given throws.
class TileWork {
 public:
  explicit TileWork(const DotTile& t) : next_(t.work), left_(t.work_size) {}
  template <typename T>
  T* take(int64_t n) {
    const size_t bytes = piece_bytes<T>(n);
    if (bytes > left_) [[unlikely]]
      throw Error("dot_tile: work memory too small");
    T* piece = reinterpret_cast<T*>(next_);
    next_ += bytes;
    left_ -= bytes;
    return piece;
  }

 private:
  char* next_;
  size_t left_;
};

// A packed weight read by a kernel with no packed form: group by group, each unpacked into the
// file layout in the tile's work memory (unpacked_groups_bytes of it, before the kernel's own).
inline size_t unpacked_groups_bytes(const DotTile& t) { return t.packed ? piece_bytes<char>(kPackRows * t.w_stride) : 0; }

template <typename Kernel>
void by_unpacked_groups(DType type, const DotTile& t, Kernel kernel) {
  if (!t.packed) return kernel(t);
  const size_t taken = unpacked_groups_bytes(t);
  char* rows = TileWork(t).take<char>(kPackRows * t.w_stride);
  for (int64_t r0 = 0; r0 < t.rows; r0 += kPackRows) {
    unpack_group(type, t.n, t.w, r0, t.chunk_blocks, rows);
    DotTile group = t;
    group.w = rows;
    group.rows = min_i64(kPackRows, t.rows - r0);
    group.out = t.out + r0 * static_cast<int64_t>(t.out_row);
    group.packed = false;
    group.work = t.work + taken;
    group.work_size = t.work_size - taken;
    kernel(group);
  }
}

// What each block of 32 activations contributes besides its levels, made once per tile in a
// table taken from its work memory: entry(block i of column c) at c * (n / 32) + i.
template <typename Entry>
size_t act_table_bytes(const DotTile& t) { return piece_bytes<Entry>(t.cols * (t.n / kQK)); }

template <typename Entry, typename Act, typename MakeEntry>
const Entry* act_table(const DotTile& t, TileWork& work, MakeEntry entry) {
  const int64_t nb = t.n / kQK;
  Entry* table = work.take<Entry>(t.cols * nb);
  for (int64_t c = 0; c < t.cols; ++c)
    for (int64_t i = 0; i < nb; ++i) table[c * nb + i] = entry(act_block<Act>(t, c, i));
  return table;
}

// Prefetches the part of rows [r0, r0 + RB) (clamped to the tile) that step i of n steps will
// need, so the next row block streams in while this one is computed (rows are many
// interleaved streams, more than the hardware prefetcher follows).
template <int RB>
inline void prefetch_rows(const DotTile& t, int64_t r0, int64_t i, int64_t n) {
  if (r0 >= t.rows) return;
  const int64_t rows = min_i64(RB, t.rows - r0);
  const int64_t bytes = rows * static_cast<int64_t>(t.w_stride), per_step = (bytes + n - 1) / n;
  const char* base = t.w + r0 * static_cast<int64_t>(t.w_stride);
  for (int64_t o = i * per_step; o < min_i64(bytes, (i + 1) * per_step); o += 64) __builtin_prefetch(base + o);
}

// A packed weight (or a float row after row) is one stream per thread: fetching it this far
// ahead into L2 keeps memory busy between the kernel's loads, which the hardware prefetcher
// alone does not on most CPUs and dtypes; the same lines are then pulled into L1 a short way
// (1 KiB) ahead of use. `requests` says which of these to issue (DotTile::requests; the near ones
// not where the stream is reread, as a GEMM without prepared rows does).
constexpr int64_t kStreamAhead = 16384;
constexpr int64_t kL1Ahead = 1024;
// Zero, read from memory each time on purpose: a far prefetch's address waits on this load, so
// the prefetch issues a few cycles after the block's own loads. Issued together with them, the
// far prefetches cost ~10% of a two-thread decode stream here (docs/benchmarks.md).
inline volatile size_t g_far_prefetch_wait = 0;
inline void prefetch_stream(const char* p, size_t bytes, StreamRequests requests) {
  if (requests == StreamRequests::kNone) return;
  for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(p + kStreamAhead + o + g_far_prefetch_wait, 0, 2);
  if (requests == StreamRequests::kNearAndFar)
    for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(p + kL1Ahead + o, 0, 3);
}

// A tile's requests without the near ones: for streams they measured slower on everywhere.
inline StreamRequests far_at_most(StreamRequests requests) { return std::min(requests, StreamRequests::kFar); }

// The first line boundary at or after p: a stream requested in pieces that do not start on a
// line (Q6_K's rows, 210 bytes each) asks for each line once when every piece requests the lines
// that start in it.
inline const char* line_at_or_after(const char* p) {
  return reinterpret_cast<const char*>((reinterpret_cast<uintptr_t>(p) + 63) & ~uintptr_t{63});
}

// Before block step i of n over rows r0..: packed, this thread's stream ahead; in the file
// layout, a share of the next RB rows. (Inlined by force, as the loaders below: a call inside a
// kernel loop spills every vector register.)
template <int RB>
[[gnu::always_inline]] inline void prefetch_next(const DotTile& t, int64_t r0, int64_t i, int64_t n, size_t block_bytes) {
  if (t.packed)
    prefetch_stream(packed_block(t, r0, i, block_bytes), kPackRows * block_bytes, t.requests);
  else
    prefetch_rows<RB>(t, r0 + RB, i, n);
}

// Calls block(r0, c0) over the tile: rows in groups of RB, columns in groups of CB (blockN; a
// last group of at least CB / 2 columns too, its missing columns recomputed and not stored),
// any fewer one at a time (block1).
template <int RB, int CB = 4, typename BlockN, typename Block1>
void for_blocks(const DotTile& t, BlockN blockN, Block1 block1) {
  for (int64_t r0 = 0; r0 < t.rows; r0 += RB) {
    int64_t c0 = 0;
    for (; c0 + CB <= t.cols; c0 += CB) blockN(r0, c0);
    if (c0 < t.cols && 2 * (t.cols - c0) >= CB) {
      blockN(r0, c0);
      continue;
    }
    for (; c0 < t.cols; ++c0) block1(r0, c0);
  }
}

// Several columns: for each group of RB weight rows, prepares block i of the group once
// (prepare(wp, r0, i, &prepared[i * per_block]), wp the rows in the file layout; the next group
// prefetched meanwhile), then calls run(cols, prepared, r0, c0) for every column, cols = CB where
// CB remain, else 1. The prepared blocks are a piece of the tile's work memory.
template <typename Prepared>
size_t prepared_bytes(int64_t nb, int64_t per_block) { return piece_bytes<Prepared>(nb * per_block); }

template <int RB, typename Prepared, int CB = 4, typename Prepare, typename Run>
void for_prepared_row_blocks(const DotTile& t, TileWork& work, int64_t nb, int64_t per_block, Prepare prepare, Run run) {
  Prepared* prepared = work.take<Prepared>(nb * per_block);
  for (int64_t r0 = 0; r0 < t.rows; r0 += RB) {
    const char* wp[RB];
    block_ptrs(t.w, t.w_stride, r0, t.rows, wp);
    for (int64_t i = 0; i < nb; ++i) {
      if (!t.packed) prefetch_rows<RB>(t, r0 + RB, i, nb);
      prepare(wp, r0, i, prepared + i * per_block);
    }
    int64_t c0 = 0;
    for (; c0 + CB <= t.cols; c0 += CB) run(std::integral_constant<int, CB>{}, prepared, r0, c0);
    for (; c0 < t.cols; ++c0) run(std::integral_constant<int, 1>{}, prepared, r0, c0);
  }
}
