// Part of the SIMD kernel bodies (simd_kernels_impl.h lists the parts, in order): K-quant dots.

// ---------------------------------------------------------------------------------------------
// K-quants. Q2_K, Q3_K and (in the GEMM without VNNI) Q5_K super-block rows are first unpacked
// to bytes (unsigned levels, except Q3_K) and int16 scale vectors; the others are read straight
// from the blocks.

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

// Unpacks super-blocks of rows r0 .. r0 + RB - 1 (clamped to the tile) once for all columns into
// rows, a piece of the tile's work memory (k_rows_bytes): rows[b * RB + r] is super-block b of row r.
template <int RB>
size_t k_rows_bytes(const DotTile& t) { return piece_bytes<KRow>(t.n / kQK_K * RB); }

template <int RB>
const KRow* unpack_k_rows(DType type, const DotTile& t, int64_t r0, KRow* rows) {
  const int64_t nb = t.n / kQK_K;
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
  KRow* unpacked = TileWork(t).take<KRow>(t.n / kQK_K * 8);
  for (int64_t r0 = 0; r0 < t.rows; r0 += 8) {
    const KRow* rows = unpack_k_rows<8>(type, t, r0, unpacked);
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

// Sub-block k's 6-bit scale and min (k < 8) of the rows in lanes, from their header h: per row
// (lane) d | dmin, scales[0..3], scales[4..7], scales[8..11].
inline VI q4_K_scale(const VI (&h)[4], int k) {
  return k < 4 ? vi_bits(h[1], 8 * k, 63) : vi_or_shifted(vi_bits(h[3], 8 * (k - 4), 0x0F), vi_bits(h[1], 8 * (k - 4) + 6, 3), 4);
}
inline VI q4_K_min(const VI (&h)[4], int k) {
  return k < 4 ? vi_bits(h[2], 8 * k, 63) : vi_or_shifted(vi_bits(h[3], 8 * (k - 4) + 4, 0x0F), vi_bits(h[2], 8 * (k - 4) + 6, 3), 4);
}

inline Q4KRows q4_K_header(const VI (&h)[4]) {
  Q4KRows w;
  w.d = vr_half_low(h[0]);
  w.dmin = vr_half_high(h[0]);
  for (int k = 0; k < 8; ++k) {
    w.scale[k] = q4_K_scale(h, k);
    w.min[k] = q4_K_min(h, k);
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

// Super-block i's header (d | dmin and the 12 scale bytes, alike in Q4_K and Q5_K blocks of
// block_bytes) of the kRowLanes rows from tile row r0 (the file's rows at wp), in either layout:
// the packed one loads it, the file's is transposed.
[[gnu::always_inline]] inline Q4KRows k_header_at(const DotTile& t, const char* const* wp, int64_t r0, int64_t i, size_t block_bytes,
                                                 bool packed) {
  VI header[4];
  if (packed) {
    const char* blk = packed_block(t, r0, i, block_bytes) + (r0 % kPackRows) * 4;
    for (int c = 0; c < 4; ++c) header[c] = vi_load(blk + c * kPackRows * 4);
  } else {
    const uint8_t* blocks[kRowLanes];
    for (int r = 0; r < kRowLanes; ++r) blocks[r] = reinterpret_cast<const uint8_t*>(wp[r]) + i * block_bytes;
    load_row_quads(blocks, header);
  }
  return q4_K_header(header);
}

// Chunk m of super-block i (qs bytes 32m + 4j .. + 3 of each row, j = 0..7) in either layout.
[[gnu::always_inline]] inline void q4_K_chunk_at(const DotTile& t, const char* const* wp, int64_t r0, int64_t i, int m, VI (&quads)[8],
                                                 bool packed) {
  if (packed) {  // dword 4 + 8m + j of the block
    const char* blk = packed_block(t, r0, i, sizeof(engine::quant::BlockQ4_K)) + (r0 % kPackRows) * 4;
    for (int j = 0; j < 8; ++j) quads[j] = vi_load(blk + (4 + 8 * m + j) * kPackRows * 4);
    return;
  }
  for (int half = 0; half < 2; ++half) {
    const uint8_t* q[kRowLanes];
    for (int r = 0; r < kRowLanes; ++r) q[r] = reinterpret_cast<const uint8_t*>(wp[r]) + i * sizeof(engine::quant::BlockQ4_K) + 16 + 32 * m + 16 * half;
    VI four[4];
    load_row_quads(q, four);
    for (int j = 0; j < 4; ++j) quads[4 * half + j] = four[j];
  }
}

// Super-block i of the kRowLanes rows from tile row r0, whole, for reuse by several columns.
inline void q4_K_rows(const DotTile& t, const char* const* wp, int64_t r0, int64_t i, Q4KSuper& w) {
  w.h = k_header_at(t, wp, r0, i, sizeof(engine::quant::BlockQ4_K), t.packed);
  for (int m = 0; m < 4; ++m) {
    VI quads[8];
    q4_K_chunk_at(t, wp, r0, i, m, quads, t.packed);
    for (int j = 0; j < 8; ++j) {
      w.lo[m][j] = vi_low_nibbles(quads[j]);
      w.hi[m][j] = vi_high_nibbles(quads[j]);
    }
  }
}

// Chunk m's min sum in float, b its two sub-blocks' level sums (exact: below 2^24).
inline VR q4_K_chunk_mins(const Q4KRows& h, const float* b, int m) {
  return vr_fma(h.min_f[2 * m + 1], vr_set1(b[1]), vr_mul(h.min_f[2 * m], vr_set1(b[0])));
}

// Columns c0 .. c0 + CB - 1 against rows r0 .. r0 + kRowLanes - 1: their super-blocks prepared
// in `prepared` (Prepared), or loaded from the packed layout (Packed: the GEMM's; one column in
// the GEMV order takes q4_K_packed_column) or transposed here as they are used.
// bsum_f (GEMM): per column, super-block and 32-element sub-block the sum of its levels, as a float.
template <int CB, bool Prepared, bool Gemm, bool Packed = false>
void q4_K_serial_block(const DotTile& t, const Q4KSuper* prepared, const float* bsum_f, int64_t r0, int64_t c0) {
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
  const bool mins_apart = Gemm && Prepared;
  for (int64_t i = 0; i < nb; ++i) {
    if (!Prepared && !Packed) prefetch_rows<kRowLanes>(t, r0 + kRowLanes, i, nb);
    // Unprepared, each chunk's levels are loaded where they are used: the whole super-block's
    // 64 nibble registers would not fit in the register file, and spill.
    const Q4KRows h = Prepared ? prepared[i].h : k_header_at(t, wp, r0, i, sizeof(engine::quant::BlockQ4_K), Packed);
    const BlockQ8_K* a[CB];
    VR dd[CB];
    VI sum[CB], mins[CB];
    for (int c = 0; c < CB; ++c) {
      a[c] = reinterpret_cast<const BlockQ8_K*>(ap[c]) + i;
      dd[c] = vr_mul(h.d, vr_set1(a[c]->d));
      sum[c] = mins[c] = vi_set1(0);
    }
    for (int m = 0; m < 4; ++m) {  // sub-blocks 2m (low nibbles) and 2m + 1 (high nibbles)
      VI quads[8];
      constexpr size_t kQuarter = kPackRows * sizeof(engine::quant::BlockQ4_K) / 4;
      // The packed stream is requested a quarter of the group's block per chunk (a burst of a
      // whole block's prefetches stalls the loads).
      if (!Prepared && Packed) prefetch_stream(packed_block(t, r0, i, sizeof(engine::quant::BlockQ4_K)) + m * kQuarter, kQuarter, t.requests);
      if (!Prepared) q4_K_chunk_at(t, wp, r0, i, m, quads, Packed);
      const auto lo = [&](int j) { return Prepared ? prepared[i].lo[m][j] : vi_low_nibbles(quads[j]); };
      // Loaded here, with dot-product instructions (no int16 pair sums to saturate), the high
      // nibbles are taken sixteenfold (one operation each, not two) and their sums divided back
      // exactly: the shifts would share the one port on which the dot products run.
      constexpr bool kHighX16 = !Prepared && ENGINE_SIMD_VNNI;
      const auto hi = [&](int j) {
        return Prepared ? prepared[i].hi[m][j] : kHighX16 ? vi_high_nibbles_x16(quads[j]) : vi_high_nibbles(quads[j]);
      };
      const auto hi_sum = [&](VI a, VI b) { return kHighX16 ? vi_shift_right(vi_add(a, b), 4) : vi_add(a, b); };
      if constexpr (Gemm) {
        // Each level register feeds every column before the next is loaded: the columns' dot
        // chains interleave instead of running one column after another.
        VI s_lo[CB][2], s_hi[CB][2];
        for (int c = 0; c < CB; ++c) s_lo[c][0] = s_lo[c][1] = s_hi[c][0] = s_hi[c][1] = vi_set1(0);
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j)
#pragma GCC unroll 8
          for (int c = 0; c < CB; ++c) {
            const int8_t* aq = a[c]->qs + 64 * m;
            s_lo[c][j & 1] = vi_dot_u8(s_lo[c][j & 1], lo(j), aq + 4 * j);
            s_hi[c][j & 1] = vi_dot_u8(s_hi[c][j & 1], hi(j), aq + 32 + 4 * j);
          }
#pragma GCC unroll 8
        for (int c = 0; c < CB; ++c) {
          // The chunk's scaled sum in float: products and sum stay below 2^24, so it is exactly
          // the integer the GEMV order forms, without 32-bit integer multiplies.
          const VR scaled = vr_fma(vr_from_i32(hi_sum(s_hi[c][0], s_hi[c][1])), h.scale_f[2 * m + 1],
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
          s_lo[j & 1] = vi_dot_u8(s_lo[j & 1], lo(j), aq + 4 * j);
          s_hi[j & 1] = vi_dot_u8(s_hi[j & 1], hi(j), aq + 32 + 4 * j);
        }
        const int16_t* bs = a[c]->bsums + 4 * m;
        sum[c] = vi_add(sum[c], vi_add(vi_mul(vi_add(s_lo[0], s_lo[1]), h.scale[2 * m]),
                                       vi_mul(hi_sum(s_hi[0], s_hi[1]), h.scale[2 * m + 1])));
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

// One column on the packed layout (a decode product), in q4_K_serial_block's GEMV order: every
// row group of the tile in one loop. Each chunk's scales and mins are cut from the header where
// the chunk uses them (made all at once they spill to the stack), and with VNNI the activation's
// level dwords are spread from two registers by permutes instead of sixteen broadcast loads
// (without it, on an AVX2-only Zen 3, the shuffle ports are the busier and the loads win). The
// stream is requested a line per dword step (two threads read 4 % more than with a chunk's nine
// lines at once). Q4_K_M decode on two threads: 1-4 % more tokens a second than with
// q4_K_serial_block (docs/benchmarks.md).
template <bool Native>
void q4_K_packed_column(const DotTile& t) {
  constexpr size_t kBlock = sizeof(engine::quant::BlockQ4_K), kQuarter = kPackRows * kBlock / 4;
  constexpr int kGroups = kPackRows / kRowLanes;  // registers a packed row group fills
  const BlockQ8_K* a = reinterpret_cast<const BlockQ8_K*>(t.a);
  struct Acc {
    VR sums[kGroups], mins[kGroups];
  };
  column_passes<Acc>(
      t, kPackRows, t.n / kQK_K, kBlock,
      [&](int64_t, int64_t i, const char* group, Acc& acc) __attribute__((always_inline)) {
        const auto header = [&](int g, int c) { return vi_load(group + (c * kPackRows + g * kRowLanes) * 4); };
        VI sum[kGroups], mins[kGroups];
        for (int g = 0; g < kGroups; ++g) sum[g] = mins[g] = vi_set1(0);
#pragma GCC unroll 4
        for (int m = 0; m < 4; ++m) {  // sub-blocks 2m (low nibbles) and 2m + 1 (high nibbles)
          const char* quarter = group + m * kQuarter;
          prefetch_stream(quarter + 8 * 64, kQuarter - 8 * 64, t.requests);
          const int8_t* aq = a[i].qs + 64 * m;
          const VI levels_lo = vi_dwords32(aq), levels_hi = vi_dwords32(aq + 32);
          VI s_lo[kGroups][2], s_hi[kGroups][2];
          for (int g = 0; g < kGroups; ++g) s_lo[g][0] = s_lo[g][1] = s_hi[g][0] = s_hi[g][1] = vi_set1(0);
#pragma GCC unroll 8
          for (int j = 0; j < 8; ++j) {
            const VI low_levels = Native ? vi_dword(levels_lo, j) : vi_dword_at(aq + 4 * j);
            const VI high_levels = Native ? vi_dword(levels_hi, j) : vi_dword_at(aq + 32 + 4 * j);
            for (int g = 0; g < kGroups; ++g) {
              const VI quad = vi_load(group + ((4 + 8 * m + j) * kPackRows + g * kRowLanes) * 4);
              s_lo[g][j & 1] = vi_nibble_dot(s_lo[g][j & 1], vi_low_nibbles(quad), low_levels);
              s_hi[g][j & 1] = Native ? vi_dot_u8v(s_hi[g][j & 1], vi_high_nibbles_x16(quad), high_levels)
                                      : vi_nibble_dot(s_hi[g][j & 1], vi_high_nibbles(quad), high_levels);
            }
            prefetch_stream(quarter + 64 * j, 64, t.requests);  // after the line's products: 2-6 % faster than before them
          }
          const int16_t* bs = a[i].bsums + 4 * m;
          for (int g = 0; g < kGroups; ++g) {
            const VI h[4] = {vi_set1(0), header(g, 1), header(g, 2), header(g, 3)};  // d | dmin (h[0]) is not read here
            const VI lo = vi_scaled_nibble_dots(vi_add_nibble_dots(s_lo[g][0], s_lo[g][1]), q4_K_scale(h, 2 * m));
            const VI hi = Native ? vi_mul(vi_shift_right(vi_add(s_hi[g][0], s_hi[g][1]), 4), q4_K_scale(h, 2 * m + 1))
                                 : vi_scaled_nibble_dots(vi_add_nibble_dots(s_hi[g][0], s_hi[g][1]), q4_K_scale(h, 2 * m + 1));
            sum[g] = vi_add(sum[g], vi_add(lo, hi));
            mins[g] = vi_add(mins[g], vi_add(vi_mul_u16(q4_K_min(h, 2 * m), static_cast<int16_t>(bs[0] + bs[1])),
                                             vi_mul_u16(q4_K_min(h, 2 * m + 1), static_cast<int16_t>(bs[2] + bs[3]))));
          }
        }
        for (int g = 0; g < kGroups; ++g) {
          const VI d = header(g, 0);
          acc.sums[g] = vr_fma(vr_from_i32(sum[g]), vr_mul(vr_half_low(d), vr_set1(a[i].d)), acc.sums[g]);
          acc.mins[g] = vr_fma(vr_from_i32(mins[g]), vr_mul(vr_half_high(d), vr_set1(a[i].d)), acc.mins[g]);
        }
      },
      [&](int64_t r0, const Acc& acc) __attribute__((always_inline)) {
        for (int g = 0; g < kGroups; ++g) {
          alignas(64) float v[kRowLanes], vm[kRowLanes];
          vr_store(v, acc.sums[g]);
          vr_store(vm, acc.mins[g]);
          for (int r = 0; r < kRowLanes; ++r) store_out(t, r0 + g * kRowLanes + r, 0, v[r] - vm[r]);
        }
      });
}

// Work memory: the GEMM's level sums, then with several columns the prepared super-blocks.
size_t q4_K_serial_work_size(bool gemm, const DotTile& t) {
  const int64_t nb = t.n / kQK_K;
  return (gemm ? piece_bytes<float>(t.cols * nb * 8) : 0) + (t.cols == 1 ? 0 : prepared_bytes<Q4KSuper>(nb, 1));
}

void q4_K_serial(bool gemm, const DotTile& t) {
  const int64_t nb = t.n / kQK_K;
  if (t.cols == 1 && t.packed && !gemm) return q4_K_packed_column<ENGINE_SIMD_VNNI>(t);
  TileWork work(t);
  float* bsum_f = nullptr;
  if (gemm) {
    bsum_f = work.take<float>(t.cols * nb * 8);
    for (int64_t c = 0; c < t.cols; ++c)
      for (int64_t i = 0; i < nb; ++i) {
        const int16_t* bs = act_block<BlockQ8_K>(t, c, i).bsums;
        for (int k = 0; k < 8; ++k) bsum_f[(c * nb + i) * 8 + k] = static_cast<float>(bs[2 * k] + bs[2 * k + 1]);
      }
  }
  if (t.cols == 1) {
    // The layout a compile-time choice, so the loaded registers stay registers.
    const auto block = t.packed ? q4_K_serial_block<1, false, true, true>
                                : (gemm ? q4_K_serial_block<1, false, true> : q4_K_serial_block<1, false, false>);
    for (int64_t r0 = 0; r0 < t.rows; r0 += kRowLanes) block(t, nullptr, bsum_f, r0, 0);
    return;
  }
  // Several columns: each row block's super-blocks transposed once, then reused by every column.
  for_prepared_row_blocks<kRowLanes, Q4KSuper>(
      t, work, t.n / kQK_K, 1, [&](const char* const* wp, int64_t r0, int64_t i, Q4KSuper* out) { q4_K_rows(t, wp, r0, i, *out); },
      [&](auto cols, const Q4KSuper* rows, int64_t r0, int64_t c0) {
        constexpr int CB = decltype(cols)::value;
        (gemm ? q4_K_serial_block<CB, true, true> : q4_K_serial_block<CB, true, false>)(t, rows, bsum_f, r0, c0);
      });
}

// The row pairs of a packed K-quant block (repack.h): the pair holding tile row r, after the
// group's `lead` bytes of row-per-lane dwords; and r's place in it, where a register holds one row.
inline const char* packed_pair(const DotTile& t, int64_t r, int64_t i, size_t block_bytes, size_t lead = 0) {
  return whole_packed_block(t, r, i, block_bytes) + lead + r % kPackRows / 2 * 2 * (block_bytes - lead / kPackRows);
}
inline int64_t row_in_pair(int64_t r) { return kLaneRows == 1 ? r % 2 : 0; }

// Q6_K eight-lane order (k_lanes_block's, read straight from the blocks): per output eight
// float lanes += (da * dw) * exact lane sums per super-block, the offset 32 taken back per lane.
// One register holds kLaneRows rows, eight lanes each. (Q5_K's GEMM fills the same registers.)
struct KLaneRows {
  VI q[8];      // unsigned levels 0..63 (Q5_K: 0..31) of the 32-element chunks
  VI scale[8];  // per chunk: int16 scales of its two 16-element groups
  VI offset;    // int16 scales of all 16 groups (for Q6_K's offset's lane sums)
  VR d;         // each row's scale on its lanes
};

// Each row's 16 group scales as int16, split in its halves: both 128-bit lanes of halves[n] hold
// scales 8n .. 8n + 7 (Q3_K and Q6_K).
struct GroupScaleHalves {
  VI halves[2];
  explicit GroupScaleHalves(VI scales) : halves{vi_row_half<0>(scales), vi_row_half<1>(scales)} {}
  // Chunk k's (32 elements) scales of its two 16-element groups: lanes 0..3 group 2k, 4..7 2k + 1.
  VI chunk(int k) const {
    const char lo = static_cast<char>(4 * (k % 4)), hi = static_cast<char>(4 * (k % 4) + 2);
    const __m256i pick = _mm256_setr_epi8(lo, lo + 1, lo, lo + 1, lo, lo + 1, lo, lo + 1, lo, lo + 1, lo, lo + 1, lo, lo + 1, lo, lo + 1, hi,
                                          hi + 1, hi, hi + 1, hi, hi + 1, hi, hi + 1, hi, hi + 1, hi, hi + 1, hi, hi + 1, hi, hi + 1);
    return vi_pick_bytes(halves[k / 4], pick);
  }
};

// Every chunk's scales at once, for rows prepared for several columns.
inline void sixteen_group_scales(VI scales, VI (&scale)[8]) {
  const GroupScaleHalves halves(scales);
  for (int k = 0; k < 8; ++k) scale[k] = halves.chunk(k);
}

// A register's rows' Q6_K fields, as loaded from either layout: ql pieces l0[n], l1[n] (bytes
// 64n.., 64n + 32..), qh pieces h[n], the 16 group scales widened to int16, the scales d.
struct Q6KFields {
  VI l0[2], l1[2], h[2];
  VI scales;
  VR d;
};

// Chunk 4n + j's unsigned levels: the low (j < 2) or high nibble of l0 / l1 (j even / odd), with
// bits 2j, 2j + 1 of h as bits 4, 5 (each moved by one shift at most).
inline VI q6_K_levels(const Q6KFields& f, int n, int j) {
  const VI l = j % 2 ? f.l1[n] : f.l0[n];
  const VI high = vi_move_bits(f.h[n], 2 * j, 4, 2);
  return j < 2 ? vi_low_nibble_or(l, high) : vi_high_nibble_or(l, high);
}

// The register's rows whole, for reuse by several columns.
inline KLaneRows q6_K_lane_rows(const Q6KFields& f) {
  KLaneRows w;
  for (int k = 0; k < 8; ++k) w.q[k] = q6_K_levels(f, k / 4, k % 4);
  w.offset = f.scales;
  sixteen_group_scales(f.scales, w.scale);
  w.d = f.d;
  return w;
}

// Super-blocks b[0 .. kLaneRows - 1] in the file layout, one per row of the register.
inline Q6KFields load_q6_K(const engine::quant::BlockQ6_K* const* b) {
  Q6KFields f;
  __m256i part[kLaneRows];
  const auto rows = [&](auto field) {
    for (int p = 0; p < kLaneRows; ++p) part[p] = field(*b[p]);
    return vi_join(part);
  };
  for (int n = 0; n < 2; ++n) {
    f.l0[n] = rows([&](const auto& x) { return load256(x.ql + 64 * n); });
    f.l1[n] = rows([&](const auto& x) { return load256(x.ql + 64 * n + 32); });
    f.h[n] = rows([&](const auto& x) { return load256(x.qh + 32 * n); });
  }
  f.scales = rows([](const auto& x) { return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x.scales))); });
  float d[kLaneRows];
  for (int p = 0; p < kLaneRows; ++p) d[p] = half(b[p]->d);
  f.d = vr_set_groups(d);
  return f;
}

// Super-block i of the register's rows from tile row r on, in the packed layout (repack.h): the
// fields of a row pair load as one register (AVX-512) or one row's half of it (AVX2).
inline Q6KFields load_q6_K_packed(const DotTile& t, int64_t r, int64_t i) {
  const char* pair = packed_pair(t, r, i, sizeof(engine::quant::BlockQ6_K));
  const int64_t p = row_in_pair(r);
  Q6KFields f;
  for (int n = 0; n < 2; ++n) {
    f.l0[n] = vi_load(pair + 64 * (2 * n) + 32 * p);
    f.l1[n] = vi_load(pair + 64 * (2 * n + 1) + 32 * p);
    f.h[n] = vi_load(pair + 256 + 64 * n + 32 * p);
  }
  f.scales = vi_widen_i8(pair + 384 + 16 * p);
  f.d = vr_rows_f16(reinterpret_cast<const uint16_t*>(pair + 416) + p);
  return f;
}

// Super-block i of the register of rows from tile row r (the file's rows at wp), either layout.
[[gnu::always_inline]] inline Q6KFields q6_K_fields(const DotTile& t, const char* const* wp, int64_t r, int64_t i) {
  if (t.packed) return load_q6_K_packed(t, r, i);
  const engine::quant::BlockQ6_K* b[kLaneRows];
  for (int p = 0; p < kLaneRows; ++p) b[p] = reinterpret_cast<const engine::quant::BlockQ6_K*>(wp[p]) + i;
  return load_q6_K(b);
}

// A register's lane sums against one column (aq: its chunks, repeated per row; bsums: its group
// level sums), the offset 32 taken back: chunk k's levels level(k) and scales scale(k), the 16
// group scales `offset`; request(k) is called beside chunk k's products.
template <typename Level, typename Scale, typename Request>
inline VI q6_K_lane_sums(Level level, Scale scale, VI offset, const VI (&aq)[8], VI bsums, Request request) {
  VI lanes = vi_set1(0);
  // Unrolled by force: AVX2's build left it a loop, each chunk's shuffle pattern and shift counts
  // built at run time (Q6_K from L2, one thread: 7.7 GB/s, against 27.6 unrolled).
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k) {
    request(k);
    lanes = vi_dot16(lanes, vi_maddubs(level(k), aq[k]), scale(k));
  }
  return vi_sub(lanes, vi_shift_left(vi_madd16(offset, bsums), 5));
}

// The same sums with dot-product instructions, from the fields: a chunk's lanes (four levels each,
// at most 4 * 63 * 128 in magnitude) are exact in int16, so two chunks' lanes pair up in one
// register and take their scales in one int16 dot product. Per chunk pair that is three dot
// products and a byte shuffle, against two byte multiply-adds, two multiply-adds and two adds;
// the levels are built with a shift fewer per chunk than the lane form's.
template <typename Request>
inline VI q6_K_pair_sums(const Q6KFields& f, const GroupScaleHalves& scales, const VI (&aq)[8], VI bsums, Request request) {
  // Chunks 4n + 2m and 4n + 2m + 1 take scales 8n + 4m and 8n + 4m + 2 in the low half (lanes
  // 0..3), 8n + 4m + 1 and 8n + 4m + 3 in the high half.
  VI lanes = vi_set1(0);
  for (int n = 0; n < 2; ++n)
    for (int m = 0; m < 2; ++m) {
      const auto words = [](int lo, int hi) {
        return _mm_setr_epi8(2 * lo, 2 * lo + 1, 2 * hi, 2 * hi + 1, 2 * lo, 2 * lo + 1, 2 * hi, 2 * hi + 1, 2 * lo, 2 * lo + 1, 2 * hi,
                             2 * hi + 1, 2 * lo, 2 * lo + 1, 2 * hi, 2 * hi + 1);
      };
      const __m256i pick = _mm256_set_m128i(words(4 * m + 1, 4 * m + 3), words(4 * m, 4 * m + 2));
      const int k = 4 * n + 2 * m;
      request(k);
      request(k + 1);
      const VI two = vi_pair_low16(vi_dot_u8v(vi_set1(0), q6_K_levels(f, n, 2 * m), aq[k]),
                                   vi_dot_u8v(vi_set1(0), q6_K_levels(f, n, 2 * m + 1), aq[k + 1]));
      lanes = vi_dot16(lanes, two, vi_pick_bytes(scales.halves[n], pick));
    }
  return vi_sub(lanes, vi_shift_left(vi_madd16(f.scales, bsums), 5));
}

// Rows r0 .. r0 + RG * kLaneRows - 1 times columns c0 .. c0 + CB - 1. prepared[i * RG + g]:
// super-block i of register g's rows; nullptr: each register's rows loaded right before they
// are used (one column: all RG at once would spill most of them), from the packed layout where
// Packed (a compile-time layout keeps the loaded fields in registers).
template <int RG, int CB, bool Packed = false>
void q6_K_lanes_block(const DotTile& t, const KLaneRows* prepared, int64_t r0, int64_t c0) {
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
    if (!prepared && !Packed) prefetch_rows<RB>(t, r0 + RB, i, nb);
    for (int c = 0; c < CB; ++c) {
      const BlockQ8_K& a = reinterpret_cast<const BlockQ8_K*>(ap[c])[i];
      const VI bsums = vi_repeat(load256(a.bsums));
      VI aq[8];
      for (int k = 0; k < 8; ++k) aq[k] = vi_repeat(load256(a.qs + 32 * k));
      const VR da = vr_set1(a.d);
      for (int g = 0; g < RG; ++g) {
        // The packed stream is requested a register's share at a time (a burst of a whole block's
        // prefetches stalls the loads), a line per chunk beside the chunk's products.
        // As many lines as the share spans at most, from the first that starts in it: the last may
        // be the next share's first, a request twice rather than a test per chunk.
        const char* share = Packed ? whole_packed_block(t, r0, i, sizeof(BlockQ6_K)) + g * kLaneRows * sizeof(BlockQ6_K) : nullptr;
        const char* first_line = Packed ? line_at_or_after(share) : nullptr;
        constexpr int kShareLines = static_cast<int>((kLaneRows * sizeof(BlockQ6_K) + 63) / 64);
        const auto request = [&](int k) {
          if (Packed && k < kShareLines) prefetch_stream(first_line + 64 * k, 64, t.requests);
        };
        VI lanes;
        VR d;
        if (prepared) {
          const KLaneRows& w = prepared[i * RG + g];
          lanes = q6_K_lane_sums([&](int k) { return w.q[k]; }, [&](int k) { return w.scale[k]; }, w.offset, aq, bsums, request);
          d = w.d;
        } else {
          // Each chunk's levels and scales built where they are used: built first, they would
          // not fit in AVX2's sixteen registers (and spill).
          const int64_t r = r0 + g * kLaneRows;
          const Q6KFields f = Packed ? load_q6_K_packed(t, r, i) : q6_K_fields(t, wp + g * kLaneRows, r, i);
          const GroupScaleHalves scales(f.scales);
          lanes = ENGINE_SIMD_VNNI ? q6_K_pair_sums(f, scales, aq, bsums, request)
                                   : q6_K_lane_sums([&](int k) { return q6_K_levels(f, k / 4, k % 4); }, [&](int k) { return scales.chunk(k); },
                                                    f.scales, aq, bsums, request);
          d = f.d;
        }
        acc[g][c] = vr_fma(vr_mul(da, d), vr_from_i32(lanes), acc[g][c]);
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

// Q6_K and Q5_K with several columns and int16 dot products (VNNI): a register's levels are first
// multiplied by their scales into int16 pairs (at most 8064 in magnitude), so each column's
// chunk costs two vpdpwssd per register instead of three byte operations; the lane sums are the
// same integers.
struct KWide {
  VI w[8][2];  // chunk k, half h: lane L holds elements 4L + 2h and 4L + 2h + 1 of the chunk
  VI offset;   // as KLaneRows
  VR d;
};

constexpr int kKWideRegs = 4;  // four registers of rows share each activation load

// A Q5_K row block's super-block, widened: its registers, and for its min terms the rows' mins
// (a row per lane; sub-blocks 2m and 2m + 1 as an int16 pair) and dmin.
struct Q5KWide {
  KWide reg[kKWideRegs];
  VI min_pairs[4];
  VR dmin;
};

// The registers of super-block i: Q6_K's prepared blocks are RG KWide each.
inline const KWide* wide_regs(const KWide* prepared, int64_t i, int rg) { return prepared + i * rg; }
inline const KWide* wide_regs(const Q5KWide* prepared, int64_t i, int) { return prepared[i].reg; }

inline KWide k_widen(const KLaneRows& rows) {
  const __m256i pick[2] = {
      _mm256_setr_epi8(0, -1, 1, -1, 4, -1, 5, -1, 8, -1, 9, -1, 12, -1, 13, -1, 0, -1, 1, -1, 4, -1, 5, -1, 8, -1, 9, -1, 12, -1, 13, -1),
      _mm256_setr_epi8(2, -1, 3, -1, 6, -1, 7, -1, 10, -1, 11, -1, 14, -1, 15, -1, 2, -1, 3, -1, 6, -1, 7, -1, 10, -1, 11, -1, 14, -1,
                       15, -1)};
  KWide wide;
  for (int k = 0; k < 8; ++k)
    for (int h = 0; h < 2; ++h) wide.w[k][h] = vi_mul16(vi_pick_bytes(rows.q[k], pick[h]), rows.scale[k]);
  wide.offset = rows.offset;
  wide.d = rows.d;
  return wide;
}

// Q5_K's mins of the rows in lanes (h: their headers), sub-blocks 2m and 2m + 1 as an int16 pair.
inline void q5_K_min_pairs(const Q4KRows& h, VI (&pairs)[4]) {
  for (int m = 0; m < 4; ++m) pairs[m] = vi_or_shifted(h.min[2 * m], h.min[2 * m + 1], 16);
}

// Q5_K's min term of one super-block and column for the rows in lanes: (-da * dmin) * the
// integer min sum, added to acc as k_lanes_block adds it.
inline VR q5_K_min_term(const VI (&min_pairs)[4], VR dmin, const BlockQ8_K& a, VR acc) {
  alignas(16) int32_t sub_pairs[4];  // sub-block level sums 2m and 2m + 1 as an int16 pair
  _mm_store_si128(reinterpret_cast<__m128i*>(sub_pairs), _mm_hadd_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a.bsums)),
                                                                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.bsums + 8))));
  VI min_sum = vi_set1(0);
  for (int m = 0; m < 4; ++m) min_sum = vi_dot16(min_sum, min_pairs[m], vi_set1(sub_pairs[m]));
  return vr_fma(vr_mul(vr_set1(-a.d), dmin), vr_from_i32(min_sum), acc);
}

// Q5_K's packed layout (repack.h): the group's headers, then its rows in pairs.
inline const char* q5_K_pair(const DotTile& t, int64_t r, int64_t i) {
  return packed_pair(t, r, i, sizeof(engine::quant::BlockQ5_K), kPackRows * 16);
}

// The 5-bit levels of super-block i's sub-blocks (bytes) for the kLaneRows rows from tile row r
// (the file's rows at wp), either layout.
[[gnu::always_inline]] inline void q5_K_levels(const DotTile& t, const char* const* wp, int64_t r, int64_t i, VI (&q)[8]) {
  using engine::quant::BlockQ5_K;
  VI high, x[4];
  if (t.packed) {
    const char* pair = q5_K_pair(t, r, i);
    const int64_t p = row_in_pair(r);
    high = vi_load(pair + 32 * p);
    for (int j = 0; j < 4; ++j) x[j] = vi_load(pair + 64 * (1 + j) + 32 * p);
  } else {
    const auto rows = [&](size_t offset) {
      __m256i parts[kLaneRows];
      for (int p = 0; p < kLaneRows; ++p) parts[p] = load256(wp[p] + i * sizeof(BlockQ5_K) + offset);
      return vi_join(parts);
    };
    high = rows(offsetof(BlockQ5_K, qh));
    for (int j = 0; j < 4; ++j) x[j] = rows(offsetof(BlockQ5_K, qs) + 32 * j);
  }
  for (int j = 0; j < 4; ++j) {  // sub-blocks 2j (low nibbles) and 2j + 1 (high nibbles)
    q[2 * j] = vi_low_nibble_or(x[j], vi_move_bits(high, 2 * j, 4));
    q[2 * j + 1] = vi_high_nibble_or(x[j], vi_move_bits(high, 2 * j + 1, 4));
  }
}

// Sub-block k's scale of the rows in lanes (h: their headers) in both int16 halves of the lane.
inline VI q5_K_scale16(const Q4KRows& h, int k) { return vi_or_shifted(h.scale[k], h.scale[k], 16); }

// pairs: per column, super-block, chunk k and half h, the activation pairs q8_pairs made. Q6_K
// takes its offset 32 back per lane; Q5_K adds each row's min terms (q5_K_min_term, formed over
// the rows' headers in a pass of their own) after the lanes' sum.
template <DType Type, int RG, int CB, typename Prepared>
void k_wide_block(const DotTile& t, const Prepared* prepared, const __m256i* pairs, int64_t r0, int64_t c0) {
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
      const VR da = vr_set1(a.d);
      const KWide* w = wide_regs(prepared, i, RG);
      VI lanes[RG][2];
      for (int g = 0; g < RG; ++g) {
        lanes[g][0] = lanes[g][1] = vi_set1(0);
        if constexpr (Type == DType::Q6_K) lanes[g][0] = vi_sub(vi_set1(0), vi_shift_left(vi_madd16(w[g].offset, vi_repeat(load256(a.bsums))), 5));
      }
      for (int k = 0; k < 8; ++k)
        for (int h = 0; h < 2; ++h) {  // one activation load serves every register of rows
          const VI xv = vi_repeat(load256(x + 2 * k + h));
          for (int g = 0; g < RG; ++g) lanes[g][h] = vi_dot16(lanes[g][h], xv, w[g].w[k][h]);
        }
      for (int g = 0; g < RG; ++g) acc[g][c] = vr_fma(vr_mul(da, w[g].d), vr_from_i32(vi_add(lanes[g][0], lanes[g][1])), acc[g][c]);
    }
  alignas(64) float min_terms[CB][kRowLanes] = {};
  if constexpr (Type == DType::Q5_K) {
    VR mins[CB];
    for (int c = 0; c < CB; ++c) mins[c] = vr_zero();
    for (int64_t i = 0; i < nb; ++i)
      for (int c = 0; c < CB; ++c)
        mins[c] = q5_K_min_term(prepared[i].min_pairs, prepared[i].dmin, reinterpret_cast<const BlockQ8_K*>(ap[c])[i], mins[c]);
    for (int c = 0; c < CB; ++c) vr_store(min_terms[c], mins[c]);
  }
  for (int g = 0; g < RG; ++g)
    for (int c = 0; c < CB; ++c) {
      alignas(64) float v[kRowLanes];
      vr_store(v, acc[g][c]);
      for (int p = 0; p < kLaneRows; ++p) {
        const int r = g * kLaneRows + p;
        store_out(t, r0 + r, c0 + c, hsum_lanes8(_mm256_loadu_ps(v + 8 * p)) + (Type == DType::Q5_K ? min_terms[c][r] : 0.0f));
      }
    }
}

// Per column, super-block, chunk k and half h, the activation pairs q8_pairs makes: a piece of
// the tile's work memory (k_act_pairs_bytes).
size_t k_act_pairs_bytes(const DotTile& t) { return piece_bytes<__m256i>(t.cols * (t.n / kQK_K) * 16); }

const __m256i* k_act_pairs(const DotTile& t, TileWork& work) {
  const int64_t nb = t.n / kQK_K;
  __m256i* pairs = work.take<__m256i>(t.cols * nb * 16);
  for (int64_t c = 0; c < t.cols; ++c)
    for (int64_t i = 0; i < nb; ++i) {
      const BlockQ8_K& a = act_block<BlockQ8_K>(t, c, i);
      for (int k = 0; k < 8; ++k) q8_pairs(a.qs + 32 * k, pairs + (c * nb + i) * 16 + 2 * k);
    }
  return pairs;
}

constexpr int kQ6KRegs = 2 / kLaneRows > 0 ? 2 / kLaneRows : 1;  // a row pair per block, as the file's rows stream best

// Work memory with several columns: the prepared super-blocks, after the activation pairs with
// int16 dot products.
size_t q6_K_lanes_work_size(const DotTile& t) {
  const int64_t nb = t.n / kQK_K;
  if (t.cols == 1) return 0;
  if (!ENGINE_SIMD_VNNI) return prepared_bytes<KLaneRows>(nb, kQ6KRegs);
  return k_act_pairs_bytes(t) + prepared_bytes<KWide>(nb, kKWideRegs);
}

void q6_K_lanes(const DotTile& t) {
  constexpr int RG = kQ6KRegs;
  if (t.packed && t.cols == 1) {  // a whole packed group per pass: one stream of weights
    constexpr int RGP = kPackRows / kLaneRows;
    for (int64_t r0 = 0; r0 < t.rows; r0 += kPackRows) q6_K_lanes_block<RGP, 1, true>(t, nullptr, r0, 0);
    return;
  }
  if (t.cols == 1) {
    for (int64_t r0 = 0; r0 < t.rows; r0 += RG * kLaneRows) q6_K_lanes_block<RG, 1>(t, nullptr, r0, 0);
    return;
  }
  const int64_t nb = t.n / kQK_K;
  TileWork work(t);
  if constexpr (!ENGINE_SIMD_VNNI) {  // without int16 dot products the byte operations are cheaper
    // Several columns: each row block's super-blocks loaded once, then reused by every column.
    for_prepared_row_blocks<RG * kLaneRows, KLaneRows>(
        t, work, nb, RG, [&](const char* const* wp, int64_t r0, int64_t i, KLaneRows* out) {
          for (int g = 0; g < RG; ++g) out[g] = q6_K_lane_rows(q6_K_fields(t, wp + g * kLaneRows, r0 + g * kLaneRows, i));
        },
        [&](auto cols, const KLaneRows* rows, int64_t r0, int64_t c0) { q6_K_lanes_block<RG, decltype(cols)::value>(t, rows, r0, c0); });
    return;
  }
  const __m256i* pairs = k_act_pairs(t, work);
  // Each row block's super-blocks loaded and widened once, then reused by every column.
  constexpr int RGW = kKWideRegs;
  for_prepared_row_blocks<RGW * kLaneRows, KWide>(
      t, work, nb, RGW,
      [&](const char* const* wp, int64_t r0, int64_t i, KWide* out) {
        for (int g = 0; g < RGW; ++g) out[g] = k_widen(q6_K_lane_rows(q6_K_fields(t, wp + g * kLaneRows, r0 + g * kLaneRows, i)));
      },
      [&](auto cols, const KWide* rows, int64_t r0, int64_t c0) { k_wide_block<DType::Q6_K, RGW, decltype(cols)::value>(t, rows, pairs, r0, c0); });
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
  KRow* unpacked = TileWork(t).take<KRow>(t.n / kQK_K * 2);
  for (int64_t r0 = 0; r0 < t.rows; r0 += 2) {
    const KRow* rows = unpack_k_rows<2>(type, t, r0, unpacked);
    int64_t c0 = 0;
    for (; c0 + 4 <= t.cols; c0 += 4) k_lanes_block<2, 4>(type, rows, t, r0, c0);
    for (; c0 < t.cols; ++c0) k_lanes_block<2, 1>(type, rows, t, r0, c0);
  }
}

// Q2_K from the packed layout (a row per 32-bit lane), in k_serial_block's order: per run of
// 16 / Runs groups and row the exact scaled sum and min sum, one FMA each (Runs 1: the GEMV's
// order, 2: the batch order's), for columns c0 .. c0 + CB - 1. With dot-product instructions
// (no int16 pair sums to saturate) the two-bit levels are masked in place, 4^j times their
// value, and each group's sum divided back exactly: one operation a dword.
template <int CB, int Runs>
void q2_K_packed_block(const DotTile& t, int64_t r0, int64_t c0) {
  constexpr size_t kBlock = sizeof(engine::quant::BlockQ2_K);  // scales 16, qs 64, d and dmin: 21 dwords
  constexpr size_t kQuarter = kPackRows * kBlock / 4;
  const int64_t nb = t.n / kQK_K;
  const char* ap[CB];
  block_ptrs(t.a, t.a_stride, c0, t.cols, ap);
  VR acc[CB], acc_min[CB];
  for (int c = 0; c < CB; ++c) acc[c] = acc_min[c] = vr_zero();
  for (int64_t i = 0; i < nb; ++i) {
    const char* blk = whole_packed_block(t, r0, i, kBlock) + (r0 % kPackRows) * 4;
    const auto dword = [&](int k) { return vi_load(blk + k * kPackRows * 4); };
    const BlockQ8_K* a[CB];
    for (int c = 0; c < CB; ++c) a[c] = reinterpret_cast<const BlockQ8_K*>(ap[c]) + i;
    const VI d_dmin = dword(20);
    for (int run = 0; run < Runs; ++run) {
      VI sum[CB], mins[CB];
      for (int c = 0; c < CB; ++c) sum[c] = mins[c] = vi_set1(0);
      for (int k = run * 4 / Runs; k < (run + 1) * 4 / Runs; ++k) {  // scale dword k: groups 4k .. 4k + 3
        prefetch_stream(whole_packed_block(t, r0, i, kBlock) + k * kQuarter, kQuarter, t.requests);
        const VI sc = dword(k);
        for (int b = 0; b < 4; ++b) {
          // Group g (elements 16g ..): qs bytes 32n + 16 (g % 2) .. + 15 at bits 2j, n = g / 8, j = g % 8 / 2.
          const int g = 4 * k + b, j = g % 8 / 2, first = 4 + 8 * (g / 8) + 4 * (g % 2);
          VI levels[4];
          for (int e = 0; e < 4; ++e) {
            const VI x = dword(first + e);
            levels[e] = ENGINE_SIMD_VNNI ? vi_bits(x, 0, 0x03030303 << (2 * j)) : vi_bits(x, 2 * j, 0x03030303);
          }
          const VI scale = vi_bits(sc, 8 * b, 0x0F), min = vi_bits(sc, 8 * b + 4, 0x0F);
          for (int c = 0; c < CB; ++c) {
            VI s = vi_set1(0);
            for (int e = 0; e < 4; ++e) s = vi_dot_u8(s, levels[e], a[c]->qs + 16 * g + 4 * e);
            if (ENGINE_SIMD_VNNI) s = vi_shift_right(s, 2 * j);
            sum[c] = vi_dot16(sum[c], s, scale);  // |s| < 2^15: its low half is s
            mins[c] = vi_add(mins[c], vi_mul_u16(min, a[c]->bsums[g]));
          }
        }
      }
      for (int c = 0; c < CB; ++c) {
        const VR da = vr_set1(a[c]->d);
        acc[c] = vr_fma(vr_from_i32(sum[c]), vr_mul(vr_half_low(d_dmin), da), acc[c]);
        acc_min[c] = vr_fma(vr_from_i32(mins[c]), vr_mul(vr_half_high(d_dmin), da), acc_min[c]);
      }
    }
  }
  for (int c = 0; c < CB; ++c) {
    alignas(64) float v[kRowLanes], vm[kRowLanes];
    vr_store(v, acc[c]);
    vr_store(vm, acc_min[c]);
    for (int r = 0; r < kRowLanes; ++r) store_out(t, r0 + r, c0 + c, v[r] - vm[r]);
  }
}

template <int Runs>
void q2_K_packed_runs(const DotTile& t) {
  for_blocks<kRowLanes>(
      t, [&](int64_t r0, int64_t c0) { q2_K_packed_block<4, Runs>(t, r0, c0); },
      [&](int64_t r0, int64_t c0) { q2_K_packed_block<1, Runs>(t, r0, c0); });
}

void q2_K_packed(bool batch, const DotTile& t) { batch ? q2_K_packed_runs<2>(t) : q2_K_packed_runs<1>(t); }

// Q3_K, one activation column, in k_lanes_block's order straight from the blocks. Each level is
// held as u = q + 4 (0..7: the two low bits and the high bit at bit 2), so byte products stay
// unsigned; each pair's 4 (a0 + a1), the same for every row, is taken back before the scales:
// the int16 pair sums, and so the lane sums, are the signed products' exactly.
struct Q3KRows {
  VI u[8];      // per 32-element chunk
  VI scale[8];  // as sixteen_group_scales
  VR d;
};

// Super-block i of the kLaneRows rows from tile row r (the file's rows at wp), either layout
// (repack.h: rows in pairs, their hmask and qs pieces alternating, then their scales and d).
[[gnu::always_inline]] inline void q3_K_rows(const DotTile& t, const char* const* wp, int64_t r, int64_t i, Q3KRows& w) {
  using engine::quant::BlockQ3_K;
  constexpr size_t kBlock = sizeof(BlockQ3_K);
  VI hmask, qs[2];
  __m256i raw;  // per row 16 bytes in its 128-bit lane, the first 12 its packed scales
  alignas(4) uint16_t d[2] = {};
  if (t.packed) {
    const char* pair = packed_pair(t, r, i, kBlock);
    const int64_t p = row_in_pair(r);
    hmask = vi_load(pair + 32 * p);
    for (int n = 0; n < 2; ++n) qs[n] = vi_load(pair + 64 * (1 + n) + 32 * p);
    const auto scales_at = [&](int64_t q) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(pair + 192 + 12 * q)); };  // within the pair
    raw = _mm256_set_m128i(scales_at(kLaneRows == 1 ? p : 1), scales_at(p));
    std::memcpy(d, pair + 216 + 2 * p, 2 * kLaneRows);
  } else {
    alignas(32) uint8_t scale_bytes[32] = {};
    const auto rows = [&](size_t offset) {
      __m256i parts[kLaneRows];
      for (int q = 0; q < kLaneRows; ++q) parts[q] = load256(wp[q] + i * kBlock + offset);
      return vi_join(parts);
    };
    hmask = rows(offsetof(BlockQ3_K, hmask));
    for (int n = 0; n < 2; ++n) qs[n] = rows(offsetof(BlockQ3_K, qs) + 32 * n);
    for (int q = 0; q < kLaneRows; ++q) {  // 12 bytes: 16 would read past the tensor's last block
      std::memcpy(scale_bytes + 16 * q, wp[q] + i * kBlock + offsetof(BlockQ3_K, scales), 12);
      std::memcpy(d + q, wp[q] + i * kBlock + offsetof(BlockQ3_K, d), 2);
    }
    raw = _mm256_load_si256(reinterpret_cast<const __m256i*>(scale_bytes));
  }
  for (int n = 0; n < 2; ++n)
    for (int j = 0; j < 4; ++j)  // chunk 4n + j: bits 2j of qs[n], bit 4n + j of hmask
      w.u[4 * n + j] = vi_or(vi_bits(qs[n], 2 * j, 0x03030303), vi_move_bits(hmask, 4 * n + j, 2));
  // Group g's 6-bit scale: low four bits from byte g (g < 8) or the high nibble of byte g - 8, high
  // two bits from byte 8 + g % 4 at bit 2 (g / 4); minus 32. Each row's 16 in its 128-bit lane.
  const __m256i low = _mm256_and_si256(
      _mm256_srlv_epi64(_mm256_shuffle_epi8(raw, _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7,
                                                                  0, 1, 2, 3, 4, 5, 6, 7)),
                        _mm256_setr_epi64x(0, 4, 0, 4)),
      _mm256_set1_epi8(0x0F));
  const __m256i high = _mm256_and_si256(
      _mm256_srlv_epi32(_mm256_shuffle_epi8(raw, _mm256_setr_epi8(8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8,
                                                                  9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11)),
                        _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)),
      _mm256_set1_epi8(3));
  sixteen_group_scales(vi_widen_rows_i8(_mm256_sub_epi8(_mm256_or_si256(low, _mm256_slli_epi16(high, 4)), _mm256_set1_epi8(32))),
                       w.scale);
  w.d = vr_rows_f16(d);
}

