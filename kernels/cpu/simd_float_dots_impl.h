// Part of the SIMD kernel bodies (simd_kernels_impl.h lists the parts, in order): the float dots.

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
int64_t f16_tiled_floats(const DotTile& t) { return min_i64(ENGINE_TILE_ROWS, t.rows) * t.n; }

void f16_tiled(const DotTile& t) {
  constexpr int RB = ENGINE_TILE_ROWS, CB = ENGINE_TILE_COLS;
  TileWork work(t);
  float* wide = work.take<float>(f16_tiled_floats(t));
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

inline int64_t short_row_groups(const DotTile& t) { return (t.rows + kVecLanes - 1) / kVecLanes; }
// The work: the transposed groups, then the columns widened.
int64_t short_tiled_floats(const DotTile& t) { return (short_row_groups(t) * kVecLanes + t.cols) * t.n; }

template <typename W, typename A>
void short_tiled(const DotTile& t) {
  constexpr int CB = 4;
  const int64_t n = t.n, groups = short_row_groups(t);
  TileWork work(t);
  float* wt = work.take<float>(short_tiled_floats(t));
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

// The dot-product instruction reads denormal inputs as zero and flushes denormal results to zero
// of their sign; its emulation (two FMAs a step) gets both from MXCSR's DAZ and FTZ bits, set for
// the scope of its loops only: the lane trees after them round as their scalar twins do.
class Bf16Denormals {
 public:
  Bf16Denormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | kDenormalsAreZero | kFlushToZero); }
  ~Bf16Denormals() { _mm_setcsr(saved_); }
  Bf16Denormals(const Bf16Denormals&) = delete;
  Bf16Denormals& operator=(const Bf16Denormals&) = delete;

 private:
  static constexpr unsigned kDenormalsAreZero = 0x0040, kFlushToZero = 0x8000;
  unsigned saved_;
};

// Runs `steps` (dpbf16<Native> loops) with the instruction's denormal semantics.
template <bool Native, typename Steps>
void bf16_steps(Steps steps) {
  if constexpr (Native) {
    steps();
  } else {
    const Bf16Denormals scope;
    steps();
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
  bf16_steps<Native>([&] {
    for (int64_t k = 0; k < t.n; k += 2 * kVecLanes)
      for (int r = 0; r < RB; ++r)
        for (int c = 0; c < CB; ++c)
          acc[r][c] = dpbf16<Native>(acc[r][c], reinterpret_cast<const uint16_t*>(wp[r]) + k,
                                     reinterpret_cast<const uint16_t*>(ap[c]) + k);
  });
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

// Whether the near requests of prefetch_stream (a line kL1Ahead on from each line read) mostly
// fall on lines a tile reads, its rows `stride` bytes apart and `bytes` of each read: always for
// rows that follow each other; not for decode's V rows a context apart, where they fetch the
// unread rest of each row (docs/benchmarks.md: the V product a quarter slower with them).
inline bool near_requests_land(size_t bytes, size_t stride) {
  if (stride <= bytes) return true;
  size_t lines = 0, landing = 0;
  for (size_t o = 0; o < bytes; o += 64, ++lines) landing += (o + static_cast<size_t>(kL1Ahead)) % stride < bytes;
  return 2 * landing >= lines;
}

// vec_dot order for one weight row and CB activation columns (floats): per column four
// accumulators over 64-element steps (a zero-padded last step when `padded`), folded 0+2, 1+3,
// then 0+1 into folded[c]; the lane tree is the caller's. Each weight vector is loaded once
// for all columns; the rows are requested ahead as `requests` says (near_requests_land).
// Returns where leftovers start.
template <int CB, typename TW, typename TA>
int64_t float_row_folded(int64_t n, const TW* w, const TA* const (&a)[CB], bool padded, StreamRequests requests, VF (&folded)[CB]) {
  VF acc[CB][4];
  for (int c = 0; c < CB; ++c)
    for (int j = 0; j < 4; ++j) acc[c][j] = vf_zero();
  int64_t i = 0;
  // The unrolled loops below let GCC keep acc in registers: rolled, the 256-bit forms' pairs stayed
  // in memory, each FMA waiting on a store-to-load forward (docs/benchmarks.md).
  for (; i + kRowStepElems <= n; i += kRowStepElems) {
    prefetch_stream(reinterpret_cast<const char*>(w + i), kRowStepElems * sizeof(TW), requests);
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const VF wv = vf_load(w + i + j * kVecLanes);
#pragma GCC unroll 4
      for (int c = 0; c < CB; ++c) acc[c][j] = vf_fma(wv, vf_load(a[c] + i + j * kVecLanes), acc[c][j]);
    }
  }
  if (padded && i < n) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      // A vector wholly past the row loads none of its lanes from the row's start: a masked load
      // still fetches its line, which past a short row (decode's V span) is a cache miss of its own.
      const int64_t first = i + j * kVecLanes, count = first >= n ? 0 : min_i64(n - first, kVecLanes);
      const VF wv = vf_load_first(w + (count ? first : 0), count);
#pragma GCC unroll 4
      for (int c = 0; c < CB; ++c) acc[c][j] = vf_fma(wv, vf_load_first(a[c] + first, count), acc[c][j]);
    }
    i = n;
  }
  for (int c = 0; c < CB; ++c) folded[c] = vf_add(vf_add(acc[c][0], acc[c][2]), vf_add(acc[c][1], acc[c][3]));
  return i;
}

