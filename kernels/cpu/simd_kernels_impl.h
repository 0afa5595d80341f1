







// The SIMD kernels' bodies, written once over a small vector vocabulary and compiled per
// instruction set: simd_avx2.cpp and simd_avx512.cpp each include this file inside an
// anonymous namespace of their own, after defining
//   VF (16 float lanes) with vf_zero, vf_set1, vf_load_f32, vf_load_f16, vf_load_first (the first
//   n elements, zeros after), vf_add, vf_sub, vf_mul, vf_div, vf_fma (a*b+c), vf_fold8 (lanes
//   i + (i + 8)), vf_store, vf_store_f16, vf_flush_denormal, vf_bf16_even, vf_bf16_odd,
//   vf_exp_scale (j * 2^n, 0 / inf where |n| > 192);
//   dpbf16(acc, w, a) with the AVX512_BF16 semantics (see dot_float.cpp);
//   ENGINE_SIMD_VNNI (1: the 256-bit integer dot-product instruction exists), ENGINE_TILE_ROWS and
//   ENGINE_TILE_COLS (the float GEMM's register block of outputs), ENGINE_VF_REDUCE4 where
//   vf_reduce4 (four vf_reduce at once, as an __m128) exists;
//   VI / VR (kRowLanes 32-bit integer / float lanes: 16 on AVX-512, 8 on AVX2) with
//   load_row_quads, vi_load, vi_widen_i8, vr_rows_f16, vi_* and vr_* (see simd_avx512.cpp), for kernels that give each weight row a
//   lane (Q4_0, Q4_K) or each row its eight lanes (legacy blocks: kRowLanes / 8 rows a register).
// The quantized orders come from llama.cpp's AVX2 code (eight-lane accumulators, or one float
// per output); wider registers only hold more rows at once.
// Every function here evaluates floating point exactly as its scalar twin does (same roundings
// in the same order per output); only which outputs are computed together differs.
// This file has no include guard and no includes on purpose: its includer provides both.

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

// Block i of the packed group (repack.h) that holds tile row r.
inline const char* packed_block(const DotTile& t, int64_t r, int64_t i, size_t block_bytes) {
  return t.w + (r / kPackRows * kPackRows) * static_cast<int64_t>(t.w_stride) + i * kPackRows * static_cast<int64_t>(block_bytes);
}

// n objects of T in a per-thread buffer aligned for T (vector types included), kept across calls
// so no call allocates once the largest size was seen; one buffer per type.
template <typename T>
T* thread_buffer(size_t n) {
  thread_local std::vector<unsigned char> bytes;
  if (bytes.size() < n * sizeof(T) + alignof(T)) bytes.resize(n * sizeof(T) + alignof(T));
  void* p = bytes.data();
  size_t space = bytes.size();
  return static_cast<T*>(std::align(alignof(T), n * sizeof(T), p, space));
}

