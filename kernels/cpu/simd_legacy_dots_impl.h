// Part of the SIMD kernel bodies (simd_kernels_impl.h lists the parts, in order): legacy quant dots.

// ---------------------------------------------------------------------------------------------
// Legacy blocks, AVX2 eight-lane order: per output eight float lanes, lanes += (dw * da) *
// exact lane sums per block, the Q8_1 forms also a scalar fused running sum of m * s.

constexpr int kLaneRows = kRowLanes / 8;  // weight rows whose eight lanes share a register

// A register's rows of levels: each row's levels(), joined.
template <typename L>
struct JoinedRows {
  template <typename Block>
  static VI rows(const Block* const* b) {
    __m256i parts[kLaneRows];
    for (int p = 0; p < kLaneRows; ++p) parts[p] = L::levels(*b[p]);
    return vi_join(parts);
  }
};

struct Q8_0Levels : JoinedRows<Q8_0Levels> {  // signed levels against Q8_0
  using Block = BlockQ8_0;
  static constexpr bool kSigned = true;
  static __m256i levels(const Block& b) { return load256(b.qs); }
};
struct Q5_0Levels : JoinedRows<Q5_0Levels> {
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
  static VI rows(const Block* const* b) {
    const uint8_t* qs[kLaneRows];
    for (int p = 0; p < kLaneRows; ++p) qs[p] = b[p]->qs;
    return vi_nibbles_rows(qs);
  }
};
struct Q5_1Levels : JoinedRows<Q5_1Levels> {
  using Block = BlockQ5_1;
  static constexpr bool kSigned = false;
  static __m256i levels(const Block& b) { return _mm256_or_si256(nibbles32(b.qs), fifth_bits(b.qh)); }
};

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

// Each activation block's scale, the act_d of legacy_lanes_block: the kernels' one piece of work
// memory (legacy_lanes_work_size).
template <typename L>
const float* legacy_act_scales(const DotTile& t) {
  TileWork work(t);
  return act_table<float, LegacyAct<L>>(t, work, [](const LegacyAct<L>& a) { return half(a.d); });
}

inline size_t legacy_lanes_work_size(const DotTile& t) { return t.cols == 1 ? 0 : act_table_bytes<float>(t); }  // the column form takes none

// One activation column (decode), weights in the file layout: legacy_lanes_block's order with
// the row scales of a block converted eight rows at a time, and the running min sums of those
// rows (the Q8_1 forms) one fused multiply-add in eight lanes instead of eight scalar ones.
template <typename L, int RG>
void legacy_column_block(const DotTile& t, int64_t r0) {
  using Block = typename L::Block;
  using Act = LegacyAct<L>;
  constexpr int RB = RG * kLaneRows;
  constexpr int kEights = (RB + 7) / 8;  // registers of eight rows' scales
  const int64_t nb = t.n / kQK;
  const char* wp[RB];
  block_ptrs(t.w, t.w_stride, r0, t.rows, wp);
  const auto* act = reinterpret_cast<const Act*>(t.a);
  VR acc[RG];
  for (int g = 0; g < RG; ++g) acc[g] = vr_zero();
  __m256 mins[kEights];
  for (int e = 0; e < kEights; ++e) mins[e] = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    // Each row's line 256 bytes on, when its blocks cross into a new line: the hardware
    // prefetchers lose track of RB streams this close together.
    constexpr int64_t kAhead = 256;
    if (static_cast<int64_t>(i * sizeof(Block)) / 64 != static_cast<int64_t>((i + 1) * sizeof(Block)) / 64)
      for (int r = 0; r < RB; ++r) __builtin_prefetch(wp[r] + (i + 1) * static_cast<int64_t>(sizeof(Block)) + kAhead);
    const Block* b[RB];
    alignas(16) uint16_t dh[kEights * 8] = {}, mh[kEights * 8] = {};
    for (int r = 0; r < RB; ++r) {
      b[r] = reinterpret_cast<const Block*>(wp[r]) + i;
      dh[r] = b[r]->d;
      if constexpr (!L::kSigned) mh[r] = b[r]->m;
    }
    __m256 d[kEights];
    for (int e = 0; e < kEights; ++e) d[e] = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(dh + 8 * e)));
    const Act& a = act[i];
    const VI av = vi_repeat(load256(a.qs));
    const VI start = L::kSigned ? vi_signed_offset(av) : vi_set1(0);
    const VR da = vr_set1(half(a.d));
    if constexpr (!L::kSigned)
      for (int e = 0; e < kEights; ++e)
        mins[e] = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(mh + 8 * e))), _mm256_set1_ps(half(a.s)), mins[e]);
    for (int g = 0; g < RG; ++g) {
      const VI rows = L::rows(b + g * kLaneRows);
      const VI lv = L::kSigned ? vi_signed_levels(rows) : rows;
      const VI lanes = L::kSigned ? vi_dot_s8v(start, lv, av) : vi_dot_u8v(start, lv, av);
      constexpr int kRegsPerEight = 8 / kLaneRows;
      acc[g] = vr_fma(vr_mul(vr_row_groups(d[g / kRegsPerEight], g % kRegsPerEight), da), vr_from_i32(lanes), acc[g]);
    }
  }
  alignas(32) float min_sums[kEights * 8];
  for (int e = 0; e < kEights; ++e) _mm256_store_ps(min_sums + 8 * e, mins[e]);
  for (int g = 0; g < RG; ++g) {
    alignas(64) float v[kRowLanes];
    vr_store(v, acc[g]);
    for (int p = 0; p < kLaneRows; ++p) {
      const int r = g * kLaneRows + p;
      const float lanes = hsum_lanes8(_mm256_loadu_ps(v + 8 * p));
      store_out(t, r0 + r, 0, L::kSigned ? lanes : lanes + min_sums[r]);
    }
  }
}