void q3_K_column_block(const DotTile& t, int64_t r0) {
  using engine::quant::BlockQ3_K;
  constexpr int kRegs = kPackRows / kLaneRows;
  constexpr size_t kBlock = sizeof(BlockQ3_K);
  const char* wp[kPackRows];
  block_ptrs(t.w, t.w_stride, r0, t.rows, wp);
  const int64_t nb = t.n / kQK_K;
  const auto* act = reinterpret_cast<const BlockQ8_K*>(t.a);
  VR acc[kRegs];
  for (VR& v : acc) v = vr_zero();
  for (int64_t i = 0; i < nb; ++i) {
    if (!t.packed) {
      constexpr int64_t kAhead = 2;  // blocks: many streams this close together lose the hardware prefetchers
      for (const char* row : wp)
        for (size_t o = 0; o < kBlock; o += 64) __builtin_prefetch(row + (i + kAhead) * kBlock + o);
    }
    const BlockQ8_K& a = act[i];
    VI aq[8], fours[8];  // activations, and per byte pair 4 (a0 + a1)
    for (int k = 0; k < 8; ++k) {
      aq[k] = vi_repeat(load256(a.qs + 32 * k));
      fours[k] = vi_maddubs(vi_set1(0x04040404), aq[k]);
    }
    const VR da = vr_set1(a.d);
    for (int g = 0; g < kRegs; ++g) {
      const int row = g * kLaneRows;
      if (t.packed && row % 2 == 0) prefetch_stream(packed_pair(t, r0 + row, i, kBlock), 2 * kBlock, t.requests);
      Q3KRows w;
      q3_K_rows(t, wp + row, r0 + row, i, w);
      VI lanes = vi_set1(0);
      for (int k = 0; k < 8; ++k) lanes = vi_dot16(lanes, vi_sub16(vi_maddubs(w.u[k], aq[k]), fours[k]), w.scale[k]);
      acc[g] = vr_fma(vr_mul(da, w.d), vr_from_i32(lanes), acc[g]);
    }
  }
  for (int g = 0; g < kRegs; ++g) {
    alignas(64) float v[kRowLanes];
    vr_store(v, acc[g]);
    for (int p = 0; p < kLaneRows; ++p) store_out(t, r0 + g * kLaneRows + p, 0, hsum_lanes8(_mm256_loadu_ps(v + 8 * p)));
  }
}