// What each block of 32 activations contributes besides its levels, made once per tile in a
// per-thread table: entry(block i of column c) at c * (n / 32) + i.
template <typename Entry, typename Act, typename MakeEntry>
const Entry* act_table(const DotTile& t, MakeEntry entry) {
  const int64_t nb = t.n / kQK;
  Entry* table = thread_buffer<Entry>(static_cast<size_t>(t.cols * nb));
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
// alone does not; the same lines are then pulled into L1 a short way (1 KiB) ahead of use
// (into_l1; not where the stream is reread, as a GEMM without prepared rows does).
constexpr int64_t kStreamAhead = 16384;
constexpr int64_t kL1Ahead = 1024;
// Zero, read from memory each time on purpose: a far prefetch's address waits on this load, so
// the prefetch issues a few cycles after the block's own loads. Issued together with them, the
// far prefetches cost ~10% of a two-thread decode stream here (docs/benchmarks.md).
inline volatile size_t g_far_prefetch_wait = 0;
inline void prefetch_stream(const char* p, size_t bytes, bool into_l1 = true) {
  for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(p + kStreamAhead + o + g_far_prefetch_wait, 0, 2);
  if (into_l1)
    for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(p + kL1Ahead + o, 0, 3);
}

// Before block step i of n over rows r0..: packed, this thread's stream ahead; in the file
// layout, a share of the next RB rows. (Inlined by force, as the loaders below: a call inside a
// kernel loop spills every vector register.)
template <int RB>
[[gnu::always_inline]] inline void prefetch_next(const DotTile& t, int64_t r0, int64_t i, int64_t n, size_t block_bytes) {
  if (t.packed)
    prefetch_stream(packed_block(t, r0, i, block_bytes), kPackRows * block_bytes);
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
// CB remain, else 1.
template <int RB, typename Prepared, int CB = 4, typename Prepare, typename Run>
void for_prepared_row_blocks(const DotTile& t, int64_t nb, int64_t per_block, Prepare prepare, Run run) {
  Prepared* prepared = thread_buffer<Prepared>(static_cast<size_t>(nb * per_block));
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

// ---------------------------------------------------------------------------------------------
// Float dots (F32, F16, BF16), llama.cpp's AVX-512 orders.

inline VF vf_load(const float* p) { return vf_load_f32(p); }
inline VF vf_load(const uint16_t* p) { return vf_load_f16(p); }

// FloatLanes8::hsum in registers: high half plus low half, lanes 0+2 and 1+3, then those two.
inline float hsum_lanes8(__m256 v) {
  const __m128 h = _mm_add_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
  const __m128 pairs = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(pairs, _mm_movehdup_ps(pairs)));
}

// reduce_lanes in registers: lanes i + (i + 8), then the eight-lane tree.
inline float vf_reduce(VF v) { return hsum_lanes8(vf_fold8(v)); }

// The tiled orders' end: output (r0 + r, c0 + c) is acc[r][c]'s lanes summed by the lane tree.
// Four rows of a column (AVX-512's block height) are reduced together and stored as one run
// where the output rows are adjacent floats.
template <int RB, int CB>
void store_lane_sums(const DotTile& t, const VF (&acc)[RB][CB], int64_t r0, int64_t c0) {
#ifdef ENGINE_VF_REDUCE4
  if constexpr (RB == 4) {
    for (int c = 0; c < CB; ++c) {
      const VF column[4] = {acc[0][c], acc[1][c], acc[2][c], acc[3][c]};
      const __m128 sums = vf_reduce4(column);
      if (t.out_row == sizeof(float) && r0 + 4 <= t.rows && c0 + c < t.cols) {
        _mm_storeu_ps(reinterpret_cast<float*>(t.out + r0 * t.out_row + (c0 + c) * t.out_col), sums);
        continue;
      }
      alignas(16) float s[4];
      _mm_store_ps(s, sums);
      for (int r = 0; r < 4; ++r) store_out(t, r0 + r, c0 + c, s[r]);
    }
    return;
  }
#endif
  for (int r = 0; r < RB; ++r)
    for (int c = 0; c < CB; ++c) store_out(t, r0 + r, c0 + c, vf_reduce(acc[r][c]));
}

// Tiled GEMM order: one 16-lane FMA accumulator per output, then the lane tree. Weights in f32,
// activations of type A (float or half).
template <typename A, int RB, int CB>
void float_tiled_block(const DotTile& t, int64_t r0, int64_t c0) {
  const char* wp[RB];
  const char* ap[CB];
  block_ptrs(t.w, t.w_stride, r0, t.rows, wp);
  block_ptrs(t.a, t.a_stride, c0, t.cols, ap);
  VF acc[RB][CB];
  for (int r = 0; r < RB; ++r)
    for (int c = 0; c < CB; ++c) acc[r][c] = vf_zero();
  for (int64_t k = 0; k < t.n; k += kVecLanes) {
    VF av[CB];
    for (int c = 0; c < CB; ++c) av[c] = vf_load(reinterpret_cast<const A*>(ap[c]) + k);
    for (int r = 0; r < RB; ++r) {
      const VF wv = vf_load_f32(reinterpret_cast<const float*>(wp[r]) + k);
      for (int c = 0; c < CB; ++c) acc[r][c] = vf_fma(wv, av[c], acc[r][c]);
    }
  }
  store_lane_sums(t, acc, r0, c0);
}

template <typename A>
void float_tiled(const DotTile& t) {
  constexpr int RB = ENGINE_TILE_ROWS, CB = ENGINE_TILE_COLS;
  for_blocks<RB, CB>(
      t, [&](int64_t r0, int64_t c0) { float_tiled_block<A, RB, CB>(t, r0, c0); },
      [&](int64_t r0, int64_t c0) { float_tiled_block<A, RB, 1>(t, r0, c0); });
}

// F16: each block's weight rows widened to floats once (exactly) for all the tile's columns,
// just before they are used (still in cache); the activations are widened as they are loaded.
void f16_tiled(const DotTile& t) {
  constexpr int RB = ENGINE_TILE_ROWS, CB = ENGINE_TILE_COLS;
  float* wide = thread_buffer<float>(static_cast<size_t>(RB * t.n));
  for (int64_t r0 = 0; r0 < t.rows; r0 += RB) {
    DotTile f = t;
    f.rows = min_i64(RB, t.rows - r0);
    for (int64_t r = 0; r < f.rows; ++r) {
      const auto* w = reinterpret_cast<const uint16_t*>(t.w + (r0 + r) * static_cast<int64_t>(t.w_stride));
      for (int64_t k = 0; k < t.n; k += kVecLanes) vf_store(wide + r * t.n + k, vf_load_f16(w + k));
    }
    f.w = reinterpret_cast<const char*>(wide);
    f.w_stride = static_cast<size_t>(t.n) * sizeof(float);
    f.out = t.out + r0 * static_cast<int64_t>(t.out_row);
    for_blocks<RB, CB>(
        f, [&](int64_t, int64_t c0) { float_tiled_block<uint16_t, RB, CB>(f, 0, c0); },
        [&](int64_t, int64_t c0) { float_tiled_block<uint16_t, RB, 1>(f, 0, c0); });
  }
}

// Short dots (n <= kShortDot, attention's q.k): the tiled order with each output's
// 16 lanes spread over registers and 16 rows across their lanes. The tile's weight rows are
// widened and transposed once (16-row groups, element-major); each FMA takes one element of 16
// rows and one broadcast activation, and the lane tree becomes register adds, ending in 16
// adjacent outputs. Each lane sees the same FMAs in the same order, so the sums are the tiled
// order's.

// The lane tree of CB columns against one transposed group wg: lanes l and l + 8 are built
// together and summed at once (then i + (i + 4), then (0 + 2) + (1 + 3)), so only the tree's
// partial sums stay live and each weight vector serves CB columns.
template <int CB>
void short_group_block(const float* wg, const float* const (&a)[CB], int64_t n, VF (&sums)[CB]) {
  VF even[CB], odd[CB];  // (t0 + t2) and (t1 + t3), t_i being lanes i + (i + 4) after the first fold
  constexpr int kTreeOrder[4] = {0, 2, 1, 3};
#pragma GCC unroll 4
  for (int step = 0; step < 4; ++step) {
    const int i = kTreeOrder[step];
    VF t[CB];
#pragma GCC unroll 2
    for (int fold = 0; fold < 2; ++fold) {
      const int l = i + 4 * fold;
      VF lo[CB], hi[CB];
      for (int c = 0; c < CB; ++c) lo[c] = hi[c] = vf_zero();
#pragma GCC unroll 8
      for (int64_t k = 0; k < n; k += kVecLanes) {
        const VF wl = vf_load_f32(wg + (k + l) * kVecLanes), wh = vf_load_f32(wg + (k + l + 8) * kVecLanes);
        for (int c = 0; c < CB; ++c) {
          lo[c] = vf_fma(wl, vf_set1(a[c][k + l]), lo[c]);
          hi[c] = vf_fma(wh, vf_set1(a[c][k + l + 8]), hi[c]);
        }
      }
      for (int c = 0; c < CB; ++c) t[c] = fold == 0 ? vf_add(hi[c], lo[c]) : vf_add(vf_add(hi[c], lo[c]), t[c]);
    }
    for (int c = 0; c < CB; ++c) {
      VF& half = step < 2 ? even[c] : odd[c];
      half = step % 2 == 0 ? t[c] : vf_add(half, t[c]);
    }
  }
  for (int c = 0; c < CB; ++c) sums[c] = vf_add(even[c], odd[c]);
}

template <typename W, typename A>
void short_tiled(const DotTile& t) {
  constexpr int CB = 4;
  const int64_t n = t.n, groups = (t.rows + kVecLanes - 1) / kVecLanes;
  float* wt = thread_buffer<float>(static_cast<size_t>((groups * kVecLanes + t.cols) * n));
  float* at = wt + groups * kVecLanes * n;
  for (int64_t r = 0; r < groups * kVecLanes; ++r) {  // rows past the tile repeat the last
    const W* w = reinterpret_cast<const W*>(t.w + min_i64(r, t.rows - 1) * static_cast<int64_t>(t.w_stride));
    float* column = wt + (r / kVecLanes) * kVecLanes * n + r % kVecLanes;
    for (int64_t k = 0; k < n; k += kVecLanes) {
      float wide[kVecLanes];
      vf_store(wide, vf_load(w + k));
      for (int l = 0; l < kVecLanes; ++l) column[(k + l) * kVecLanes] = wide[l];
    }
  }
  for (int64_t c = 0; c < t.cols; ++c) {
    const A* a = reinterpret_cast<const A*>(t.a + c * static_cast<int64_t>(t.a_stride));
    for (int64_t k = 0; k < n; k += kVecLanes) vf_store(at + c * n + k, vf_load(a + k));
  }
  auto store = [&](int64_t r0, int64_t c, VF sums) {
    if (t.out_row == sizeof(float) && r0 + kVecLanes <= t.rows) {
      vf_store(reinterpret_cast<float*>(t.out + r0 * t.out_row + c * t.out_col), sums);
      return;
    }
    float s[kVecLanes];
    vf_store(s, sums);
    for (int r = 0; r < kVecLanes; ++r) store_out(t, r0 + r, c, s[r]);
  };
  for (int64_t g = 0; g < groups; ++g) {
    const float* wg = wt + g * kVecLanes * n;
    const int64_t r0 = g * kVecLanes;
    int64_t c0 = 0;
    for (; c0 + CB <= t.cols; c0 += CB) {
      const float* a[CB];
      for (int c = 0; c < CB; ++c) a[c] = at + (c0 + c) * n;
      VF sums[CB];
      short_group_block<CB>(wg, a, n, sums);
      for (int c = 0; c < CB; ++c) store(r0, c0 + c, sums[c]);
    }
    for (; c0 < t.cols; ++c0) {
      const float* a[1] = {at + c0 * n};
      VF sums[1];
      short_group_block<1>(wg, a, n, sums);
      store(r0, c0, sums[0]);
    }
  }
}

// BF16 tiled order: one dot-product accumulator per output.
template <bool Native, int RB, int CB>
void bf16_tiled_block(const DotTile& t, int64_t r0, int64_t c0) {
  const char* wp[RB];
  const char* ap[CB];
  block_ptrs(t.w, t.w_stride, r0, t.rows, wp);
  block_ptrs(t.a, t.a_stride, c0, t.cols, ap);
  VF acc[RB][CB];
  for (int r = 0; r < RB; ++r)
    for (int c = 0; c < CB; ++c) acc[r][c] = vf_zero();
  for (int64_t k = 0; k < t.n; k += 2 * kVecLanes)
    for (int r = 0; r < RB; ++r)
      for (int c = 0; c < CB; ++c)
        acc[r][c] = dpbf16<Native>(acc[r][c], reinterpret_cast<const uint16_t*>(wp[r]) + k,
                                   reinterpret_cast<const uint16_t*>(ap[c]) + k);
  store_lane_sums(t, acc, r0, c0);
}

template <bool Native>
void bf16_tiled(const DotTile& t) {
  constexpr int RB = ENGINE_TILE_ROWS, CB = ENGINE_TILE_COLS;
  for_blocks<RB, CB>(
      t, [&](int64_t r0, int64_t c0) { bf16_tiled_block<Native, RB, CB>(t, r0, c0); },
      [&](int64_t r0, int64_t c0) { bf16_tiled_block<Native, RB, 1>(t, r0, c0); });
}

constexpr int64_t kRowStepElems = 4 * kVecLanes;

// vec_dot order for one weight row and CB activation columns (floats): per column four
// accumulators over 64-element steps (a zero-padded last step when `padded`), folded 0+2, 1+3,
// then 0+1 into folded[c]; the lane tree is the caller's. Each weight vector is loaded once
// for all columns. Returns where leftovers start.
template <int CB, typename TW>
int64_t float_row_folded(int64_t n, const TW* w, const float* const (&a)[CB], bool padded, VF (&folded)[CB]) {
  VF acc[CB][4];
  for (int c = 0; c < CB; ++c)
    for (int j = 0; j < 4; ++j) acc[c][j] = vf_zero();
  int64_t i = 0;
  for (; i + kRowStepElems <= n; i += kRowStepElems) {
    prefetch_stream(reinterpret_cast<const char*>(w + i), kRowStepElems * sizeof(TW));  // rows follow each other
    for (int j = 0; j < 4; ++j) {
      const VF wv = vf_load(w + i + j * kVecLanes);
      for (int c = 0; c < CB; ++c) acc[c][j] = vf_fma(wv, vf_load_f32(a[c] + i + j * kVecLanes), acc[c][j]);
    }
  }
  if (padded && i < n) {
    for (int j = 0; j < 4; ++j) {
      const int64_t first = i + j * kVecLanes, count = first >= n ? 0 : min_i64(n - first, kVecLanes);
      const VF wv = vf_load_first(w + first, count);
      for (int c = 0; c < CB; ++c) acc[c][j] = vf_fma(wv, vf_load_first(a[c] + first, count), acc[c][j]);
    }
    i = n;
  }
  for (int c = 0; c < CB; ++c) folded[c] = vf_add(vf_add(acc[c][0], acc[c][2]), vf_add(acc[c][1], acc[c][3]));
  return i;
}

// What follows the vector part: F32 rows go on with the FMA chain, F16 rows sum in double.
inline float float_row_tail(int64_t n, int64_t i, const float* w, const float* a, float sum) {
  for (; i < n; ++i) sum = __builtin_fmaf(w[i], a[i], sum);
  return sum;
}
inline float float_row_tail(int64_t n, int64_t i, const uint16_t* w, const float* a, float vector_sum) {
  double sum = vector_sum;
  for (; i < n; ++i) sum += static_cast<double>(fp16_to_fp32(w[i]) * a[i]);
  return static_cast<float>(sum);
}

// Every output of a tile in the vec_dot order, activations already floats at a (an F16 row
// converts only its weights). Where the instruction set has vf_reduce4, four columns share
// each weight row's loads and one lane-tree reduction (attention's query heads on one K / V
// head: short rows, where the reduction costs as much as the multiplies).
template <typename TW>
void float_rows(const DotTile& t, const char* a, size_t a_stride, bool padded) {
  const auto column = [&](int64_t c) { return reinterpret_cast<const float*>(a + c * static_cast<int64_t>(a_stride)); };
  for (int64_t r = 0; r < t.rows; ++r) {
    const auto* w = reinterpret_cast<const TW*>(t.w + r * static_cast<int64_t>(t.w_stride));
    int64_t c = 0;
#ifdef ENGINE_VF_REDUCE4
    for (; c + 4 <= t.cols; c += 4) {
      const float* ac[4] = {column(c), column(c + 1), column(c + 2), column(c + 3)};
      VF folded[4];
      const int64_t i = float_row_folded(t.n, w, ac, padded, folded);
      alignas(16) float sums[4];
      _mm_store_ps(sums, vf_reduce4(folded));
      for (int k = 0; k < 4; ++k) store_out(t, r, c + k, float_row_tail(t.n, i, w, ac[k], sums[k]));
    }
#endif
    for (; c < t.cols; ++c) {
      const float* ac[1] = {column(c)};
      VF folded[1];
      const int64_t i = float_row_folded(t.n, w, ac, padded, folded);
      store_out(t, r, c, float_row_tail(t.n, i, w, ac[0], vf_reduce(folded[0])));
    }
  }
}

// vec_dot order for BF16: two dot-product accumulators over 64-element steps.
template <bool Native>
float bf16_row(int64_t n, const uint16_t* w, const uint16_t* a, bool padded) {
  VF acc0 = vf_zero(), acc1 = vf_zero();
  int64_t i = 0;
  for (; i + kRowStepElems <= n; i += kRowStepElems) {
    acc0 = dpbf16<Native>(acc0, w + i, a + i);
    acc1 = dpbf16<Native>(acc1, w + i + 2 * kVecLanes, a + i + 2 * kVecLanes);
  }
  if (padded && i < n) {
    uint16_t wt[kRowStepElems] = {}, at[kRowStepElems] = {};
    std::memcpy(wt, w + i, static_cast<size_t>(n - i) * sizeof(uint16_t));
    std::memcpy(at, a + i, static_cast<size_t>(n - i) * sizeof(uint16_t));
    acc0 = dpbf16<Native>(acc0, wt, at);
    acc1 = dpbf16<Native>(acc1, wt + 2 * kVecLanes, at + 2 * kVecLanes);
    i = n;
  }
  double sum = vf_reduce(acc0);
  sum += vf_reduce(acc1);
  for (; i < n; ++i) sum += static_cast<double>(bf16_to_fp32(w[i]) * bf16_to_fp32(a[i]));
  return static_cast<float>(sum);
}

template <typename RowFn>
void per_output(const DotTile& t, RowFn fn) {
  for (int64_t r = 0; r < t.rows; ++r)
    for (int64_t c = 0; c < t.cols; ++c) store_out(t, r, c, fn(t.w + r * t.w_stride, t.a + c * t.a_stride));
}

template <bool Native>
bool float_dot_tile(DType weight, DotOrder order, const DotTile& t) {
  const bool tiled = order == DotOrder::kBatch, padded = order == DotOrder::kRowPadded;
  switch (weight) {
    case DType::F32:
      if (tiled && short_dot(t.n)) return short_tiled<float, float>(t), true;
      if (tiled) return float_tiled<float>(t), true;
      return float_rows<float>(t, t.a, t.a_stride, padded), true;
    case DType::F16: {
      if (tiled && short_dot(t.n)) return short_tiled<uint16_t, uint16_t>(t), true;
      if (tiled) return f16_tiled(t), true;
      // Every activation column widened once for all the tile's rows.
      float* wide = thread_buffer<float>(static_cast<size_t>(t.n * t.cols));
      for (int64_t c = 0; c < t.cols; ++c) {
        const auto* a = reinterpret_cast<const uint16_t*>(t.a + c * static_cast<int64_t>(t.a_stride));
        int64_t k = 0;
        for (; k + kVecLanes <= t.n; k += kVecLanes) vf_store(wide + c * t.n + k, vf_load_f16(a + k));
        for (; k < t.n; ++k) wide[c * t.n + k] = fp16_to_fp32(a[k]);
      }
      return float_rows<uint16_t>(t, reinterpret_cast<const char*>(wide), static_cast<size_t>(t.n) * sizeof(float), padded),
             true;
    }
    case DType::BF16:
      if (tiled) return bf16_tiled<Native>(t), true;
      per_output(t, [&](const char* w, const char* a) {
        return bf16_row<Native>(t.n, reinterpret_cast<const uint16_t*>(w), reinterpret_cast<const uint16_t*>(a), padded);
      });
      return true;
    default: return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Integer helpers (256-bit).

inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// acc + eight int32 lanes, lane L = sum of x*y over bytes 4L..4L+3; x unsigned, y signed.
inline __m256i dot_u8_lanes(__m256i acc, __m256i x, __m256i y) {
#if ENGINE_SIMD_VNNI
  return _mm256_dpbusd_epi32(acc, x, y);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(x, y), _mm256_set1_epi16(1)));
#endif
}

// Eight int32 lanes of sum(scale * x * y) over bytes 4L..4L+3; x unsigned (< 64), scale an
// int16 per byte pair (bytes 0..15 take the low half's scale, 16..31 the high half's).
inline __m256i dot_u8_scaled(__m256i x, __m256i y, __m256i scale16) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(x, y), scale16);
}