// What follows the vector part: F32 rows go on with the FMA chain, F16 rows sum in double
// (their activations floats, or half floats read as they are).
inline float float_row_tail(int64_t n, int64_t i, const float* w, const float* a, float sum) {
  for (; i < n; ++i) sum = __builtin_fmaf(w[i], a[i], sum);
  return sum;
}
inline float act_float(float a) { return a; }
inline float act_float(uint16_t a) { return fp16_to_fp32(a); }
template <typename TA>
float float_row_tail(int64_t n, int64_t i, const uint16_t* w, const TA* a, float vector_sum) {
  if (i == n) return vector_sum;  // no leftovers: the sum's round trip through double is exact
  double sum = vector_sum;
  for (; i < n; ++i) sum += static_cast<double>(fp16_to_fp32(w[i]) * act_float(a[i]));
  return static_cast<float>(sum);
}

#ifdef ENGINE_VF_REDUCE4
// Four columns of one row in the vec_dot order, sharing the row's loads and one lane-tree
// reduction.
template <typename TW, typename TA>
void float_row_columns4(const DotTile& t, int64_t r, int64_t c, const TA* const (&ac)[4], bool padded, StreamRequests requests) {
  const auto* w = reinterpret_cast<const TW*>(t.w + r * static_cast<int64_t>(t.w_stride));
  VF folded[4];
  const int64_t i = float_row_folded(t.n, w, ac, padded, requests, folded);
  alignas(16) float sums[4];
  _mm_store_ps(sums, vf_reduce4(folded));
  for (int k = 0; k < 4; ++k) store_out(t, r, c + k, float_row_tail(t.n, i, w, ac[k], sums[k]));
}

// Rows of one 64-element step (decode's K rows of a 64-wide head), four at a time by four
// columns: each output folded as float_row_folded folds it, then a column's four rows reduced
// together into four adjacent outputs, where one row at a time spent as much on its reduction
// and bookkeeping as on its multiplies.
template <typename TW>
void one_step_rows4(const DotTile& t, int64_t r0, int64_t c0, const float* const (&ac)[4]) {
  VF folded[4][4];  // [column][row]
  for (int k = 0; k < 4; ++k) {
    const auto* w = reinterpret_cast<const TW*>(t.w + (r0 + k) * static_cast<int64_t>(t.w_stride));
    prefetch_stream(reinterpret_cast<const char*>(w), kRowStepElems * sizeof(TW), t.requests);
    VF wv[4];
    for (int j = 0; j < 4; ++j) wv[j] = vf_load(w + j * kVecLanes);
    for (int c = 0; c < 4; ++c) {
      VF p[4];
      for (int j = 0; j < 4; ++j) p[j] = vf_fma(wv[j], vf_load_f32(ac[c] + j * kVecLanes), vf_zero());
      folded[c][k] = vf_add(vf_add(p[0], p[2]), vf_add(p[1], p[3]));
    }
  }
  for (int c = 0; c < 4; ++c) {
    char* out = t.out + r0 * static_cast<int64_t>(sizeof(float)) + (c0 + c) * static_cast<int64_t>(t.out_col);
    _mm_storeu_ps(reinterpret_cast<float*>(out), vf_reduce4(folded[c]));
  }
}
#endif