void q3_K_column(const DotTile& t) {
  for (int64_t r0 = 0; r0 < t.rows; r0 += kPackRows) q3_K_column_block(t, r0);
}

#if !ENGINE_SIMD_VNNI
// One row's eight sub-block scales (Q4_K / Q5_K header of super-block i of tile row r) as int16
// in both 128-bit halves, cut from its scale bytes by scalar operations: each chunk's scale is
// then an in-lane byte shuffle of it (q5_K_chunk_scale), where spreading a lane of the rows'
// header registers took a lane-crossing permute per chunk, the busier port on an AVX2-only Zen 3.
[[gnu::always_inline]] inline __m256i k_row_scales16(const DotTile& t, const char* const* wp, int64_t r, int64_t i, size_t block_bytes) {
  uint32_t s[3];  // scale bytes 0..3, 4..7, 8..11
  if (t.packed) {
    const char* row = whole_packed_block(t, r, i, block_bytes) + (r % kPackRows) * 4;
    for (int c = 0; c < 3; ++c) std::memcpy(&s[c], row + (c + 1) * kPackRows * 4, 4);
  } else {
    std::memcpy(s, wp[0] + i * block_bytes + 4, sizeof(s));
  }
  const uint32_t low = s[0] & 0x3F3F3F3Fu, high = (s[2] & 0x0F0F0F0Fu) | ((s[0] >> 2) & 0x30303030u);
  return _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<int64_t>((uint64_t{high} << 32) | low))));
}
inline __m256i q5_K_chunk_scale(__m256i row_scales16, int k) {
  const char lo = static_cast<char>(2 * k), hi = static_cast<char>(2 * k + 1);
  return _mm256_shuffle_epi8(row_scales16, _mm256_setr_epi8(lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi,
                                                            lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi));
}
#endif