// Lane r of the result = sum of the eight lanes of v[r].
inline __m256i sum_rows8(const __m256i* v) {
  const __m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
  const __m256i b = _mm256_hadd_epi32(_mm256_hadd_epi32(v[4], v[5]), _mm256_hadd_epi32(v[6], v[7]));
  return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31));
}

inline int32_t hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
  return _mm_cvtsi128_si32(s);
}


// The 32 unsigned nibbles of 16 bytes in element order: low nibbles, then high nibbles.
inline __m256i nibbles32(const uint8_t* qs) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i m = _mm_set1_epi8(0x0F);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(b, 4), m), _mm_and_si128(b, m));
}

// 32 bits of qh spread to one byte each (0 or 0x10 = the fifth bit of a 5-bit level).
inline __m256i fifth_bits(const uint8_t* qh_bytes) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  const __m256i shuf = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0);
  const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int32_t>(qh)), shuf);
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit), _mm256_set1_epi8(0x10));
}

// Exact for every finite half, as fp16_to_fp32.
inline float half(uint16_t h) { return _cvtsh_ss(h); }

// ---------------------------------------------------------------------------------------------
// Legacy blocks, AVX2 eight-lane order: per output eight float lanes, lanes += (dw * da) *
// exact lane sums per block, the Q8_1 forms also a scalar fused running sum of m * s.

struct Q8_0Levels {  // signed levels against Q8_0
  using Block = BlockQ8_0;
  static constexpr bool kSigned = true;
  static __m256i levels(const Block& b) { return load256(b.qs); }
};
struct Q5_0Levels {
  using Block = BlockQ5_0;
  static constexpr bool kSigned = true;
  static __m256i levels(const Block& b) {
    return _mm256_sub_epi8(_mm256_or_si256(nibbles32(b.qs), fifth_bits(b.qh)), _mm256_set1_epi8(16));
  }
};
struct Q4_1Levels {  // unsigned levels against Q8_1
  using Block = BlockQ4_1;
  static constexpr bool kSigned = false;
  static __m256i levels(const Block& b) { return nibbles32(b.qs); }
};
struct Q5_1Levels {
  using Block = BlockQ5_1;
  static constexpr bool kSigned = false;
  static __m256i levels(const Block& b) { return _mm256_or_si256(nibbles32(b.qs), fifth_bits(b.qh)); }
};

constexpr int kLaneRows = kRowLanes / 8;  // weight rows whose eight lanes share a register

// The activation block a legacy weight block is dotted with: Q8_0 for signed levels, else Q8_1.
template <typename L>
using LegacyAct = std::conditional_t<L::kSigned, BlockQ8_0, BlockQ8_1>;

// RG registers of kLaneRows rows each, times CB columns; act_d: each column's block scales.
template <typename L, int RG, int CB>
void legacy_lanes_block(const DotTile& t, const float* act_d, int64_t r0, int64_t c0) {
  using Block = typename L::Block;
  using Act = LegacyAct<L>;
  constexpr int RB = RG * kLaneRows;
  const int64_t nb = t.n / kQK;
  const char* wp[RB];
  const char* ap[CB];
  block_ptrs(t.w, t.w_stride, r0, t.rows, wp);
  block_ptrs(t.a, t.a_stride, c0, t.cols, ap);
  int64_t col[CB];
  for (int c = 0; c < CB; ++c) col[c] = min_i64(c0 + c, t.cols - 1);
  VR acc[RG][CB];
  float mins[RB][CB] = {};
  for (int g = 0; g < RG; ++g)
    for (int c = 0; c < CB; ++c) acc[g][c] = vr_zero();
  for (int64_t i = 0; i < nb; ++i) {
    VI lv[RG];
    VR dw[RG];
    prefetch_rows<RB>(t, r0 + RB, i, nb);
    for (int g = 0; g < RG; ++g) {
      __m256i parts[kLaneRows];
      float d[kLaneRows];
      for (int p = 0; p < kLaneRows; ++p) {
        const Block& b = reinterpret_cast<const Block*>(wp[g * kLaneRows + p])[i];
        parts[p] = L::levels(b);
        d[p] = half(b.d);
      }
      lv[g] = L::kSigned ? vi_signed_levels(vi_join(parts)) : vi_join(parts);
      dw[g] = vr_set_groups(d);
    }
    for (int c = 0; c < CB; ++c) {
      const Act& a = reinterpret_cast<const Act*>(ap[c])[i];
      const VI av = vi_repeat(load256(a.qs));
      const VI start = L::kSigned ? vi_signed_offset(av) : vi_set1(0);
      const VR da = vr_set1(act_d[col[c] * nb + i]);
      if constexpr (!L::kSigned)
        for (int r = 0; r < RB; ++r)
          mins[r][c] = __builtin_fmaf(half(reinterpret_cast<const Block*>(wp[r])[i].m), half(a.s), mins[r][c]);
      for (int g = 0; g < RG; ++g) {
        const VI lanes = L::kSigned ? vi_dot_s8v(start, lv[g], av) : vi_dot_u8v(start, lv[g], av);
        acc[g][c] = vr_fma(vr_mul(dw[g], da), vr_from_i32(lanes), acc[g][c]);
      }
    }
  }
  for (int g = 0; g < RG; ++g)
    for (int c = 0; c < CB; ++c) {
      alignas(64) float v[kRowLanes];
      vr_store(v, acc[g][c]);
      for (int p = 0; p < kLaneRows; ++p) {
        const int r = g * kLaneRows + p;
        const float lanes = hsum_lanes8(_mm256_loadu_ps(v + 8 * p));
        store_out(t, r0 + r, c0 + c, L::kSigned ? lanes : lanes + mins[r][c]);
      }
    }
}

constexpr int kLegacyRegs = 2 * kLaneRows;  // registers of rows: as many as the accumulators fit

// Each activation block's scale, the act_d of legacy_lanes_block.
template <typename L>
const float* legacy_act_scales(const DotTile& t) {
  return act_table<float, LegacyAct<L>>(t, [](const LegacyAct<L>& a) { return half(a.d); });
}

// One activation column (decode), weights in the file layout.
template <typename L>
void legacy_lanes_column(const DotTile& t) {
  const float* act_d = legacy_act_scales<L>(t);
  for (int64_t r0 = 0; r0 < t.rows; r0 += kLegacyRegs * kLaneRows) legacy_lanes_block<L, kLegacyRegs, 1>(t, act_d, r0, 0);
}

template <typename L>
void legacy_lanes(const DotTile& t) {
  if (t.cols == 1) return legacy_lanes_column<L>(t);
  const float* act_d = legacy_act_scales<L>(t);
  for_blocks<kLegacyRegs * kLaneRows>(
      t, [&](int64_t r0, int64_t c0) { legacy_lanes_block<L, kLegacyRegs, 4>(t, act_d, r0, c0); },
      [&](int64_t r0, int64_t c0) { legacy_lanes_block<L, kLegacyRegs, 1>(t, act_d, r0, c0); });
}

// Output column c of the kRowLanes rows from r0 on, one per lane of v.
inline void store_row_lanes(const DotTile& t, int64_t r0, int64_t c, VR v) {
  alignas(64) float out[kRowLanes];
  vr_store(out, v);
  for (int r = 0; r < kRowLanes; ++r) store_out(t, r0 + r, c, out[r]);
}

// Q8_0 GEMM in the same eight-lane order, each register holding one lane of kRowLanes rows:
// block i's lane j is dword j of every row (the packed layout stores it so; file rows are
// transposed once per row group), so a column's eight lane dots per block are eight
// instructions against broadcast activation dwords, the signed offsets come per column instead
// of per row, and the lane tree runs over whole registers. (Decode from file rows keeps
// legacy_lanes_column: with one column nothing amortizes the transposition.)

struct Q8_0LaneRows {
  VI lanes[8];  // lane j: levels 4j..4j+3 of each row, vi_signed_levels
  VR d;
};

struct Q8_0LaneAct {
  int32_t offset[8];  // lane j's vi_signed_offset
  float d;
};

// Block i of the kRowLanes packed rows from tile row r0: the tile's rows are whole groups, so
// rows r0.. lie in one group, in order.
[[gnu::always_inline]] inline Q8_0LaneRows q8_0_packed_lane_rows(const DotTile& t, int64_t r0, int64_t i) {
  const char* group = packed_block(t, r0, i, sizeof(BlockQ8_0));
  prefetch_stream(group, kPackRows * sizeof(BlockQ8_0));
  const char* lanes = group + kPackRows * sizeof(uint16_t) + r0 % kPackRows * sizeof(int32_t);
  Q8_0LaneRows w;
  for (int j = 0; j < 8; ++j) w.lanes[j] = vi_signed_levels(vi_load(lanes + j * kPackRows * sizeof(int32_t)));
  w.d = vr_load_f16(reinterpret_cast<const uint16_t*>(group) + r0 % kPackRows);
  return w;
}