// Every output of a tile in the vec_dot order, activations at a as floats or (TA uint16_t) half
// floats widened per use. Where the instruction set has vf_reduce4, four columns share
// each weight row's loads and one lane-tree reduction (attention's query heads on one K / V
// head: short rows, where the reduction costs as much as the multiplies).
template <typename TW, typename TA = float>
void float_rows(const DotTile& t, const char* a, size_t a_stride, bool padded) {
  const auto column = [&](int64_t c) { return reinterpret_cast<const TA*>(a + c * static_cast<int64_t>(a_stride)); };
  const StreamRequests requests =
      near_requests_land(static_cast<size_t>(t.n) * sizeof(TW), t.w_stride) ? t.requests : far_at_most(t.requests);
  int64_t c = 0;
#ifdef ENGINE_VF_REDUCE4
  const bool one_step = t.n == kRowStepElems && t.out_row == sizeof(float);
  for (; c + 4 <= t.cols; c += 4) {
    const TA* ac[4] = {column(c), column(c + 1), column(c + 2), column(c + 3)};
    int64_t r = 0;
    if constexpr (std::is_same_v<TA, float>)
      if (one_step)
        for (; r + 4 <= t.rows; r += 4) one_step_rows4<TW>(t, r, c, ac);
    for (; r < t.rows; ++r) float_row_columns4<TW>(t, r, c, ac, padded, requests);
  }
#endif
  for (; c < t.cols; ++c) {
    const TA* ac[1] = {column(c)};
    for (int64_t r = 0; r < t.rows; ++r) {
      const auto* w = reinterpret_cast<const TW*>(t.w + r * static_cast<int64_t>(t.w_stride));
      VF folded[1];
      const int64_t i = float_row_folded(t.n, w, ac, padded, requests, folded);
      store_out(t, r, c, float_row_tail(t.n, i, w, ac[0], vf_reduce(folded[0])));
    }
  }
}

// vec_dot order for BF16: two dot-product accumulators over 64-element steps.
template <bool Native>
float bf16_row(int64_t n, const uint16_t* w, const uint16_t* a, bool padded) {
  VF acc0 = vf_zero(), acc1 = vf_zero();
  int64_t i = 0;
  bf16_steps<Native>([&] {
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
  });
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

// Whether an F16 tile in a row order widens its activation columns to floats first: only while
// they take at most kWideColumnsBytes: decode's rows of 4096 streamed ~15 % faster with their
// half-float column than widened on the Zen 5 of docs/benchmarks.md (rows of 2048 the same either
// way).
constexpr int64_t kWideColumnsBytes = 8192;
inline bool widens_f16_columns(const DotTile& t) {
  return t.n * t.cols * static_cast<int64_t>(sizeof(float)) <= kWideColumnsBytes;
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
      // Long rows (decode's V rows deep in the context) read their activation columns as they
      // are: widened, the columns would no longer stay in L1 beside the rows streaming past.
      if (!widens_f16_columns(t)) return float_rows<uint16_t, uint16_t>(t, t.a, t.a_stride, padded), true;
      // Every activation column widened once for all the tile's rows.
      TileWork work(t);
      float* wide = work.take<float>(t.n * t.cols);
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

// The bytes of work memory float_dot_tile takes for t.
size_t float_dot_tile_work_size(DType weight, DotOrder order, const DotTile& t) {
  const bool tiled = order == DotOrder::kBatch;
  if (tiled && (weight == DType::F32 || weight == DType::F16) && short_dot(t.n)) return piece_bytes<float>(short_tiled_floats(t));
  if (weight != DType::F16) return 0;
  if (tiled) return piece_bytes<float>(f16_tiled_floats(t));
  return widens_f16_columns(t) ? piece_bytes<float>(t.n * t.cols) : 0;
}