// Q5_K, one activation column, in k_lanes_block's order straight from the blocks: a super-block's
// eight lane sums are exact integers however they are formed, so they are formed in registers
// with no unpacked copy of the rows. A pass takes kPackRows rows (a packed group: one stream):
// their headers, as Q4_K's, with a row per lane, so that every row's min sum is formed at once;
// their levels kLaneRows rows per register, eight lanes each.
void q5_K_column_block(const DotTile& t, int64_t r0) {
  using engine::quant::BlockQ5_K;
  constexpr int kHeaders = kPackRows / kRowLanes, kRegs = kPackRows / kLaneRows;
  constexpr size_t kBlock = sizeof(BlockQ5_K);
  const char* wp[kPackRows];
  block_ptrs(t.w, t.w_stride, r0, t.rows, wp);
  const int64_t nb = t.n / kQK_K;
  const auto* act = reinterpret_cast<const BlockQ8_K*>(t.a);
  VR acc[kRegs], mins[kHeaders];
  for (VR& v : acc) v = vr_zero();
  for (VR& v : mins) v = vr_zero();
  for (int64_t i = 0; i < nb; ++i) {
    if (t.packed) {
      prefetch_stream(whole_packed_block(t, r0, i, kBlock), kPackRows * 16, t.requests);  // the headers
    } else {
      constexpr int64_t kAhead = 2;  // blocks: many streams this close together lose the hardware prefetchers
      for (const char* row : wp)
        for (size_t o = 0; o < kBlock; o += 64) __builtin_prefetch(row + (i + kAhead) * kBlock + o);
    }
    const BlockQ8_K& a = act[i];
    VI aq[8];
    for (int k = 0; k < 8; ++k) aq[k] = vi_repeat(load256(a.qs + 32 * k));
    const VR da = vr_set1(a.d);
    [[maybe_unused]] VI scale16[kHeaders][8];  // per row lane, sub-block k's scale in both int16 halves (VNNI)
    VR d[kHeaders];
    for (int hr = 0; hr < kHeaders; ++hr) {
      const Q4KRows h = k_header_at(t, wp + hr * kRowLanes, r0 + hr * kRowLanes, i, kBlock, t.packed);
      if constexpr (ENGINE_SIMD_VNNI)
        for (int k = 0; k < 8; ++k) scale16[hr][k] = q5_K_scale16(h, k);
      VI min_pairs[4];
      q5_K_min_pairs(h, min_pairs);
      mins[hr] = q5_K_min_term(min_pairs, h.dmin, a, mins[hr]);
      d[hr] = vr_mul(da, h.d);
    }
    for (int g = 0; g < kRegs; ++g) {
      const int row = g * kLaneRows, hr = row / kRowLanes, spread = row % kRowLanes / kLaneRows;
      // The packed stream is requested a row pair at a time, a line per chunk beside its products.
      const char* pair = t.packed && row % 2 == 0 ? q5_K_pair(t, r0 + row, i) : nullptr;
      constexpr int kPairLines = (2 * (kBlock - 16) + 63) / 64;
      VI q[8];
      q5_K_levels(t, wp + row, r0 + row, i, q);
#if !ENGINE_SIMD_VNNI
      const __m256i row_scales16 = k_row_scales16(t, wp + row, r0 + row, i, kBlock);
      const auto scale = [&](int k) { return q5_K_chunk_scale(row_scales16, k); };
#else
      const auto scale = [&](int k) { return vi_spread_rows(scale16[hr][k], spread); };
#endif
      VI lanes[2] = {vi_set1(0), vi_set1(0)};  // even and odd chunks: two dependency chains, not one
      for (int k = 0; k < 8; ++k) {
        if (pair && k < kPairLines) prefetch_stream(pair + 64 * k, 64, t.requests);
        lanes[k % 2] = vi_dot16(lanes[k % 2], vi_maddubs(q[k], aq[k]), scale(k));
      }
      acc[g] = vr_fma(vr_spread_rows(d[hr], spread), vr_from_i32(vi_add(lanes[0], lanes[1])), acc[g]);
    }
  }
  alignas(64) float min_terms[kPackRows];
  for (int hr = 0; hr < kHeaders; ++hr) vr_store(min_terms + hr * kRowLanes, mins[hr]);
  for (int g = 0; g < kRegs; ++g) {
    alignas(64) float v[kRowLanes];
    vr_store(v, acc[g]);
    for (int p = 0; p < kLaneRows; ++p) {
      const int r = g * kLaneRows + p;
      store_out(t, r0 + r, 0, hsum_lanes8(_mm256_loadu_ps(v + 8 * p)) + min_terms[r]);
    }
  }
}

