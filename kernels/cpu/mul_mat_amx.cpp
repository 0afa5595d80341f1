// Q8_0 prefill multiplies on AMX-BF16 tiles (mul_mat_amx.h). Compiled for AMX and AVX-512 by
// target pragma only; mul_mat calls it only when amx_in_use().
//
// Tile roles: C[column][row] += A[column][k] · B[k][row], so a C tile's rows are activation
// columns and it stores straight into dst. Per 32-element chunk of K, four 1 KiB tiles hold 32
// columns (or 32 weight rows): [first 16 hi][first 16 lo][last 16 hi][last 16 lo]. A tile rows
// are 32 consecutive bf16 of one column; B tile row k holds elements 2k and 2k + 1 of each of
// 16 weight rows (the pairs TDPBF16PS multiplies).
// GCC 12's AVX-512 intrinsics pass a self-initialized "undefined" vector that -Wuninitialized
// then reports wherever they inline (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "cpu/mul_mat_amx.h"

#include <immintrin.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>

#include "cpu/cpu_features.h"
#include "cpu/repack.h"
#include "cpu/row_split.h"
#include "engine/op_params.h"
#include "engine/error.h"
#include "quant_formats.h"

#pragma GCC push_options
#pragma GCC target("amx-tile,amx-bf16,avx512f,avx512bw,avx512dq,avx512vl,avx512bf16,f16c,fma")

namespace engine::cpu {
namespace {

using quant::BlockQ8_0;

constexpr int64_t kChunk = 32;       // K per tile product: one Q8_0 block
constexpr size_t kTileBytes = 1024;  // 16 rows of 64 bytes
constexpr size_t kChunkBytes = 4 * kTileBytes;
constexpr int64_t kHalf = 16;        // columns or weight rows per tile
constexpr int64_t kPair = 2 * kHalf; // columns or weight rows per C block (2 x 2 tiles)
constexpr int64_t kPanelRows = 128;  // weight rows converted together and reused by every column block
constexpr int64_t kPanelK = 2048;    // K per pass over a panel: its converted chunks (1 MiB) stay in L2
constexpr size_t kAlign = 64;

size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

struct Layout {
  size_t acts;         // converted activations, all threads
  size_t panel;        // per thread: one panel's converted weights
  size_t stage;        // per thread: C blocks of a last, partial column block
  int64_t col_blocks;  // columns / kPair, rounded up
  int64_t panel_chunks;
};

Layout layout(const Tensor* dst) {
  const int64_t k = dst->src[0]->ne[0], cols = dst->src[1]->ne[1];
  Layout l{};
  l.col_blocks = (cols + kPair - 1) / kPair;
  l.panel_chunks = std::min(k, kPanelK) / kChunk;
  l.acts = static_cast<size_t>(l.col_blocks * (k / kChunk)) * kChunkBytes;
  l.panel = static_cast<size_t>(kPanelRows / kPair * l.panel_chunks) * kChunkBytes;
  l.stage = static_cast<size_t>(kPanelRows / kPair) * kPair * kPair * sizeof(float);
  return l;
}

struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

void configure_tiles() {
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.rows[t] = kHalf;
    config.colsb[t] = 64;
  }
  _tile_loadconfig(&config);
}

// x's bf16 head: its sign, exponent and 7 leading mantissa bits, the rest cleared.
__m512 truncate_bf16(__m512 x) {
  return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
}

__m512i as_bits(__m512bh v) {
  __m512i bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

// 32 floats (x0: the first 16) as their bf16 hi terms and lo terms, each 32 words in order.
struct Bf16Split {
  __m512i hi, lo;
};
Bf16Split split_bf16(__m512 x0, __m512 x1) {
  const __m512 h0 = truncate_bf16(x0), h1 = truncate_bf16(x1);
  return {as_bits(_mm512_cvtne2ps_pbh(h1, h0)), as_bits(_mm512_cvtne2ps_pbh(_mm512_sub_ps(x1, h1), _mm512_sub_ps(x0, h0)))};
}

// Columns [begin, end) of the activations (zeros past the last), each as row c % 16 of its tiles.
void convert_activations(const Tensor* b, char* acts, int64_t begin, int64_t end) {
  const int64_t k = b->ne[0], chunks = k / kChunk;
  for (int64_t c = begin; c < end; ++c) {
    char* row = acts + static_cast<size_t>(c / kPair * chunks) * kChunkBytes + (c % kPair / kHalf) * 2 * kTileBytes + c % kHalf * 64;
    const float* x = c < b->ne[1] ? reinterpret_cast<const float*>(static_cast<const char*>(b->data) + c * b->nb[1]) : nullptr;
    for (int64_t t = 0; t < chunks; ++t, row += kChunkBytes) {
      if (!x) {
        _mm512_store_si512(row, _mm512_setzero_si512());
        _mm512_store_si512(row + kTileBytes, _mm512_setzero_si512());
        continue;
      }
      const Bf16Split split = split_bf16(_mm512_loadu_ps(x + t * kChunk), _mm512_loadu_ps(x + t * kChunk + kHalf));
      _mm512_store_si512(row, split.hi);
      _mm512_store_si512(row + kTileBytes, split.lo);
    }
  }
}

// B tile rows k = 2j + p hold elements 4j + 2p and 4j + 2p + 1 of each row: word i from row i / 2.
alignas(64) const uint16_t kPairWords[32] = {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23,
                                             8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};

// A packed group (repack.h) is one B tile's 16 weight rows.
static_assert(kPackRows == kHalf);

// A block of 16 weight rows as tiles: packed, the group's block at w (repack.h); else block
// `block` of 16 file rows from w, row_bytes apart.
void convert_weight_block(const char* w, size_t row_bytes, bool packed, int64_t block, char* hi, char* lo) {
  __m512 d;
  __m512i lanes[8];  // lane j: levels 4j..4j+3 of each row
  if (packed) {
    d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
    for (int j = 0; j < 8; ++j) lanes[j] = _mm512_loadu_si512(w + kPackRows * sizeof(uint16_t) + j * kPackRows * sizeof(int32_t));
  } else {
    const __m512i rows = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                            _mm512_set1_epi32(static_cast<int>(row_bytes)));
    const char* first = w + block * static_cast<int64_t>(sizeof(BlockQ8_0));
    const __m512i scales = _mm512_i32gather_epi32(rows, first, 1);  // d, then two levels
    d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(scales));
    for (int j = 0; j < 8; ++j) lanes[j] = _mm512_i32gather_epi32(rows, first + sizeof(uint16_t) + 4 * j, 1);
  }
  const __m512i pair_words = _mm512_load_si512(kPairWords);
  for (int j = 0; j < 8; ++j) {
    const __m512i v = lanes[j];
    const __m512i levels[4] = {_mm512_srai_epi32(_mm512_slli_epi32(v, 24), 24), _mm512_srai_epi32(_mm512_slli_epi32(v, 16), 24),
                               _mm512_srai_epi32(_mm512_slli_epi32(v, 8), 24), _mm512_srai_epi32(v, 24)};
    for (int p = 0; p < 2; ++p) {
      const Bf16Split split = split_bf16(_mm512_mul_ps(_mm512_cvtepi32_ps(levels[2 * p]), d),
                                         _mm512_mul_ps(_mm512_cvtepi32_ps(levels[2 * p + 1]), d));
      const int k = 2 * j + p;
      _mm512_store_si512(hi + k * 64, _mm512_permutexvar_epi16(pair_words, split.hi));
      _mm512_store_si512(lo + k * 64, _mm512_permutexvar_epi16(pair_words, split.lo));
    }
  }
}