// The same from the file's rows at wp: their dwords transposed.
inline void q8_0_file_lane_rows(const char* const* wp, int64_t i, Q8_0LaneRows& w) {
  const uint8_t* qs[kRowLanes];
  alignas(64) uint16_t dh[kRowLanes];
  for (int r = 0; r < kRowLanes; ++r) {
    const BlockQ8_0& b = reinterpret_cast<const BlockQ8_0*>(wp[r])[i];
    qs[r] = reinterpret_cast<const uint8_t*>(b.qs);
    dh[r] = b.d;
  }
  const uint8_t* upper[kRowLanes];
  for (int r = 0; r < kRowLanes; ++r) upper[r] = qs[r] + 16;
  VI quads[4];
  load_row_quads(qs, quads);
  for (int j = 0; j < 4; ++j) w.lanes[j] = vi_signed_levels(quads[j]);
  load_row_quads(upper, quads);
  for (int j = 0; j < 4; ++j) w.lanes[4 + j] = vi_signed_levels(quads[j]);
  w.d = vr_load_f16(dh);
}

// rows_of(i): block i's Q8_0LaneRows (a prepared one, or one loaded there and then).
template <int CB, typename RowsOf>
[[gnu::always_inline]] inline void q8_0_lane_block(const DotTile& t, RowsOf rows_of, const Q8_0LaneAct* act, int64_t r0, int64_t c0) {
  const char* ap[CB];
  block_ptrs(t.a, t.a_stride, c0, t.cols, ap);
  const int64_t nb = t.n / kQK;
  VR acc[CB][8];
  for (int c = 0; c < CB; ++c)
    for (int j = 0; j < 8; ++j) acc[c][j] = vr_zero();
  for (int64_t i = 0; i < nb; ++i) {
    const Q8_0LaneRows& w = rows_of(i);
    const Q8_0LaneAct* x[CB];
    VR d[CB];
    for (int c = 0; c < CB; ++c) {
      x[c] = &act[min_i64(c0 + c, t.cols - 1) * nb + i];
      d[c] = vr_mul(w.d, vr_set1(x[c]->d));
    }
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j)
#pragma GCC unroll 4
      for (int c = 0; c < CB; ++c) {
        int32_t y4;
        std::memcpy(&y4, reinterpret_cast<const BlockQ8_0*>(ap[c])[i].qs + 4 * j, sizeof y4);
        const VI lane = vi_dot_s8v(vi_set1(x[c]->offset[j]), w.lanes[j], vi_set1(y4));
        acc[c][j] = vr_fma(d[c], vr_from_i32(lane), acc[c][j]);
      }
  }
  for (int c = 0; c < CB; ++c) {
    const VR* a = acc[c];  // hsum_lanes8's tree, lane by lane
    store_row_lanes(t, r0, c0 + c, vr_add(vr_add(vr_add(a[4], a[0]), vr_add(a[6], a[2])), vr_add(vr_add(a[5], a[1]), vr_add(a[7], a[3]))));
  }
}

void q8_0_lanes_gemm(const DotTile& t) {
  const int64_t nb = t.n / kQK;
  const Q8_0LaneAct* acts = act_table<Q8_0LaneAct, BlockQ8_0>(t, [](const BlockQ8_0& a) {
    alignas(64) int32_t offsets[kRowLanes];
    vi_store(offsets, vi_signed_offset(vi_repeat(load256(a.qs))));
    Q8_0LaneAct x;
    std::memcpy(x.offset, offsets, sizeof x.offset);
    x.d = half(a.d);
    return x;
  });
  if (t.packed && t.cols == 1) {  // decode: each block's registers straight from the weight stream
    for (int64_t r0 = 0; r0 < t.rows; r0 += kRowLanes)
      q8_0_lane_block<1>(t, [&](int64_t i) { return q8_0_packed_lane_rows(t, r0, i); }, acts, r0, 0);
    return;
  }
  for_prepared_row_blocks<kRowLanes, Q8_0LaneRows, 2>(
      t, nb, 1,
      [&](const char* const* wp, int64_t r0, int64_t i, Q8_0LaneRows* out) {
        if (t.packed)
          *out = q8_0_packed_lane_rows(t, r0, i);
        else
          q8_0_file_lane_rows(wp, i, *out);
      },
      [&](auto cols, const Q8_0LaneRows* rows, int64_t r0, int64_t c0) {
        q8_0_lane_block<decltype(cols)::value>(t, [rows](int64_t i) -> const Q8_0LaneRows& { return rows[i]; }, acts, r0, c0);
      });
}

// Q4_0 repacked order: per output one float accumulator, one FMA per block of its exact
// integer dot. kRowLanes weight rows share a register, one lane each (their 16 nibble bytes
// transposed to dword columns), so a block's dot needs no horizontal sum. The levels are
// dotted as unsigned nibbles, each lane starting from -8 * (the activation's block sum).

// One block of kRowLanes rows, ready for any number of columns.
struct Q4_0Rows {
  VI lo[4], hi[4];  // nibbles of elements 4j..4j+3 and 16+4j..16+4j+3, one row per lane
  VR d;
};

// What a column contributes per block besides its levels.
struct Q4_0Act {
  int32_t offset;  // -8 * sum of the block's levels
  float d;
};

// Block i of the kRowLanes rows from tile row r on, in the packed layout: loads, no transpose.
inline void q4_0_packed_block(const DotTile& t, int64_t r, int64_t i, Q4_0Rows& w) {
  const char* blk = packed_block(t, r, i, sizeof(BlockQ4_0));
  const int64_t lane0 = r % kPackRows;  // kRowLanes divides kPackRows
  for (int j = 0; j < 4; ++j) {
    const VI quad = vi_load(blk + kPackRows * 2 + (j * kPackRows + lane0) * 4);
    w.lo[j] = vi_low_nibbles(quad);
    w.hi[j] = vi_high_nibbles(quad);
  }
  w.d = vr_load_f16(reinterpret_cast<const uint16_t*>(blk) + lane0);
}

// Block i of the rows at wp (kRowLanes of them), transposed.
inline void q4_0_block(const char* const* wp, int64_t i, Q4_0Rows& w) {
  const uint8_t* qs[kRowLanes];
  alignas(64) uint16_t dh[kRowLanes];
  for (int r = 0; r < kRowLanes; ++r) {
    const BlockQ4_0& b = reinterpret_cast<const BlockQ4_0*>(wp[r])[i];
    qs[r] = b.qs;
    dh[r] = b.d;
  }
  VI quads[4];
  load_row_quads(qs, quads);
  for (int j = 0; j < 4; ++j) {
    w.lo[j] = vi_low_nibbles(quads[j]);
    w.hi[j] = vi_high_nibbles(quads[j]);
  }
  w.d = vr_load_f16(dh);
}

// Block i of the kRowLanes rows from tile row r0 (the file's rows at wp), in either layout.
[[gnu::always_inline]] inline void q4_0_rows(const DotTile& t, const char* const* wp, int64_t r0, int64_t i, Q4_0Rows& w) {
  if (t.packed)
    q4_0_packed_block(t, r0, i, w);
  else
    q4_0_block(wp, i, w);
}

// Columns c0 .. c0 + CB - 1 against rows r0 .. r0 + kRowLanes - 1: their blocks prepared in
// `prepared` (Prepared), or loaded from the packed layout or transposed here as they are used
// (known at compile time, so a block made here stays in registers).
template <int CB, bool Prepared>
void q4_0_serial_block(const DotTile& t, const Q4_0Rows* prepared, const Q4_0Act* act, int64_t r0, int64_t c0) {
  const char* wp[kRowLanes];
  const char* ap[CB];
  block_ptrs(t.w, t.w_stride, r0, t.rows, wp);
  block_ptrs(t.a, t.a_stride, c0, t.cols, ap);
  const int64_t nb = t.n / kQK;
  VR acc[CB];
  for (int c = 0; c < CB; ++c) acc[c] = vr_zero();
  for (int64_t i = 0; i < nb; ++i) {
    Q4_0Rows here;
    if (!Prepared) {
      prefetch_next<kRowLanes>(t, r0, i, nb, sizeof(BlockQ4_0));
      q4_0_rows(t, wp, r0, i, here);
    }
    const Q4_0Rows& w = Prepared ? prepared[i] : here;
    // Each level register feeds every column before the next: the columns' chains interleave.
    const Q4_0Act* x[CB];
    VI s[CB];
#pragma GCC unroll 8
    for (int c = 0; c < CB; ++c) {
      x[c] = &act[min_i64(c0 + c, t.cols - 1) * nb + i];
      s[c] = vi_set1(x[c]->offset);
    }
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j)
#pragma GCC unroll 8
      for (int c = 0; c < CB; ++c) {
        const int8_t* qs = reinterpret_cast<const BlockQ8_0*>(ap[c])[i].qs;
        s[c] = vi_dot_u8(s[c], w.lo[j], qs + 4 * j);
        s[c] = vi_dot_u8(s[c], w.hi[j], qs + 16 + 4 * j);
      }
#pragma GCC unroll 8
    for (int c = 0; c < CB; ++c)
      acc[c] = vr_fma(vr_from_i32(s[c]), vr_mul(w.d, vr_set1(x[c]->d)), acc[c]);
  }
  for (int c = 0; c < CB; ++c) store_row_lanes(t, r0, c0 + c, acc[c]);
}

void q4_0_serial(const DotTile& t) {
  const int64_t nb = t.n / kQK;
  const Q4_0Act* acts = act_table<Q4_0Act, BlockQ8_0>(t, [](const BlockQ8_0& a) {
    const __m256i ones = _mm256_set1_epi8(1);
    const int32_t sum = hsum_i32(_mm256_madd_epi16(_mm256_maddubs_epi16(ones, load256(a.qs)), _mm256_set1_epi16(1)));
    return Q4_0Act{-8 * sum, half(a.d)};
  });
  if (t.cols == 1) {
    for (int64_t r0 = 0; r0 < t.rows; r0 += kRowLanes) q4_0_serial_block<1, false>(t, nullptr, acts, r0, 0);
    return;
  }
  // Several columns: each row block transposed once, then reused by every column.
  for_prepared_row_blocks<kRowLanes, Q4_0Rows>(
      t, nb, 1, [&](const char* const* wp, int64_t r0, int64_t i, Q4_0Rows* out) { q4_0_rows(t, wp, r0, i, *out); },
      [&](auto cols, const Q4_0Rows* rows, int64_t r0, int64_t c0) {
        q4_0_serial_block<decltype(cols)::value, true>(t, rows, acts, r0, c0);
      });
}

// ---------------------------------------------------------------------------------------------
// K-quants. Q2_K, Q3_K and Q5_K super-block rows are first unpacked to bytes (unsigned levels,
// except Q3_K) and int16 scale vectors; Q4_K and Q6_K are read straight from the blocks.

struct KRow {
  alignas(32) uint8_t q[kQK_K];
  __m256i scale[8];  // per 32-element chunk: int16 scales of its two 16-element groups
  __m256i min16;     // int16 mins of the 16 groups
  float d, dmin;
};