void q5_K_column(const DotTile& t) {
  for (int64_t r0 = 0; r0 < t.rows; r0 += kPackRows) q5_K_column_block(t, r0);
}

// Q5_K with several columns and int16 dot products (VNNI), as Q6_K's: each row block's
// super-blocks loaded and widened once, then reused by every column.
size_t q5_K_wide_work_size(const DotTile& t) { return k_act_pairs_bytes(t) + prepared_bytes<Q5KWide>(t.n / kQK_K, 1); }

void q5_K_wide(const DotTile& t) {
  constexpr int RGW = kKWideRegs;
  TileWork work(t);
  const __m256i* pairs = k_act_pairs(t, work);
  for_prepared_row_blocks<RGW * kLaneRows, Q5KWide>(
      t, work, t.n / kQK_K, 1,
      [&](const char* const*, int64_t r0, int64_t i, Q5KWide* out) {
        const char* wp[kRowLanes];  // the headers' rows: a register's worth from r0
        block_ptrs(t.w, t.w_stride, r0, t.rows, wp);
        const Q4KRows h = k_header_at(t, wp, r0, i, sizeof(engine::quant::BlockQ5_K), t.packed);
        for (int g = 0; g < RGW; ++g) {
          KLaneRows rows;
          q5_K_levels(t, wp + g * kLaneRows, r0 + g * kLaneRows, i, rows.q);
          for (int k = 0; k < 8; ++k) rows.scale[k] = vi_spread_rows(q5_K_scale16(h, k), g);
          rows.offset = vi_set1(0);
          rows.d = vr_spread_rows(h.d, g);
          out->reg[g] = k_widen(rows);
        }
        q5_K_min_pairs(h, out->min_pairs);
        out->dmin = h.dmin;
      },
      [&](auto cols, const Q5KWide* rows, int64_t r0, int64_t c0) { k_wide_block<DType::Q5_K, RGW, decltype(cols)::value>(t, rows, pairs, r0, c0); });
}