constexpr int kLegacyColumnRegs = 16 / kLaneRows;  // sixteen rows per pass share each block's activation

template <typename L>
void legacy_lanes_column(const DotTile& t) {
  for (int64_t r0 = 0; r0 < t.rows; r0 += kLegacyColumnRegs * kLaneRows) legacy_column_block<L, kLegacyColumnRegs>(t, r0);
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

// Each row's eight lanes summed in hsum_lanes8's tree, the lanes being registers a[0..7] (one
// lane of kRowLanes rows each).
inline VR lane_tree(const VR* a) {
  return vr_add(vr_add(vr_add(a[4], a[0]), vr_add(a[6], a[2])), vr_add(vr_add(a[5], a[1]), vr_add(a[7], a[3])));
}

// The eight lanes of a packed legacy block (repack.h) from its nibble dwords at quads (a row per
// 32-bit lane): lane j < 4 the low nibbles of dword j, lane j + 4 their high nibbles.
inline void nibble_lanes(const char* quads, VI (&lanes)[8]) {
  for (int j = 0; j < 4; ++j) {
    const VI quad = vi_load(quads + j * kPackRows * sizeof(int32_t));
    lanes[j] = vi_low_nibbles(quad);
    lanes[4 + j] = vi_high_nibbles(quad);
  }
}

// The same with each level's fifth bit, from the rows' qh words (Q5_0, Q5_1: the dword before).
inline void five_bit_lanes(const char* qh_and_quads, VI (&lanes)[8]) {
  nibble_lanes(qh_and_quads + kPackRows * sizeof(int32_t), lanes);
  const VI qh = vi_load(qh_and_quads);
  for (int j = 0; j < 8; ++j) lanes[j] = vi_or(lanes[j], vi_fifth_bits(qh, j));
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

// The kRowLanes packed rows from tile row r0 of a block of their group at `group` (the tile's
// rows are whole groups, so rows r0.. lie in one group, in order).
[[gnu::always_inline]] inline Q8_0LaneRows q8_0_packed_lane_rows(const DotTile& t, const char* group, int64_t r0) {
  if (r0 % kPackRows == 0) prefetch_stream(group, kPackRows * sizeof(BlockQ8_0), t.requests);  // the group's first register requests it
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

// Several columns against prepared row blocks: rows[i] is block i of the rows from r0.
template <int CB>
[[gnu::always_inline]] inline void q8_0_lane_block(const DotTile& t, const Q8_0LaneRows* rows, const Q8_0LaneAct* act, int64_t r0, int64_t c0) {
  const char* ap[CB];
  block_ptrs(t.a, t.a_stride, c0, t.cols, ap);
  const int64_t nb = t.n / kQK;
  VR acc[CB][8];
  for (int c = 0; c < CB; ++c)
    for (int j = 0; j < 8; ++j) acc[c][j] = vr_zero();
  for (int64_t i = 0; i < nb; ++i) {
    const Q8_0LaneRows& w = rows[i];
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
  for (int c = 0; c < CB; ++c) store_row_lanes(t, r0, c0 + c, lane_tree(acc[c]));
}

// Work memory: the activation table, then (unless each block's registers come straight from the
// packed stream) the prepared row blocks.
size_t q8_0_lanes_gemm_work_size(const DotTile& t) {
  return act_table_bytes<Q8_0LaneAct>(t) + (t.packed && t.cols == 1 ? 0 : prepared_bytes<Q8_0LaneRows>(t.n / kQK, 1));
}

// One column (decode) in q8_0_lane_block's order, each block's registers straight from the
// weight stream, kGroups registers of rows a pass: where a register holds half a packed group
// (the 256-bit forms) Q8_0 runs both halves at once, sharing the activation's dwords and
// offsets (1.2-1.5 x from L2); Q5_0, whose fifth bits take more registers, one at a time.
template <int kGroups, typename PackedRows>
void signed_lanes_column(const DotTile& t, PackedRows packed_rows, size_t block_bytes, const Q8_0LaneAct* act) {
  const BlockQ8_0* a = reinterpret_cast<const BlockQ8_0*>(t.a);
  struct Acc {
    VR sums[kGroups][8];
  };
  column_passes<Acc>(
      t, kGroups * kRowLanes, t.n / kQK, block_bytes,
      [&](int64_t r0, int64_t i, const char* group, Acc& acc) __attribute__((always_inline)) {
        Q8_0LaneRows w[kGroups];
        VR d[kGroups];
        for (int g = 0; g < kGroups; ++g) {
          w[g] = packed_rows(group, r0 + g * kRowLanes);
          d[g] = vr_mul(w[g].d, vr_set1(act[i].d));
        }
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) {
          int32_t y4;
          std::memcpy(&y4, a[i].qs + 4 * j, sizeof y4);
          const VI y = vi_set1(y4), offset = vi_set1(act[i].offset[j]);
          for (int g = 0; g < kGroups; ++g)
            acc.sums[g][j] = vr_fma(d[g], vr_from_i32(vi_dot_s8v(offset, w[g].lanes[j], y)), acc.sums[g][j]);
        }
      },
      [&](int64_t r0, const Acc& acc) __attribute__((always_inline)) {
        for (int g = 0; g < kGroups; ++g) store_row_lanes(t, r0 + g * kRowLanes, 0, lane_tree(acc.sums[g]));
      });
}

// packed_rows(group, r0): the packed rows from r0 of a block of their group at `group` as
// Q8_0LaneRows (Q8_0's, or Q5_0's below); rows in the file layout are Q8_0's. Groups:
// signed_lanes_column's. Several columns read each block once, where it lies (chunked or not),
// into the prepared row blocks.
template <int Groups, typename PackedRows>
void signed_lanes_gemm(const DotTile& t, PackedRows packed_rows, size_t block_bytes) {
  TileWork work(t);
  const Q8_0LaneAct* acts = act_table<Q8_0LaneAct, BlockQ8_0>(t, work, [](const BlockQ8_0& a) {
    alignas(64) int32_t offsets[kRowLanes];
    vi_store(offsets, vi_signed_offset(vi_repeat(load256(a.qs))));
    Q8_0LaneAct x;
    std::memcpy(x.offset, offsets, sizeof x.offset);
    x.d = half(a.d);
    return x;
  });
  if (t.packed && t.cols == 1) return signed_lanes_column<Groups>(t, packed_rows, block_bytes, acts);
  for_prepared_row_blocks<kRowLanes, Q8_0LaneRows, 2>(
      t, work, t.n / kQK, 1,
      [&](const char* const* wp, int64_t r0, int64_t i, Q8_0LaneRows* out) {
        if (t.packed)
          *out = packed_rows(packed_block(t, r0, i, block_bytes), r0);
        else
          q8_0_file_lane_rows(wp, i, *out);
      },
      [&](auto cols, const Q8_0LaneRows* rows, int64_t r0, int64_t c0) {
        q8_0_lane_block<decltype(cols)::value>(t, rows, acts, r0, c0);
      });
}

void q8_0_lanes_gemm(const DotTile& t) {
  signed_lanes_gemm<kPackRows / kRowLanes>(
      t, [&](const char* group, int64_t r0) { return q8_0_packed_lane_rows(t, group, r0); }, sizeof(BlockQ8_0));
}

// Q5_0 packed (repack.h: the scales, then dword 0, qh, and dwords 1..4, the nibbles, of every
// row): Q8_0's lane rows with each level (nibble | fifth bit) - 16.
[[gnu::always_inline]] inline Q8_0LaneRows q5_0_packed_lane_rows(const DotTile& t, const char* group, int64_t r0) {
  prefetch_stream(group, kPackRows * sizeof(BlockQ5_0), t.requests);
  Q8_0LaneRows w;
  five_bit_lanes(group + kPackRows * sizeof(uint16_t) + r0 % kPackRows * sizeof(int32_t), w.lanes);
  for (VI& lane : w.lanes) lane = vi_signed_levels(vi_sub8(lane, vi_set1(0x10101010)));
  w.d = vr_load_f16(reinterpret_cast<const uint16_t*>(group) + r0 % kPackRows);
  return w;
}

void q5_0_packed(const DotTile& t) {
  signed_lanes_gemm<1>(t, [&](const char* group, int64_t r0) { return q5_0_packed_lane_rows(t, group, r0); }, sizeof(BlockQ5_0));
}

// Q4_1 packed (repack.h) in legacy_lanes_block's eight-lane order, each register holding one
// lane of kRowLanes rows as the Q8_0 form above: lane j < 4 is the low nibbles of dword j of
// every row, lane j + 4 their high nibbles; the rows' running min sums are one FMA per column.
struct Q4_1LaneRows {
  VI lanes[8];
  VR d, m;
};

// The kRowLanes packed rows from r0 of a block of their group at `group` (Q5_1 with FiveBit: its
// qh words before the nibbles); with `burst`, the stream ahead of the group requested at once
// (else line by line by the caller: unsigned_lanes_column).
template <bool FiveBit>
[[gnu::always_inline]] inline Q4_1LaneRows q4_1_packed_lane_rows(const DotTile& t, const char* group, int64_t r0, bool burst) {
  constexpr size_t kBlock = FiveBit ? sizeof(BlockQ5_1) : sizeof(BlockQ4_1);
  if (burst) prefetch_stream(group, kPackRows * kBlock, far_at_most(t.requests));  // the near prefetches cost more than they gave
  const auto* halves = reinterpret_cast<const uint16_t*>(group) + r0 % kPackRows;
  const char* dwords = group + 2 * kPackRows * sizeof(uint16_t) + r0 % kPackRows * sizeof(int32_t);
  Q4_1LaneRows w;
  if constexpr (FiveBit)
    five_bit_lanes(dwords, w.lanes);
  else
    nibble_lanes(dwords, w.lanes);
  w.d = vr_load_f16(halves);
  w.m = vr_load_f16(halves + kPackRows);
  return w;
}

// Several columns against prepared row blocks: rows[i] is block i of the rows from r0.
template <int CB>
[[gnu::always_inline]] inline void q4_1_lane_block(const DotTile& t, const Q4_1LaneRows* rows, int64_t r0, int64_t c0) {
  const char* ap[CB];
  block_ptrs(t.a, t.a_stride, c0, t.cols, ap);
  const int64_t nb = t.n / kQK;
  VR acc[CB][8], mins[CB];
  for (int c = 0; c < CB; ++c) {
    mins[c] = vr_zero();
    for (int j = 0; j < 8; ++j) acc[c][j] = vr_zero();
  }
  for (int64_t i = 0; i < nb; ++i) {
    const Q4_1LaneRows& w = rows[i];
    const BlockQ8_1* x[CB];
    VR d[CB];
    for (int c = 0; c < CB; ++c) {
      x[c] = reinterpret_cast<const BlockQ8_1*>(ap[c]) + i;
      d[c] = vr_mul(w.d, vr_set1(half(x[c]->d)));
      mins[c] = vr_fma(w.m, vr_set1(half(x[c]->s)), mins[c]);
    }
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j)
#pragma GCC unroll 4
      for (int c = 0; c < CB; ++c) {
        int32_t y4;
        std::memcpy(&y4, x[c]->qs + 4 * j, sizeof y4);
        acc[c][j] = vr_fma(d[c], vr_from_i32(vi_dot_u8v(vi_set1(0), w.lanes[j], vi_set1(y4))), acc[c][j]);
      }
  }
  for (int c = 0; c < CB; ++c) store_row_lanes(t, r0, c0 + c, vr_add(lane_tree(acc[c]), mins[c]));
}

// One column (decode) in q4_1_lane_block's order, each block's registers straight from the
// weight stream, requested ahead a line per dword step beside the products (two threads read
// more than with the block's lines at once); kGroups registers of rows a pass, as
// signed_lanes_column.
template <int kGroups, typename PackedRows>
void unsigned_lanes_column(const DotTile& t, PackedRows packed_rows, size_t block_bytes) {
  const int64_t lines = static_cast<int64_t>((kPackRows * block_bytes + 63) / 64);
  const BlockQ8_1* a = reinterpret_cast<const BlockQ8_1*>(t.a);
  struct Acc {
    VR sums[kGroups][8], mins[kGroups];
  };
  column_passes<Acc>(
      t, kGroups * kRowLanes, t.n / kQK, block_bytes,
      [&](int64_t r0, int64_t i, const char* group, Acc& acc) __attribute__((always_inline)) {
        const VR ad = vr_set1(half(a[i].d)), as = vr_set1(half(a[i].s));
        Q4_1LaneRows w[kGroups];
        VR d[kGroups];
        for (int g = 0; g < kGroups; ++g) {
          w[g] = packed_rows(group, r0 + g * kRowLanes, false);
          d[g] = vr_mul(w[g].d, ad);
          acc.mins[g] = vr_fma(w[g].m, as, acc.mins[g]);
        }
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) {
          if (j < lines) prefetch_stream(group + 64 * j, 64, far_at_most(t.requests));
          int32_t y4;
          std::memcpy(&y4, a[i].qs + 4 * j, sizeof y4);
          const VI y = vi_set1(y4);
          for (int g = 0; g < kGroups; ++g)
            acc.sums[g][j] = vr_fma(d[g], vr_from_i32(vi_dot_u8v(vi_set1(0), w[g].lanes[j], y)), acc.sums[g][j]);
        }
      },
      [&](int64_t r0, const Acc& acc) __attribute__((always_inline)) {
        for (int g = 0; g < kGroups; ++g) store_row_lanes(t, r0 + g * kRowLanes, 0, vr_add(lane_tree(acc.sums[g]), acc.mins[g]));
      });
}

// Work memory: with several columns, the prepared row blocks.
size_t q4_1_packed_work_size(const DotTile& t) {
  return t.cols == 1 ? 0 : prepared_bytes<Q4_1LaneRows>(t.n / kQK, 1);
}

// packed_rows(group, r0, burst): the packed rows from r0 of a block of their group at `group` as
// Q4_1LaneRows (Q4_1's or Q5_1's); Groups: unsigned_lanes_column's.
template <int Groups, typename PackedRows>
void unsigned_lanes_packed(const DotTile& t, PackedRows packed_rows, size_t block_bytes) {
  if (t.cols == 1) return unsigned_lanes_column<Groups>(t, packed_rows, block_bytes);
  TileWork work(t);
  for_prepared_row_blocks<kRowLanes, Q4_1LaneRows, 2>(
      t, work, t.n / kQK, 1,
      [&](const char* const*, int64_t r0, int64_t i, Q4_1LaneRows* out) { *out = packed_rows(packed_block(t, r0, i, block_bytes), r0, true); },
      [&](auto cols, const Q4_1LaneRows* rows, int64_t r0, int64_t c0) {
        q4_1_lane_block<decltype(cols)::value>(t, rows, r0, c0);
      });
}

void q4_1_packed(const DotTile& t) {
  unsigned_lanes_packed<kPackRows / kRowLanes>(
      t, [&](const char* group, int64_t r0, bool burst) { return q4_1_packed_lane_rows<false>(t, group, r0, burst); }, sizeof(BlockQ4_1));
}

// Q5_1 packed (repack.h: the scales, the mins, then dword 0, qh, and dwords 1..4, the nibbles,
// of every row): Q4_1's lane rows with each level's fifth bit.
void q5_1_packed(const DotTile& t) {
  unsigned_lanes_packed<1>(
      t, [&](const char* group, int64_t r0, bool burst) { return q4_1_packed_lane_rows<true>(t, group, r0, burst); }, sizeof(BlockQ5_1));
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

// One column on the packed layout (a decode product): every row group of the tile in one loop,
// nothing recomputed per group and no layout test per block. The activation block's levels are
// loaded once and spread dword by dword with permutes, not broadcast from memory eight times a
// block; the low and high nibbles run as two chains of four dots. With four fewer loads a block
// than the rows' general loop (q4_0_serial_block) and the scales read last, it streams a weight
// beyond the cache 8-13 % faster on two threads (docs/benchmarks.md). The levels are loaded here,
// not through q4_0_packed_block: taking a whole block's registers first measured slower. Where a
// register holds half a packed group (the 256-bit forms), both halves run in one pass: the
// spread levels and the stream's requests serve the whole group once.
inline void q4_0_packed_column(const DotTile& t, const Q4_0Act* act) {
  constexpr int kGroups = kPackRows / kRowLanes;  // registers a packed row group fills
  struct Acc {
    VR v[kGroups];
  };
  const BlockQ8_0* a = reinterpret_cast<const BlockQ8_0*>(t.a);
  column_passes<Acc>(
      t, kPackRows, t.n / kQK, sizeof(BlockQ4_0),
      [&](int64_t, int64_t i, const char* blk, Acc& acc) __attribute__((always_inline)) {
        prefetch_stream(blk, kPackRows * sizeof(BlockQ4_0), t.requests);
        const VI levels = vi_dwords32(a[i].qs);
        VI lo[kGroups], hi[kGroups];
        for (int g = 0; g < kGroups; ++g) lo[g] = hi[g] = vi_set1(0);
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) {
          const VI low_levels = vi_dword(levels, j), high_levels = vi_dword(levels, 4 + j);
          for (int g = 0; g < kGroups; ++g) {
            const VI quad = vi_load(blk + kPackRows * 2 + (j * kPackRows + g * kRowLanes) * 4);
            lo[g] = vi_nibble_dot(lo[g], vi_low_nibbles(quad), low_levels);
            hi[g] = vi_nibble_dot(hi[g], vi_high_nibbles(quad), high_levels);
          }
        }
        const VI offset = vi_set1(act[i].offset);
        const VR da = vr_set1(act[i].d);
        for (int g = 0; g < kGroups; ++g) {
          const VI sum = vi_add(offset, vi_widen_nibble_dots(vi_add_nibble_dots(lo[g], hi[g])));
          const VR d = vr_load_f16(reinterpret_cast<const uint16_t*>(blk) + g * kRowLanes);
          acc.v[g] = vr_fma(vr_from_i32(sum), vr_mul(d, da), acc.v[g]);
        }
      },
      [&](int64_t r0, const Acc& acc) __attribute__((always_inline)) {
        for (int g = 0; g < kGroups; ++g) store_row_lanes(t, r0 + g * kRowLanes, 0, acc.v[g]);
      });
}

// Work memory: the activation table, then with several columns the prepared row blocks.
size_t q4_0_serial_work_size(const DotTile& t) {
  return act_table_bytes<Q4_0Act>(t) + (t.cols == 1 ? 0 : prepared_bytes<Q4_0Rows>(t.n / kQK, 1));
}

void q4_0_serial(const DotTile& t) {
  const int64_t nb = t.n / kQK;
  TileWork work(t);
  const Q4_0Act* acts = act_table<Q4_0Act, BlockQ8_0>(t, work, [](const BlockQ8_0& a) {
    const __m256i ones = _mm256_set1_epi8(1);
    const int32_t sum = hsum_i32(_mm256_madd_epi16(_mm256_maddubs_epi16(ones, load256(a.qs)), _mm256_set1_epi16(1)));
    return Q4_0Act{-8 * sum, half(a.d)};
  });
  if (t.cols == 1) {
    if (t.packed) return q4_0_packed_column(t, acts);
    for (int64_t r0 = 0; r0 < t.rows; r0 += kRowLanes) q4_0_serial_block<1, false>(t, nullptr, acts, r0, 0);
    return;
  }
  // Several columns: each row block transposed once, then reused by every column.
  for_prepared_row_blocks<kRowLanes, Q4_0Rows>(
      t, work, nb, 1, [&](const char* const* wp, int64_t r0, int64_t i, Q4_0Rows* out) { q4_0_rows(t, wp, r0, i, *out); },
      [&](auto cols, const Q4_0Rows* rows, int64_t r0, int64_t c0) {
        q4_0_serial_block<decltype(cols)::value, true>(t, rows, acts, r0, c0);
      });
}