inline void set_scales(const KBlockInts& s, KRow& row) {
  alignas(32) int16_t all[16], mins[16];
  for (int g = 0; g < 16; ++g) {
    all[g] = static_cast<int16_t>(s.scale[g]);
    mins[g] = static_cast<int16_t>(s.min[g]);
  }
  for (int k = 0; k < 8; ++k)
    row.scale[k] = _mm256_set_m128i(_mm_set1_epi16(all[2 * k + 1]), _mm_set1_epi16(all[2 * k]));
  row.min16 = _mm256_load_si256(reinterpret_cast<const __m256i*>(mins));
  row.d = s.d;
  row.dmin = s.dmin;
}

inline void store256(uint8_t* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }

// Bits shift..shift+1 of each byte of h, moved to bits 4..5.
inline __m256i q6_high_bits(__m256i h, int shift) {
  return _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, shift), _mm256_set1_epi8(3)), 4);
}

// Unpacks one super-block of `type` (Q2_K, Q3_K, Q5_K) into row (Q3_K levels signed).
void unpack_k_row(DType type, const uint8_t* block, KRow& row) {
  KBlockInts s;
  engine::quant::unpack_k_scales(type, block, s);
  set_scales(s, row);
  const __m256i m2 = _mm256_set1_epi8(3), m4 = _mm256_set1_epi8(0x0F);
  switch (type) {
    case DType::Q2_K: {
      const auto& b = *reinterpret_cast<const engine::quant::BlockQ2_K*>(block);
      for (int n = 0; n < 2; ++n) {
        const __m256i x = load256(b.qs + 32 * n);
        for (int j = 0; j < 4; ++j) store256(row.q + 128 * n + 32 * j, _mm256_and_si256(_mm256_srli_epi16(x, 2 * j), m2));
      }
      return;
    }
    case DType::Q3_K: {
      const auto& b = *reinterpret_cast<const engine::quant::BlockQ3_K*>(block);
      const __m256i hm = load256(b.hmask);
      for (int n = 0; n < 2; ++n) {
        const __m256i x = load256(b.qs + 32 * n);
        for (int j = 0; j < 4; ++j) {
          const __m256i bit = _mm256_set1_epi8(static_cast<char>(1 << (4 * n + j)));
          const __m256i missing = _mm256_andnot_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hm, bit), bit), _mm256_set1_epi8(4));
          store256(row.q + 128 * n + 32 * j, _mm256_sub_epi8(_mm256_and_si256(_mm256_srli_epi16(x, 2 * j), m2), missing));
        }
      }
      return;
    }
    case DType::Q5_K: {
      const auto& b = *reinterpret_cast<const engine::quant::BlockQ5_K*>(block);
      const __m256i hb = load256(b.qh);
      for (int j = 0; j < 4; ++j) {
        const __m256i x = load256(b.qs + 32 * j);
        const __m256i b0 = _mm256_set1_epi8(static_cast<char>(1 << (2 * j)));
        const __m256i b1 = _mm256_set1_epi8(static_cast<char>(1 << (2 * j + 1)));
        const __m256i sixteen = _mm256_set1_epi8(16);
        const __m256i lo = _mm256_and_si256(x, m4), hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), m4);
        store256(row.q + 64 * j, _mm256_or_si256(lo, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hb, b0), b0), sixteen)));
        store256(row.q + 64 * j + 32, _mm256_or_si256(hi, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hb, b1), b1), sixteen)));
      }
      return;
    }
    default: return;
  }
}

// Scaled lane sums of chunks [k0, k1) of a row against activation bytes (lane L of chunk k:
// elements 32k + 4L .. 32k + 4L + 3).
template <bool Signed>
inline __m256i k_lanes(const KRow& row, const int8_t* aq, int k0, int k1) {
  __m256i s = _mm256_setzero_si256();
  for (int k = k0; k < k1; ++k) {
    const __m256i q = _mm256_load_si256(reinterpret_cast<const __m256i*>(row.q + 32 * k));
    const __m256i a = load256(aq + 32 * k);
    const __m256i p = Signed ? dot_u8_scaled(_mm256_sign_epi8(q, q), _mm256_sign_epi8(a, q), row.scale[k])
                             : dot_u8_scaled(q, a, row.scale[k]);
    s = _mm256_add_epi32(s, p);
  }
  return s;
}

// Unpacks super-blocks of rows r0 .. r0 + RB - 1 (clamped to the tile) once for all columns:
// rows[b * RB + r] is super-block b of row r. Reused per thread, so no allocation per call.
template <int RB>
const KRow* unpack_k_rows(DType type, const DotTile& t, int64_t r0) {
  const int64_t nb = t.n / kQK_K;
  KRow* rows = thread_buffer<KRow>(static_cast<size_t>(nb * RB));
  const char* wp[RB];
  block_ptrs(t.w, t.w_stride, r0, t.rows, wp);
  const size_t block_bytes = dtype_info(type).block_bytes;
  for (int64_t i = 0; i < nb; ++i)
    for (int r = 0; r < RB; ++r) unpack_k_row(type, reinterpret_cast<const uint8_t*>(wp[r]) + i * block_bytes, rows[i * RB + r]);
  return rows;
}

// Repacked K-quant order (Q2_K; Q4_K's is q4_K_serial_block): per run of `groups` 16-element groups, one FMA of the
// run's exact scaled sum with dw * da and one of its min sum with dmin_w * da; eight weight
// rows share a vector, one lane each.
template <int CB>
void k_serial_block(int groups, const KRow* unpacked, const DotTile& t, int64_t r0, int64_t c0) {
  const char* ap[CB];
  block_ptrs(t.a, t.a_stride, c0, t.cols, ap);
  const int runs = 16 / groups, chunks = groups / 2;
  __m256 acc[CB], acc_min[CB];
  for (int c = 0; c < CB; ++c) acc[c] = acc_min[c] = _mm256_setzero_ps();
  const __m256i lane_index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t i = 0; i < t.n / kQK_K; ++i) {
    const KRow* rows = unpacked + i * 8;
    alignas(32) float d[8], dmin[8];
    for (int r = 0; r < 8; ++r) {
      d[r] = rows[r].d;
      dmin[r] = rows[r].dmin;
    }
    const __m256 dv = _mm256_load_ps(d), dminv = _mm256_load_ps(dmin);
    for (int c = 0; c < CB; ++c) {
      const BlockQ8_K& a = reinterpret_cast<const BlockQ8_K*>(ap[c])[i];
      const __m256i bsums = load256(a.bsums);
      const __m256 da = _mm256_set1_ps(a.d);
      const __m256 scale = _mm256_mul_ps(dv, da), scale_min = _mm256_mul_ps(dminv, da);
      __m256i mins_all[8];
      for (int r = 0; r < 8; ++r) mins_all[r] = _mm256_madd_epi16(rows[r].min16, bsums);  // lane L: groups 2L, 2L+1
      for (int run = 0; run < runs; ++run) {
        __m256i s[8], m[8];
        const __m256i in_run = _mm256_and_si256(_mm256_cmpgt_epi32(lane_index, _mm256_set1_epi32(run * chunks - 1)),
                                                _mm256_cmpgt_epi32(_mm256_set1_epi32((run + 1) * chunks), lane_index));
        for (int r = 0; r < 8; ++r) {
          s[r] = k_lanes<false>(rows[r], a.qs, run * chunks, (run + 1) * chunks);
          m[r] = _mm256_and_si256(mins_all[r], in_run);
        }
        acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum_rows8(s)), scale, acc[c]);
        acc_min[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum_rows8(m)), scale_min, acc_min[c]);
      }
    }
  }
  for (int c = 0; c < CB; ++c) {
    float v[8];
    _mm256_storeu_ps(v, _mm256_sub_ps(acc[c], acc_min[c]));
    for (int r = 0; r < 8; ++r) store_out(t, r0 + r, c0 + c, v[r]);
  }
}

void k_serial(DType type, int groups, const DotTile& t) {
  for (int64_t r0 = 0; r0 < t.rows; r0 += 8) {
    const KRow* rows = unpack_k_rows<8>(type, t, r0);
    int64_t c0 = 0;
    for (; c0 + 4 <= t.cols; c0 += 4) k_serial_block<4>(groups, rows, t, r0, c0);
    for (; c0 < t.cols; ++c0) k_serial_block<1>(groups, rows, t, r0, c0);
  }
}

// Q4_K repacked order (k_serial_block's, read straight from the blocks): kRowLanes weight rows
// share a register, one lane each; per run (a whole super-block in the GEMV, 64 elements in the
// GEMM) the exact scaled sum and min sum become one FMA each.
struct Q4KRows {
  VR d, dmin;
  VI scale[8], min[8];  // per 32-element sub-block, 6-bit
  VR scale_f[8], min_f[8];  // the same as floats (GEMM)
};

// h: per row (lane) d | dmin, scales[0..3], scales[4..7], scales[8..11].
inline Q4KRows q4_K_header(const VI (&h)[4]) {
  Q4KRows w;
  w.d = vr_half_low(h[0]);
  w.dmin = vr_half_high(h[0]);
  for (int j = 0; j < 4; ++j) {
    w.scale[j] = vi_bits(h[1], 8 * j, 63);
    w.min[j] = vi_bits(h[2], 8 * j, 63);
    w.scale[j + 4] = vi_or_shifted(vi_bits(h[3], 8 * j, 0x0F), vi_bits(h[1], 8 * j + 6, 3), 4);
    w.min[j + 4] = vi_or_shifted(vi_bits(h[3], 8 * j + 4, 0x0F), vi_bits(h[2], 8 * j + 6, 3), 4);
  }
  for (int k = 0; k < 8; ++k) {
    w.scale_f[k] = vr_from_i32(w.scale[k]);
    w.min_f[k] = vr_from_i32(w.min[k]);
  }
  return w;
}

// A super-block of kRowLanes rows, ready for any number of columns.
struct Q4KSuper {
  Q4KRows h;
  VI lo[4][8], hi[4][8];  // per 64-element chunk m: nibbles of sub-blocks 2m and 2m + 1, dword j
};

// Super-block i of the rows at wp (kRowLanes of them), transposed.
inline void q4_K_super(const char* const* wp, int64_t i, Q4KSuper& w) {
  const uint8_t* blocks[kRowLanes];
  for (int r = 0; r < kRowLanes; ++r) blocks[r] = reinterpret_cast<const uint8_t*>(wp[r]) + i * sizeof(engine::quant::BlockQ4_K);
  VI header[4];
  load_row_quads(blocks, header);
  w.h = q4_K_header(header);
  for (int m = 0; m < 4; ++m)
    for (int half = 0; half < 2; ++half) {
      const uint8_t* q[kRowLanes];
      for (int r = 0; r < kRowLanes; ++r) q[r] = blocks[r] + 16 + 32 * m + 16 * half;
      VI quads[4];
      load_row_quads(q, quads);
      for (int j = 0; j < 4; ++j) {
        w.lo[m][4 * half + j] = vi_low_nibbles(quads[j]);
        w.hi[m][4 * half + j] = vi_high_nibbles(quads[j]);
      }
    }
}