template <bool Native>
bool dot_tile_impl(DType weight, DotOrder order, const DotTile& t) {
  const bool batch = order == DotOrder::kBatch;
  switch (weight) {
    case DType::F32:
    case DType::F16:
    case DType::BF16: return float_dot_tile<Native>(weight, order, t);
    case DType::Q8_0: return (t.cols > 1 || t.packed ? q8_0_lanes_gemm(t) : legacy_lanes_column<Q8_0Levels>(t)), true;
    case DType::Q5_0: return (t.packed ? q5_0_packed(t) : legacy_lanes<Q5_0Levels>(t)), true;
    case DType::Q4_1: return (t.packed ? q4_1_packed(t) : legacy_lanes<Q4_1Levels>(t)), true;
    case DType::Q5_1: return (t.packed ? q5_1_packed(t) : legacy_lanes<Q5_1Levels>(t)), true;
    case DType::Q4_0: return q4_0_serial(t), true;
    case DType::Q4_K: return q4_K_serial(batch, t), true;
    case DType::Q2_K: return (t.packed ? q2_K_packed(batch, t) : k_serial(weight, batch ? 8 : 16, t)), true;
    case DType::Q3_K:
      if (t.cols == 1) return q3_K_column(t), true;
      return by_unpacked_groups(weight, t, [&](const DotTile& g) { k_lanes_tile(weight, g); }), true;
    case DType::Q5_K:
      if (t.cols == 1) return q5_K_column(t), true;
      if constexpr (ENGINE_SIMD_VNNI) return q5_K_wide(t), true;
      return by_unpacked_groups(weight, t, [&](const DotTile& g) { k_lanes_tile(weight, g); }), true;
    case DType::Q6_K: return q6_K_lanes(t), true;
    default: return false;
  }
}