// Weight rows [row0, row0 + rows) (a multiple of kPair), chunks [chunk0, chunk0 + chunks), as
// panel: per kPair rows, panel_chunks chunk slots.
void convert_panel(const Tensor* a, bool packed, int64_t row0, int64_t rows, int64_t chunk0, int64_t chunks,
                   int64_t panel_chunks, char* panel) {
  const size_t row_bytes = a->nb[1];
  const int64_t chunk_blocks = held_chunk_blocks(*a, packed);
  const char* weight = static_cast<const char*>(a->data);
  for (int64_t r = 0; r < rows; r += kHalf) {
    const char* w = weight + (row0 + r) * static_cast<int64_t>(row_bytes);
    char* slot = panel + static_cast<size_t>(r / kPair * panel_chunks) * kChunkBytes + r % kPair / kHalf * 2 * kTileBytes;
    for (int64_t t = 0; t < chunks; ++t, slot += kChunkBytes) {
      const int64_t block = chunk0 + t;
      const char* from = packed ? weight + packed_block_offset(row0 + r, block, sizeof(BlockQ8_0), row_bytes, chunk_blocks) : w;
      convert_weight_block(from, row_bytes, packed, block, slot, slot + kTileBytes);
    }
  }
}

// C tiles 0..3 (columns 0..15 x rows 0..15, x rows 16..31, columns 16..31 x rows 0..15, x rows
// 16..31) += A tiles 4 (columns 0..15), 5 (columns 16..31) times B tiles 6 (rows 0..15), 7 (rows 16..31).
[[gnu::always_inline]] inline void multiply_loaded_tiles() {
  _tile_dpbf16ps(0, 4, 6);
  _tile_dpbf16ps(1, 4, 7);
  _tile_dpbf16ps(2, 5, 6);
  _tile_dpbf16ps(3, 5, 7);
}