// Super-block i of the kRowLanes rows from tile row r on, in the packed layout: loads, no transpose.
inline void q4_K_packed_super(const DotTile& t, int64_t r, int64_t i, Q4KSuper& w) {
  const char* blk = packed_block(t, r, i, sizeof(engine::quant::BlockQ4_K)) + (r % kPackRows) * 4;
  const auto dword = [&](int c) { return vi_load(blk + c * kPackRows * 4); };
  const VI header[4] = {dword(0), dword(1), dword(2), dword(3)};
  w.h = q4_K_header(header);
  for (int m = 0; m < 4; ++m)
    for (int j = 0; j < 8; ++j) {  // qs bytes 32m + 4j .. + 3: dword 4 + 8m + j of the block
      const VI quad = dword(4 + 8 * m + j);
      w.lo[m][j] = vi_low_nibbles(quad);
      w.hi[m][j] = vi_high_nibbles(quad);
    }
}

// Super-block i of the kRowLanes rows from tile row r0 (the file's rows at wp), in either layout.
[[gnu::always_inline]] inline void q4_K_rows(const DotTile& t, const char* const* wp, int64_t r0, int64_t i, Q4KSuper& w) {
  if (t.packed)
    q4_K_packed_super(t, r0, i, w);
  else
    q4_K_super(wp, i, w);
}

// Chunk m's min sum in float, b its two sub-blocks' level sums (exact: below 2^24).
inline VR q4_K_chunk_mins(const Q4KRows& h, const float* b, int m) {
  return vr_fma(h.min_f[2 * m + 1], vr_set1(b[1]), vr_mul(h.min_f[2 * m], vr_set1(b[0])));
}

// Columns c0 .. c0 + CB - 1 against rows r0 .. r0 + kRowLanes - 1: their super-blocks prepared
// in `prepared` (Prepared), or loaded from the packed layout or transposed here as they are used.
// bsum_f (GEMM): per column, super-block and 32-element sub-block the sum of its levels, as a float.
template <int CB, bool Prepared>
void q4_K_serial_block(bool gemm, const DotTile& t, const Q4KSuper* prepared, const float* bsum_f, int64_t r0, int64_t c0) {
  const char* ap[CB];
  block_ptrs(t.a, t.a_stride, c0, t.cols, ap);
  const char* wp[kRowLanes];
  block_ptrs(t.w, t.w_stride, r0, t.rows, wp);
  const int64_t nb = t.n / kQK_K;
  VR acc[CB], acc_min[CB];
  for (int c = 0; c < CB; ++c) acc[c] = acc_min[c] = vr_zero();
  const auto bsums = [&](int c, int64_t i, int m) { return bsum_f + ((min_i64(c0 + c, t.cols - 1) * nb + i) * 4 + m) * 2; };
  // GEMM over prepared rows: the min sums need no levels, so they take a pass of their own
  // after the main loop, whose registers then hold only the scaled sums.
  const bool mins_apart = gemm && Prepared;
  Q4KSuper here;
  for (int64_t i = 0; i < nb; ++i) {
    if (!Prepared) {
      prefetch_next<kRowLanes>(t, r0, i, nb, sizeof(engine::quant::BlockQ4_K));
      q4_K_rows(t, wp, r0, i, here);
    }
    const Q4KSuper& w = Prepared ? prepared[i] : here;
    const Q4KRows& h = w.h;
    const BlockQ8_K* a[CB];
    VR dd[CB];
    VI sum[CB], mins[CB];
    for (int c = 0; c < CB; ++c) {
      a[c] = reinterpret_cast<const BlockQ8_K*>(ap[c]) + i;
      dd[c] = vr_mul(h.d, vr_set1(a[c]->d));
      sum[c] = mins[c] = vi_set1(0);
    }
    for (int m = 0; m < 4; ++m) {  // sub-blocks 2m (low nibbles) and 2m + 1 (high nibbles)
      if (gemm) {
        // Each level register feeds every column before the next is loaded: the columns' dot
        // chains interleave instead of running one column after another.
        VI s_lo[CB][2], s_hi[CB][2];
        for (int c = 0; c < CB; ++c) s_lo[c][0] = s_lo[c][1] = s_hi[c][0] = s_hi[c][1] = vi_set1(0);
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j)
#pragma GCC unroll 8
          for (int c = 0; c < CB; ++c) {
            const int8_t* aq = a[c]->qs + 64 * m;
            s_lo[c][j & 1] = vi_dot_u8(s_lo[c][j & 1], w.lo[m][j], aq + 4 * j);
            s_hi[c][j & 1] = vi_dot_u8(s_hi[c][j & 1], w.hi[m][j], aq + 32 + 4 * j);
          }
#pragma GCC unroll 8
        for (int c = 0; c < CB; ++c) {
          // The chunk's scaled sum in float: products and sum stay below 2^24, so it is exactly
          // the integer the GEMV order forms, without 32-bit integer multiplies.
          const VR scaled = vr_fma(vr_from_i32(vi_add(s_hi[c][0], s_hi[c][1])), h.scale_f[2 * m + 1],
                                   vr_mul(vr_from_i32(vi_add(s_lo[c][0], s_lo[c][1])), h.scale_f[2 * m]));
          acc[c] = vr_fma(scaled, dd[c], acc[c]);
          if (!mins_apart) acc_min[c] = vr_fma(q4_K_chunk_mins(h, bsums(c, i, m), m), vr_mul(h.dmin, vr_set1(a[c]->d)), acc_min[c]);
        }
        continue;
      }
      // The same sums one column at a time: decode built on the interleaved form above read ~6%
      // slower (Q4_K_M tg64 35.5 -> 33.1 t/s).
      for (int c = 0; c < CB; ++c) {
        const int8_t* aq = a[c]->qs + 64 * m;
        VI s_lo[2] = {vi_set1(0), vi_set1(0)}, s_hi[2] = {vi_set1(0), vi_set1(0)};
        for (int j = 0; j < 8; ++j) {
          s_lo[j & 1] = vi_dot_u8(s_lo[j & 1], w.lo[m][j], aq + 4 * j);
          s_hi[j & 1] = vi_dot_u8(s_hi[j & 1], w.hi[m][j], aq + 32 + 4 * j);
        }
        const int16_t* bs = a[c]->bsums + 4 * m;
        sum[c] = vi_add(sum[c], vi_add(vi_mul(vi_add(s_lo[0], s_lo[1]), h.scale[2 * m]),
                                       vi_mul(vi_add(s_hi[0], s_hi[1]), h.scale[2 * m + 1])));
        mins[c] = vi_add(mins[c], vi_add(vi_mul_u16(h.min[2 * m], static_cast<int16_t>(bs[0] + bs[1])),
                                         vi_mul_u16(h.min[2 * m + 1], static_cast<int16_t>(bs[2] + bs[3]))));
        if (m == 3) {
          acc[c] = vr_fma(vr_from_i32(sum[c]), dd[c], acc[c]);
          acc_min[c] = vr_fma(vr_from_i32(mins[c]), vr_mul(h.dmin, vr_set1(a[c]->d)), acc_min[c]);
        }
      }
    }
  }
  if (mins_apart)
    for (int64_t i = 0; i < nb; ++i) {
      const Q4KRows& h = prepared[i].h;
      for (int c = 0; c < CB; ++c) {
        const VR dd_min = vr_mul(h.dmin, vr_set1(reinterpret_cast<const BlockQ8_K*>(ap[c])[i].d));
        for (int m = 0; m < 4; ++m) acc_min[c] = vr_fma(q4_K_chunk_mins(h, bsums(c, i, m), m), dd_min, acc_min[c]);
      }
    }
  for (int c = 0; c < CB; ++c) {
    alignas(64) float v[kRowLanes], vm[kRowLanes];
    vr_store(v, acc[c]);
    vr_store(vm, acc_min[c]);
    for (int r = 0; r < kRowLanes; ++r) store_out(t, r0 + r, c0 + c, v[r] - vm[r]);
  }
}

void q4_K_serial(bool gemm, const DotTile& t) {
  const int64_t nb = t.n / kQK_K;
  float* bsum_f = nullptr;
  if (gemm) {
    bsum_f = thread_buffer<float>(static_cast<size_t>(t.cols * nb * 8));
    for (int64_t c = 0; c < t.cols; ++c)
      for (int64_t i = 0; i < nb; ++i) {
        const int16_t* bs = act_block<BlockQ8_K>(t, c, i).bsums;
        for (int k = 0; k < 8; ++k) bsum_f[(c * nb + i) * 8 + k] = static_cast<float>(bs[2 * k] + bs[2 * k + 1]);
      }
  }
  if (t.cols == 1) {
    for (int64_t r0 = 0; r0 < t.rows; r0 += kRowLanes) q4_K_serial_block<1, false>(gemm, t, nullptr, bsum_f, r0, 0);
    return;
  }
  // Several columns: each row block's super-blocks transposed once, then reused by every column.
  for_prepared_row_blocks<kRowLanes, Q4KSuper>(
      t, t.n / kQK_K, 1, [&](const char* const* wp, int64_t r0, int64_t i, Q4KSuper* out) { q4_K_rows(t, wp, r0, i, *out); },
      [&](auto cols, const Q4KSuper* rows, int64_t r0, int64_t c0) {
        q4_K_serial_block<decltype(cols)::value, true>(gemm, t, rows, bsum_f, r0, c0);
      });
}

// Q6_K eight-lane order (k_lanes_block's, read straight from the blocks): per output eight
// float lanes += (da * dw) * exact lane sums per super-block, the offset 32 taken back per lane.
// One register holds kLaneRows rows, eight lanes each.
struct Q6KRows {
  VI q[8];      // unsigned levels 0..63 of the 32-element chunks
  VI scale[8];  // per chunk: int16 scales of its two 16-element groups
  VI offset;    // int16 scales of all 16 groups (for the offset's lane sums)
  VR d;         // each row's scale on its lanes
};

// The register's rows from their raw fields: ql pieces l0[n], l1[n] (bytes 64n.., 64n + 32..),
// qh pieces h[n], the 16 scales widened to int16, the scales d.
inline void q6_K_rows(const VI (&l0)[2], const VI (&l1)[2], const VI (&h)[2], VI scales, VR d, Q6KRows& w) {
  for (int n = 0; n < 2; ++n) {
    w.q[4 * n] = vi_or_shifted(vi_low_nibbles(l0[n]), vi_bits(h[n], 0, 0x03030303), 4);
    w.q[4 * n + 1] = vi_or_shifted(vi_low_nibbles(l1[n]), vi_bits(h[n], 2, 0x03030303), 4);
    w.q[4 * n + 2] = vi_or_shifted(vi_high_nibbles(l0[n]), vi_bits(h[n], 4, 0x03030303), 4);
    w.q[4 * n + 3] = vi_or_shifted(vi_high_nibbles(l1[n]), vi_bits(h[n], 6, 0x03030303), 4);
  }
  w.offset = scales;
  // Both 128-bit halves hold scales 8n..8n+7; chunk 4n+k takes scale 2k in the low, 2k+1 in the high.
  const VI halves[2] = {vi_row_half<0>(w.offset), vi_row_half<1>(w.offset)};
  for (int n = 0; n < 2; ++n)
    for (int k = 0; k < 4; ++k) {
      const char lo = static_cast<char>(4 * k), hi = static_cast<char>(4 * k + 2);
      const __m256i pick = _mm256_setr_epi8(lo, lo + 1, lo, lo + 1, lo, lo + 1, lo, lo + 1, lo, lo + 1, lo, lo + 1, lo, lo + 1, lo,
                                            lo + 1, hi, hi + 1, hi, hi + 1, hi, hi + 1, hi, hi + 1, hi, hi + 1, hi, hi + 1, hi,
                                            hi + 1, hi, hi + 1);
      w.scale[4 * n + k] = vi_pick_bytes(halves[n], pick);
    }
  w.d = d;
}