// The bytes of DotTile::work dot_tile_impl takes for t: its kernel's pieces.
size_t dot_tile_work_size_impl(DType weight, DotOrder order, const DotTile& t) {
  switch (weight) {
    case DType::F32:
    case DType::F16:
    case DType::BF16: return float_dot_tile_work_size(weight, order, t);
    case DType::Q8_0: return t.cols > 1 || t.packed ? q8_0_lanes_gemm_work_size(t) : legacy_lanes_work_size(t);
    case DType::Q4_1: return t.packed ? q4_1_packed_work_size(t) : legacy_lanes_work_size(t);
    case DType::Q5_0: return t.packed ? q8_0_lanes_gemm_work_size(t) : legacy_lanes_work_size(t);
    case DType::Q5_1: return t.packed ? q4_1_packed_work_size(t) : legacy_lanes_work_size(t);
    case DType::Q4_0: return q4_0_serial_work_size(t);
    case DType::Q4_K: return q4_K_serial_work_size(order == DotOrder::kBatch, t);
    case DType::Q2_K: return t.packed ? 0 : k_rows_bytes<8>(t);
    case DType::Q3_K: return t.cols == 1 ? 0 : unpacked_groups_bytes(t) + k_rows_bytes<2>(t);
    case DType::Q5_K:
      if (t.cols == 1) return 0;
      return ENGINE_SIMD_VNNI ? q5_K_wide_work_size(t) : unpacked_groups_bytes(t) + k_rows_bytes<2>(t);
    case DType::Q6_K: return q6_K_lanes_work_size(t);
    default: return 0;
  }
}