// One 32 x 32 C block over `chunks` chunks: c[column][row], c_stride bytes per column; starts
// from c's values when accumulate, else from zero.
void multiply_block(const char* a, const char* w, int64_t chunks, char* c, size_t c_stride, bool accumulate) {
  char* c_low = c + kHalf * c_stride;  // columns 16..31
  if (accumulate) {
    _tile_loadd(0, c, c_stride);
    _tile_loadd(1, c + kHalf * sizeof(float), c_stride);
    _tile_loadd(2, c_low, c_stride);
    _tile_loadd(3, c_low + kHalf * sizeof(float), c_stride);
  } else {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
  for (int64_t t = 0; t < chunks; ++t, a += kChunkBytes, w += kChunkBytes) {
    // lo(x) · hi(w), then hi(x) · hi(w), then hi(x) · lo(w): each loaded tile serves two products.
    _tile_loadd(4, a + kTileBytes, 64);
    _tile_loadd(5, a + 3 * kTileBytes, 64);
    _tile_loadd(6, w, 64);
    _tile_loadd(7, w + 2 * kTileBytes, 64);
    multiply_loaded_tiles();
    _tile_loadd(4, a, 64);
    _tile_loadd(5, a + 2 * kTileBytes, 64);
    multiply_loaded_tiles();
    _tile_loadd(6, w + kTileBytes, 64);
    _tile_loadd(7, w + 3 * kTileBytes, 64);
    multiply_loaded_tiles();
  }
  _tile_stored(0, c, c_stride);
  _tile_stored(1, c + kHalf * sizeof(float), c_stride);
  _tile_stored(2, c_low, c_stride);
  _tile_stored(3, c_low + kHalf * sizeof(float), c_stride);
}

}  // namespace

bool mul_mat_amx_applies(const Tensor* dst) {
  const Tensor* a = dst->src[0];
  const Tensor* b = dst->src[1];
  return amx_in_use() && a->type == DType::Q8_0 && a->ne[2] == 1 && a->ne[3] == 1 && a->ne[1] % kPair == 0 &&
         a->nb[1] * kHalf < static_cast<size_t>(INT_MAX) && b->type == DType::F32 && b->ne[2] == 1 && b->ne[3] == 1 &&
         b->nb[0] == sizeof(float) && b->ne[1] >= kAmxMinColumns && dst->nb[0] == sizeof(float) &&
         !mul_mat_params(*dst).kv_span && !mul_mat_params(*dst).causal;
}

size_t mul_mat_amx_work_size(const Tensor* dst, int nth) {
  const Layout l = layout(dst);
  return kAlign + l.acts + static_cast<size_t>(nth) * (l.panel + l.stage);
}

void mul_mat_amx(const ComputeParams& p, Tensor* dst) {
  const Tensor* a = dst->src[0];
  const Tensor* b = dst->src[1];
  if (!p.wdata || p.wsize < mul_mat_amx_work_size(dst, p.nth)) throw Error("mul_mat '" + dst->name + "': scratch buffer too small");
  const Layout l = layout(dst);
  char* acts = reinterpret_cast<char*>(align_up(reinterpret_cast<uintptr_t>(p.wdata)));
  char* panel = acts + l.acts + static_cast<size_t>(p.ith) * (l.panel + l.stage);
  char* stage = panel + l.panel;

  const WorkRange cols = split_work(l.col_blocks * kPair, p.ith, p.nth);
  convert_activations(b, acts, cols.begin, cols.end);
  if (p.nth > 1) barrier_wait(p);

  const int64_t k = a->ne[0], m = a->ne[1], n = b->ne[1];
  const WorkRange panels = split_work((m + kPanelRows - 1) / kPanelRows, p.ith, p.nth);
  if (panels.begin == panels.end) return;
  configure_tiles();
  for (int64_t pi = panels.begin; pi < panels.end; ++pi) {
    const int64_t row0 = pi * kPanelRows, rows = std::min(kPanelRows, m - row0);
    for (int64_t k0 = 0; k0 < k; k0 += kPanelK) {
      const int64_t chunk0 = k0 / kChunk, chunks = std::min(kPanelK, k - k0) / kChunk;
      const bool accumulate = k0 > 0, last = k0 + kPanelK >= k;
      convert_panel(a, p.weight_packed, row0, rows, chunk0, chunks, l.panel_chunks, panel);
      for (int64_t cb = 0; cb < l.col_blocks; ++cb) {
        const char* a_chunks = acts + static_cast<size_t>(cb * (k / kChunk) + chunk0) * kChunkBytes;
        const int64_t col0 = cb * kPair, live = std::min(kPair, n - col0);
        for (int64_t s = 0; s < rows / kPair; ++s) {
          const char* w_chunks = panel + static_cast<size_t>(s * l.panel_chunks) * kChunkBytes;
          const int64_t out_row = row0 + s * kPair;
          if (live == kPair) {
            char* c = static_cast<char*>(dst->data) + col0 * static_cast<int64_t>(dst->nb[1]) + out_row * static_cast<int64_t>(sizeof(float));
            multiply_block(a_chunks, w_chunks, chunks, c, dst->nb[1], accumulate);
            continue;
          }
          char* c = stage + static_cast<size_t>(s) * kPair * kPair * sizeof(float);
          multiply_block(a_chunks, w_chunks, chunks, c, kPair * sizeof(float), accumulate);
          if (last)
            for (int64_t j = 0; j < live; ++j)
              std::memcpy(static_cast<char*>(dst->data) + (col0 + j) * static_cast<int64_t>(dst->nb[1]) + out_row * static_cast<int64_t>(sizeof(float)),
                          c + j * kPair * sizeof(float), kPair * sizeof(float));
        }
      }
    }
  }
  _tile_release();
}

}  // namespace engine::cpu

#pragma GCC pop_options