// Super-blocks b[0 .. kLaneRows - 1] in the file layout, one per row of the register.
inline void load_q6_K(const engine::quant::BlockQ6_K* const* b, Q6KRows& w) {
  VI l0[2], l1[2], h[2];
  __m256i part[kLaneRows];
  const auto rows = [&](auto field) {
    for (int p = 0; p < kLaneRows; ++p) part[p] = field(*b[p]);
    return vi_join(part);
  };
  for (int n = 0; n < 2; ++n) {
    l0[n] = rows([&](const auto& x) { return load256(x.ql + 64 * n); });
    l1[n] = rows([&](const auto& x) { return load256(x.ql + 64 * n + 32); });
    h[n] = rows([&](const auto& x) { return load256(x.qh + 32 * n); });
  }
  const VI scales = rows([](const auto& x) { return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x.scales))); });
  float d[kLaneRows];
  for (int p = 0; p < kLaneRows; ++p) d[p] = half(b[p]->d);
  q6_K_rows(l0, l1, h, scales, vr_set_groups(d), w);
}

// Super-block i of the register's rows from tile row r on, in the packed layout (repack.h): the
// fields of a row pair load as one register (AVX-512) or one row's half of it (AVX2).
inline void load_q6_K_packed(const DotTile& t, int64_t r, int64_t i, Q6KRows& w) {
  const char* pair = packed_block(t, r, i, sizeof(engine::quant::BlockQ6_K)) + (r % kPackRows / 2) * 2 * sizeof(engine::quant::BlockQ6_K);
  const int64_t p = kLaneRows == 1 ? r % 2 : 0;  // the row within its pair, when a register holds one
  VI l0[2], l1[2], h[2];
  for (int n = 0; n < 2; ++n) {
    l0[n] = vi_load(pair + 64 * (2 * n) + 32 * p);
    l1[n] = vi_load(pair + 64 * (2 * n + 1) + 32 * p);
    h[n] = vi_load(pair + 256 + 64 * n + 32 * p);
  }
  q6_K_rows(l0, l1, h, vi_widen_i8(pair + 384 + 16 * p), vr_rows_f16(reinterpret_cast<const uint16_t*>(pair + 416) + p), w);
}

// Super-block i of RG registers of rows from tile row r0 (the file's rows at wp), either layout.
template <int RG>
[[gnu::always_inline]] inline void q6_K_rows(const DotTile& t, const char* const* wp, int64_t r0, int64_t i, Q6KRows* out) {
  for (int g = 0; g < RG; ++g) {
    if (t.packed) {
      load_q6_K_packed(t, r0 + g * kLaneRows, i, out[g]);
      continue;
    }
    const engine::quant::BlockQ6_K* b[kLaneRows];
    for (int p = 0; p < kLaneRows; ++p) b[p] = reinterpret_cast<const engine::quant::BlockQ6_K*>(wp[g * kLaneRows + p]) + i;
    load_q6_K(b, out[g]);
  }
}

// Rows r0 .. r0 + RG * kLaneRows - 1 times columns c0 .. c0 + CB - 1. prepared[i * RG + g]:
// super-block i of register g's rows; nullptr: each register's rows loaded right before they
// are used (one column: all RG at once would spill most of them).
template <int RG, int CB>
void q6_K_lanes_block(const DotTile& t, const Q6KRows* prepared, int64_t r0, int64_t c0) {
  using engine::quant::BlockQ6_K;
  constexpr int RB = RG * kLaneRows;
  const char* ap[CB];
  const char* wp[RB];
  block_ptrs(t.a, t.a_stride, c0, t.cols, ap);
  block_ptrs(t.w, t.w_stride, r0, t.rows, wp);
  const int64_t nb = t.n / kQK_K;
  VR acc[RG][CB];
  for (int g = 0; g < RG; ++g)
    for (int c = 0; c < CB; ++c) acc[g][c] = vr_zero();
  for (int64_t i = 0; i < nb; ++i) {
    if (!prepared && !t.packed) prefetch_rows<RB>(t, r0 + RB, i, nb);
    for (int c = 0; c < CB; ++c) {
      const BlockQ8_K& a = reinterpret_cast<const BlockQ8_K*>(ap[c])[i];
      const VI bsums = vi_repeat(load256(a.bsums));
      VI aq[8];
      for (int k = 0; k < 8; ++k) aq[k] = vi_repeat(load256(a.qs + 32 * k));
      const VR da = vr_set1(a.d);
      for (int g = 0; g < RG; ++g) {
        Q6KRows here;
        if (!prepared && t.packed)  // a register's share at a time: a burst of prefetches stalls the loads
          prefetch_stream(packed_block(t, r0, i, sizeof(BlockQ6_K)) + g * kLaneRows * sizeof(BlockQ6_K), kLaneRows * sizeof(BlockQ6_K));
        if (!prepared) q6_K_rows<1>(t, wp + g * kLaneRows, r0 + g * kLaneRows, i, &here);
        const Q6KRows& rows = prepared ? prepared[i * RG + g] : here;
        VI lanes = vi_sub(vi_set1(0), vi_mul(vi_madd16(rows.offset, bsums), vi_set1(32)));
        for (int k = 0; k < 8; ++k) lanes = vi_add(lanes, vi_madd16(vi_maddubs(rows.q[k], aq[k]), rows.scale[k]));
        acc[g][c] = vr_fma(vr_mul(da, rows.d), vr_from_i32(lanes), acc[g][c]);
      }
    }
  }
  for (int g = 0; g < RG; ++g)
    for (int c = 0; c < CB; ++c) {
      alignas(64) float v[kRowLanes];
      vr_store(v, acc[g][c]);
      for (int p = 0; p < kLaneRows; ++p) store_out(t, r0 + g * kLaneRows + p, c0 + c, hsum_lanes8(_mm256_loadu_ps(v + 8 * p)));
    }
}

// Q6_K with several columns and int16 dot products (VNNI): a register's levels are first
// multiplied by their scales into int16 pairs (at most 8064 in magnitude), so each column's
// chunk costs two vpdpwssd per register instead of three byte operations; the lane sums are the
// same integers.
struct Q6KWide {
  VI w[8][2];  // chunk k, half h: lane L holds elements 4L + 2h and 4L + 2h + 1 of the chunk
  VI offset;   // as Q6KRows
  VR d;
};

inline Q6KWide q6_K_widen(const Q6KRows& rows) {
  const __m256i pick[2] = {
      _mm256_setr_epi8(0, -1, 1, -1, 4, -1, 5, -1, 8, -1, 9, -1, 12, -1, 13, -1, 0, -1, 1, -1, 4, -1, 5, -1, 8, -1, 9, -1, 12, -1, 13, -1),
      _mm256_setr_epi8(2, -1, 3, -1, 6, -1, 7, -1, 10, -1, 11, -1, 14, -1, 15, -1, 2, -1, 3, -1, 6, -1, 7, -1, 10, -1, 11, -1, 14, -1,
                       15, -1)};
  Q6KWide wide;
  for (int k = 0; k < 8; ++k)
    for (int h = 0; h < 2; ++h) wide.w[k][h] = vi_mul16(vi_pick_bytes(rows.q[k], pick[h]), rows.scale[k]);
  wide.offset = rows.offset;
  wide.d = rows.d;
  return wide;
}

// pairs: per column, super-block, chunk k and half h, the activation pairs q8_pairs made.
template <int RG, int CB>
void q6_K_wide_block(const DotTile& t, const Q6KWide* prepared, const __m256i* pairs, int64_t r0, int64_t c0) {
  const char* ap[CB];
  block_ptrs(t.a, t.a_stride, c0, t.cols, ap);
  const int64_t nb = t.n / kQK_K;
  VR acc[RG][CB];
  for (int g = 0; g < RG; ++g)
    for (int c = 0; c < CB; ++c) acc[g][c] = vr_zero();
  for (int64_t i = 0; i < nb; ++i)
    for (int c = 0; c < CB; ++c) {
      const __m256i* x = pairs + (min_i64(c0 + c, t.cols - 1) * nb + i) * 16;
      const BlockQ8_K& a = reinterpret_cast<const BlockQ8_K*>(ap[c])[i];
      const VI bsums = vi_repeat(load256(a.bsums));
      const VR da = vr_set1(a.d);
      const Q6KWide* w = prepared + i * RG;
      VI lanes[RG][2];
      for (int g = 0; g < RG; ++g) {
        lanes[g][0] = vi_sub(vi_set1(0), vi_mul(vi_madd16(w[g].offset, bsums), vi_set1(32)));
        lanes[g][1] = vi_set1(0);
      }
      for (int k = 0; k < 8; ++k)
        for (int h = 0; h < 2; ++h) {  // one activation load serves every register of rows
          const VI xv = vi_repeat(load256(x + 2 * k + h));
          for (int g = 0; g < RG; ++g) lanes[g][h] = vi_dot16(lanes[g][h], xv, w[g].w[k][h]);
        }
      for (int g = 0; g < RG; ++g) acc[g][c] = vr_fma(vr_mul(da, w[g].d), vr_from_i32(vi_add(lanes[g][0], lanes[g][1])), acc[g][c]);
    }
  for (int g = 0; g < RG; ++g)
    for (int c = 0; c < CB; ++c) {
      alignas(64) float v[kRowLanes];
      vr_store(v, acc[g][c]);
      for (int p = 0; p < kLaneRows; ++p) store_out(t, r0 + g * kLaneRows + p, c0 + c, hsum_lanes8(_mm256_loadu_ps(v + 8 * p)));
    }
}

void q6_K_lanes(const DotTile& t) {
  constexpr int RG = 2 / kLaneRows > 0 ? 2 / kLaneRows : 1;  // a row pair per block, as the file's rows stream best
  if (t.packed && t.cols == 1) {  // a whole packed group per pass: one stream of weights
    constexpr int RGP = kPackRows / kLaneRows;
    for (int64_t r0 = 0; r0 < t.rows; r0 += kPackRows) q6_K_lanes_block<RGP, 1>(t, nullptr, r0, 0);
    return;
  }
  if (t.cols == 1) {
    for (int64_t r0 = 0; r0 < t.rows; r0 += RG * kLaneRows) q6_K_lanes_block<RG, 1>(t, nullptr, r0, 0);
    return;
  }
  const int64_t nb = t.n / kQK_K;
  if constexpr (!ENGINE_SIMD_VNNI) {  // without int16 dot products the byte operations are cheaper
    // Several columns: each row block's super-blocks loaded once, then reused by every column.
    for_prepared_row_blocks<RG * kLaneRows, Q6KRows>(
        t, nb, RG, [&](const char* const* wp, int64_t r0, int64_t i, Q6KRows* out) { q6_K_rows<RG>(t, wp, r0, i, out); },
        [&](auto cols, const Q6KRows* rows, int64_t r0, int64_t c0) { q6_K_lanes_block<RG, decltype(cols)::value>(t, rows, r0, c0); });
    return;
  }
  __m256i* pairs = thread_buffer<__m256i>(static_cast<size_t>(t.cols * nb * 16));
  for (int64_t c = 0; c < t.cols; ++c)
    for (int64_t i = 0; i < nb; ++i) {
      const BlockQ8_K& a = act_block<BlockQ8_K>(t, c, i);
      for (int k = 0; k < 8; ++k) q8_pairs(a.qs + 32 * k, pairs + (c * nb + i) * 16 + 2 * k);
    }
  // Each row block's super-blocks loaded and widened once, then reused by every column; four
  // registers of rows share each activation load.
  constexpr int RGW = 4;
  for_prepared_row_blocks<RGW * kLaneRows, Q6KWide>(
      t, nb, RGW,
      [&](const char* const* wp, int64_t r0, int64_t i, Q6KWide* out) {
        for (int g = 0; g < RGW; ++g) {
          Q6KRows rows;
          q6_K_rows<1>(t, wp + g * kLaneRows, r0 + g * kLaneRows, i, &rows);
          out[g] = q6_K_widen(rows);
        }
      },
      [&](auto cols, const Q6KWide* rows, int64_t r0, int64_t c0) { q6_K_wide_block<RGW, decltype(cols)::value>(t, rows, pairs, r0, c0); });
}

// AVX2 eight-lane K orders (Q3_K, Q5_K): lanes += (da * dw) * exact lane sums per super-block;
// Q5_K adds a fused running min sum.
template <int RB, int CB>
void k_lanes_block(DType type, const KRow* unpacked, const DotTile& t, int64_t r0, int64_t c0) {
  const char* ap[CB];
  block_ptrs(t.a, t.a_stride, c0, t.cols, ap);
  __m256 acc[RB][CB];
  float mins[RB][CB] = {};
  for (int r = 0; r < RB; ++r)
    for (int c = 0; c < CB; ++c) acc[r][c] = _mm256_setzero_ps();
  for (int64_t i = 0; i < t.n / kQK_K; ++i) {
    const KRow* rows = unpacked + i * RB;
    for (int c = 0; c < CB; ++c) {
      const BlockQ8_K& a = reinterpret_cast<const BlockQ8_K*>(ap[c])[i];
      const __m256i bsums = load256(a.bsums);
      for (int r = 0; r < RB; ++r) {
        const KRow& w = rows[r];
        __m256i lanes = type == DType::Q3_K ? k_lanes<true>(w, a.qs, 0, 8) : k_lanes<false>(w, a.qs, 0, 8);
        acc[r][c] = _mm256_fmadd_ps(_mm256_set1_ps(a.d * w.d), _mm256_cvtepi32_ps(lanes), acc[r][c]);
        if (type == DType::Q5_K) {
          const float min_sum = static_cast<float>(hsum_i32(_mm256_madd_epi16(w.min16, bsums)));
          mins[r][c] = __builtin_fmaf(-a.d * w.dmin, min_sum, mins[r][c]);
        }
      }
    }
  }
  for (int r = 0; r < RB; ++r)
    for (int c = 0; c < CB; ++c) {
      const float lanes = hsum_lanes8(acc[r][c]);
      store_out(t, r0 + r, c0 + c, type == DType::Q5_K ? lanes + mins[r][c] : lanes);
    }
}

void k_lanes_tile(DType type, const DotTile& t) {
  for (int64_t r0 = 0; r0 < t.rows; r0 += 2) {
    const KRow* rows = unpack_k_rows<2>(type, t, r0);
    int64_t c0 = 0;
    for (; c0 + 4 <= t.cols; c0 += 4) k_lanes_block<2, 4>(type, rows, t, r0, c0);
    for (; c0 < t.cols; ++c0) k_lanes_block<2, 1>(type, rows, t, r0, c0);
  }
}

template <bool Native>
bool dot_tile_impl(DType weight, DotOrder order, const DotTile& t) {
  const bool batch = order == DotOrder::kBatch;
  switch (weight) {
    case DType::F32:
    case DType::F16:
    case DType::BF16: return float_dot_tile<Native>(weight, order, t);
    case DType::Q8_0: return (t.cols > 1 || t.packed ? q8_0_lanes_gemm(t) : legacy_lanes_column<Q8_0Levels>(t)), true;
    case DType::Q5_0: return legacy_lanes<Q5_0Levels>(t), true;
    case DType::Q4_1: return legacy_lanes<Q4_1Levels>(t), true;
    case DType::Q5_1: return legacy_lanes<Q5_1Levels>(t), true;
    case DType::Q4_0: return q4_0_serial(t), true;
    case DType::Q4_K: return q4_K_serial(batch, t), true;
    case DType::Q2_K: return k_serial(weight, batch ? 8 : 16, t), true;
    case DType::Q3_K:
    case DType::Q5_K: return k_lanes_tile(weight, t), true;
    case DType::Q6_K: return q6_K_lanes(t), true;
    default: return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Activation quantizers: llama.cpp's SIMD Q8_0 / Q8_1 (x * 127 / amax, half to even) and Q8_K.

inline __m256i round_to_i8x32(const float* x, __m256 id) {
  const __m256i i0 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x), id));
  const __m256i i1 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8), id));
  const __m256i i2 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 16), id));
  const __m256i i3 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 24), id));
  // packs interleave 128-bit halves; the permute puts the 32 bytes back in element order.
  const __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(i0, i1), _mm256_packs_epi32(i2, i3));
  return _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

inline float absmax32(const float* x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 m = _mm256_andnot_ps(sign, _mm256_loadu_ps(x));
  for (int j = 8; j < 32; j += 8) m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + j)));
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

template <typename Block>
void quantize_q8_simd(const float* x, Block* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    const float amax = absmax32(x);
    const float d = amax / 127;
    const float id = d == 0 ? 0.0f : 127.0f / amax;
    y[i].d = fp32_to_fp16(d);
    const __m256i q = round_to_i8x32(x, _mm256_set1_ps(id));
    store256(reinterpret_cast<uint8_t*>(y[i].qs), q);
    if constexpr (std::is_same_v<Block, BlockQ8_1>) {
      const int sum = hsum_i32(_mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), q), _mm256_set1_epi16(1)));
      y[i].s = fp32_to_fp16(static_cast<float>(sum) * d);
    }
  }
}

void quantize_q8_K_simd(const float* x, BlockQ8_K* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK_K) {
    float amax = 0;
    for (int j = 0; j < kQK_K; j += kQK) {
      const float m = absmax32(x + j);
      amax = m > amax ? m : amax;
    }
    if (amax == 0) {
      std::memset(&y[i], 0, sizeof(BlockQ8_K));
      continue;
    }
    // The first element of largest magnitude gives the sign, as in the scalar search.
    int first = 0;
    const __m256 target = _mm256_set1_ps(amax), sign = _mm256_set1_ps(-0.0f);
    for (int j = 0; j < kQK_K; j += 8) {
      const int mask = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + j)), target, _CMP_EQ_OQ));
      if (mask) {
        first = j + __builtin_ctz(static_cast<unsigned>(mask));
        break;
      }
    }
    const float iscale = -127.f / x[first];
    const __m256 is = _mm256_set1_ps(iscale);
    for (int j = 0; j < kQK_K; j += kQK) {
      const __m256i q = _mm256_min_epi8(round_to_i8x32(x + j, is), _mm256_set1_epi8(127));
      store256(reinterpret_cast<uint8_t*>(y[i].qs + j), q);
      // Group sums of 16: bytes to int16 pairs, then pairs within each 8-byte half.
      const __m256i pairs = _mm256_maddubs_epi16(_mm256_set1_epi8(1), q);
      const __m256i quads = _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));  // lane L: bytes 4L..4L+3
      alignas(32) int32_t l[8];
      _mm256_store_si256(reinterpret_cast<__m256i*>(l), quads);
      y[i].bsums[j / 16] = static_cast<int16_t>(l[0] + l[1] + l[2] + l[3]);
      y[i].bsums[j / 16 + 1] = static_cast<int16_t>(l[4] + l[5] + l[6] + l[7]);
    }
    y[i].d = 1 / iscale;
  }
}

// F16 activations: the F16C conversion, bit-identical to fp32_to_fp16 (NaNs quieted alike).
void convert_f16_simd(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + kVecLanes <= n; i += kVecLanes) vf_store_f16(y + i, vf_load_f32(x + i));
  for (; i < n; ++i) y[i] = fp32_to_fp16(x[i]);
}

bool quantize_activation_impl(DType act, const float* x, void* dst, int64_t n) {
  switch (act) {
    case DType::F16: return convert_f16_simd(x, static_cast<uint16_t*>(dst), n), true;
    case DType::Q8_0: return quantize_q8_simd(x, static_cast<BlockQ8_0*>(dst), n / kQK), true;
    case DType::Q8_1: return quantize_q8_simd(x, static_cast<BlockQ8_1*>(dst), n / kQK), true;
    case DType::Q8_K: return quantize_q8_K_simd(x, static_cast<BlockQ8_K*>(dst), n / kQK_K), true;
    default: return false;
  }
}

// ---------------------------------------------------------------------------------------------
// The vector exp of softmax and SiLU (vec_math.h's vec_expf on 16 lanes).

inline VF vf_expf(VF x) {
  const VF shift = vf_set1(0x1.8p23f);
  const VF z = vf_fma(x, vf_set1(0x1.715476p+0f), shift);
  const VF n = vf_sub(z, shift);
  const VF neg_n = vf_mul(n, vf_set1(-1.0f));
  const VF b = vf_fma(neg_n, vf_set1(0x1.7f7d1cp-20f), vf_fma(neg_n, vf_set1(0x1.62e4p-1f), x));
  const VF u = vf_mul(b, b);
  const VF j = vf_fma(vf_fma(vf_fma(vf_set1(0x1.0e4020p-7f), b, vf_set1(0x1.573e2ep-5f)), u,
                             vf_fma(vf_set1(0x1.555e66p-3f), b, vf_set1(0x1.fffdb6p-2f))),
                      u, vf_fma(vf_set1(0x1.ffffecp-1f), b, vf_set1(1.0f)));
  return vf_exp_scale(j, n);
}

double exp_shifted_impl(const float* x, float shift, float* y, int64_t n) {
  const VF s = vf_set1(shift);
  double sum = 0.0;
  for (int64_t i = 0; i < n; i += kVecLanes) {
    const VF e = vf_expf(vf_sub(vf_load_f32(x + i), s));
    vf_store(y + i, e);
    sum += static_cast<double>(vf_reduce(e));
  }
  return sum;
}

void silu_impl(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i += kVecLanes) {
    const VF v = vf_load_f32(x + i);
    vf_store(y + i, vf_div(v, vf_add(vf_set1(1.0f), vf_expf(vf_mul(v, vf_set1(-1.0f))))));
  }
}
