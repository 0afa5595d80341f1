// Every SIMD kernel against its scalar twin, bit for bit, on random data: dot-product tiles of
// every weight dtype and order (odd sizes, edge rows and columns, leftovers), the activation
// quantizers, and the vector exp of softmax and SiLU. Each SIMD level the CPU has is checked.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "cpu/cpu_features.h"
#include "cpu/decode_tuning.h"
#include "cpu/host_buffer.h"
#include "cpu/kernels.h"
#include "cpu/repack.h"
#include "cpu/vec_dot.h"
#include "cpu/vec_math.h"
#include "engine/quants.h"
#include "quant_formats.h"
#include "random_floats.h"

namespace engine::cpu {
namespace {

const SimdLevel kSimdLevels[] = {SimdLevel::kAvx2, SimdLevel::kAvx2Vnni, SimdLevel::kAvx512, SimdLevel::kAvx512Bf16};

// Restores the default level (and VNNI encoding) when a test ends.
struct LevelGuard {
  ~LevelGuard() {
    set_cpu_features_override(false);
    if (!cpu_vnni_encodings().empty()) set_vnni_encoding(cpu_vnni_encodings().front());
  }
};

// Calls check(name) once per form of `level` this CPU runs: kAvx2Vnni once per encoding.
template <typename Check>
void each_form(SimdLevel level, const Check& check) {
  if (level != SimdLevel::kAvx2Vnni) return check(std::string(simd_level_name(level)));
  for (VnniEncoding encoding : cpu_vnni_encodings()) {
    set_vnni_encoding(encoding);
    check(std::string(simd_level_name(level)) + (encoding == VnniEncoding::kVex ? " vex" : " evex"));
  }
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

struct Tile {
  int64_t n, rows, cols;
  std::vector<uint8_t> w, a;
  size_t w_row, a_row;
  int64_t chunk_blocks = 0;  // packed: how pack_rows chunked w (repack.h)
};

// A weight of `rows` rows and `cols` activation rows in the weight's dot format, with row
// scales spread over several orders of magnitude so the float steps round differently.
Tile make_tile(DType type, int64_t n, int64_t rows, int64_t cols, uint32_t seed) {
  Tile t{n, rows, cols, {}, {}, row_bytes(type, n), row_bytes(vec_dot_type(type), n)};
  t.w.resize(t.w_row * rows);
  t.a.resize(t.a_row * cols);
  for (int64_t r = 0; r < rows; ++r)
    quantize_row(type, random_floats(n, seed + r, std::ldexp(1.0f, r % 7 - 3)).data(), t.w.data() + r * t.w_row, n);
  set_cpu_features_override(true);
  for (int64_t c = 0; c < cols; ++c)
    quantize_activation(type, random_floats(n, seed + 1000 + c, 1.0f + c).data(), t.a.data() + c * t.a_row, n);
  return t;
}

// Runs on `level` whatever form the decode timing chose (decode_tuning.h), with exactly the
// work memory dot_tile_work_size_at gives the tile there. The outputs come back row by row;
// `rows_adjacent` writes them with a row's outputs adjacent instead (decode attention's scores:
// one column per query head, its KV positions one float apart); `requests` as the tuning may
// set them for decode.
std::vector<float> run_tile(SimdLevel level, DType type, DotOrder order, const Tile& t, bool packed = false,
                            bool rows_adjacent = false, StreamRequests requests = StreamRequests::kNearAndFar) {
  std::vector<float> out(t.rows * t.cols, std::numeric_limits<float>::quiet_NaN());
  const size_t out_row = rows_adjacent ? sizeof(float) : sizeof(float) * t.cols;
  const size_t out_col = rows_adjacent ? sizeof(float) * t.rows : sizeof(float);
  DotTile tile{t.n, reinterpret_cast<const char*>(t.w.data()), t.w_row, t.rows,
               reinterpret_cast<const char*>(t.a.data()), t.a_row, t.cols, reinterpret_cast<char*>(out.data()),
               out_row, out_col, packed};
  tile.requests = requests;
  if (packed) tile.chunk_blocks = t.chunk_blocks;
  HostBuffer work;
  work.reserve(dot_tile_work_size_at(level, type, order, tile));
  tile.work = static_cast<char*>(work.data());
  tile.work_size = work.size();
  dot_tile_at(level, type, order, tile);
  if (!rows_adjacent) return out;
  std::vector<float> by_row(out.size());
  for (int64_t r = 0; r < t.rows; ++r)
    for (int64_t c = 0; c < t.cols; ++c) by_row[r * t.cols + c] = out[c * t.rows + r];
  return by_row;
}

void expect_same_bits(const std::vector<float>& want, const std::vector<float>& got, const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  int wrong = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (bits(want[i]) != bits(got[i]) && ++wrong <= 3)
      ADD_FAILURE() << what << " element " << i << ": scalar " << want[i] << " simd " << got[i];
}

void check_dtype(DType type, const std::vector<int64_t>& sizes) {
  LevelGuard guard;
  const int64_t shapes[][2] = {{1, 1}, {3, 1}, {8, 1}, {13, 5}, {17, 4}, {9, 9}, {40, 6}};
  uint32_t seed = 1;
  for (int64_t n : sizes)
    for (const auto& shape : shapes)
      for (DotOrder order : {DotOrder::kRow, DotOrder::kRowPadded, DotOrder::kBatch}) {
        const Tile t = make_tile(type, n, shape[0], shape[1], seed += 100);
        set_cpu_features_override(true);
        const auto want = run_tile(SimdLevel::kScalar, type, order, t);
        for (SimdLevel level : kSimdLevels) {
          if (level > cpu_simd_level()) continue;
          each_form(level, [&](const std::string& form) {
            const std::string what = std::string(dtype_name(type)) + " " + form + " n=" + std::to_string(n) + " tile " +
                                     std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + " order " +
                                     std::to_string(static_cast<int>(order));
            expect_same_bits(want, run_tile(level, type, order, t), what);
            expect_same_bits(want, run_tile(level, type, order, t, false, true), what + " rows adjacent");
            if (t.cols == 1)
              for (StreamRequests fewer : {StreamRequests::kFar, StreamRequests::kNone})
                expect_same_bits(want, run_tile(level, type, order, t, false, false, fewer), what + " requests " + requests_name(fewer));
          });
        }
      }
}

// Weights regrouped by repack.h: every level, the scalar one included, gives the file layout's
// scalar results bit for bit (single and several columns, one and three groups of rows; two runs
// of groups where rows of n are long enough to be chunked).
void check_packed(DType type, const std::vector<int64_t>& sizes) {
  LevelGuard guard;
  uint32_t seed = 7;
  constexpr int64_t kTwoRuns = 2 * kRunRows;
  for (int64_t n : sizes)
    for (int64_t rows : {kPackRows, 3 * kPackRows, kTwoRuns})
      for (int64_t cols : {1, 3, 4, 9}) {
        const int64_t chunk_blocks = packed_chunk_blocks(type, n, rows);
        if ((rows == kTwoRuns) != (chunk_blocks > 0)) continue;
        Tile t = make_tile(type, n, rows, cols, seed += 100);
        t.chunk_blocks = chunk_blocks;
        const DotOrder order = cols == 1 ? DotOrder::kRow : DotOrder::kBatch;
        set_cpu_features_override(true);
        const auto want = run_tile(SimdLevel::kScalar, type, order, t);
        pack_rows(type, n, rows, t.w.data(), chunk_blocks);
        for (SimdLevel level : {SimdLevel::kScalar, SimdLevel::kAvx2, SimdLevel::kAvx2Vnni, SimdLevel::kAvx512, SimdLevel::kAvx512Bf16}) {
          if (level > cpu_simd_level()) continue;
          each_form(level, [&](const std::string& form) {
            const std::string what = std::string(dtype_name(type)) + " packed " + form + " n=" + std::to_string(n) + " tile " +
                                     std::to_string(rows) + "x" + std::to_string(cols) +
                                     (chunk_blocks > 0 ? " chunks of " + std::to_string(chunk_blocks) : "");
            expect_same_bits(want, run_tile(level, type, order, t, true), what);
            if (cols == 1)
              for (StreamRequests fewer : {StreamRequests::kFar, StreamRequests::kNone})
                expect_same_bits(want, run_tile(level, type, order, t, true, false, fewer), what + " requests " + requests_name(fewer));
          });
        }
      }
}

// The nibble dots at the largest sums their levels allow: every nibble 15 against activation
// levels of the largest magnitude, positive and negative (the 256-bit forms sum eight such
// byte-pair products in 16 bits before widening: one more would overflow), packed for decode.
void check_nibble_extremes(DType type, size_t nibbles_at, size_t nibble_bytes, int64_t n) {
  LevelGuard guard;
  for (float sign : {1.0f, -1.0f}) {
    Tile t = make_tile(type, n, 3 * kPackRows, 1, 11);
    const size_t block = dtype_info(type).block_bytes;
    for (size_t b = 0; b < t.w.size(); b += block) std::memset(t.w.data() + b + nibbles_at, 0xFF, nibble_bytes);
    set_cpu_features_override(true);
    quantize_activation(type, std::vector<float>(static_cast<size_t>(n), sign).data(), t.a.data(), n);
    const auto want = run_tile(SimdLevel::kScalar, type, DotOrder::kRow, t);
    EXPECT_NE(want[0], 0.0f);
    pack_rows(type, n, t.rows, t.w.data());
    for (SimdLevel level : kSimdLevels) {
      if (level > cpu_simd_level()) continue;
      each_form(level, [&](const std::string& form) {
        expect_same_bits(want, run_tile(level, type, DotOrder::kRow, t, true),
                         std::string(dtype_name(type)) + " nibbles at 15 " + form + (sign > 0 ? " +" : " -"));
      });
    }
  }
}

TEST(SimdParity, NibbleDotsAtTheirLargestSums) {
  using namespace engine::quant;
  check_nibble_extremes(DType::Q4_0, offsetof(BlockQ4_0, qs), sizeof(BlockQ4_0::qs), 1024);
  check_nibble_extremes(DType::Q4_1, offsetof(BlockQ4_1, qs), sizeof(BlockQ4_1::qs), 1024);
  check_nibble_extremes(DType::Q4_K, offsetof(BlockQ4_K, qs), sizeof(BlockQ4_K::qs), 2048);
}

// Up to kShortDot (multiples of 16) the short-dot kernel; past it the register blocks.
// 4200: one column past 8 KiB widened, so F16 tiles also read half-float columns on every level.
const std::vector<int64_t> kFloatSizes = {16, 32, 48, 64, 100, 172, 256, 320, 768, 1000, 4200};
const std::vector<int64_t> kLegacySizes = {32, 96, 224, 1024};
const std::vector<int64_t> kKSizes = {256, 768, 2048};

TEST(SimdParity, CpuHasSomeSimdOrTestIsMoot) {
  if (cpu_simd_level() == SimdLevel::kScalar) GTEST_SKIP() << "no AVX2 on this CPU: only the scalar code runs";
  LevelGuard guard;
  set_cpu_features_override(false);
  EXPECT_EQ(simd_level(), cpu_simd_level());
  set_cpu_features_override(true);
  EXPECT_EQ(simd_level(), SimdLevel::kScalar);
  EXPECT_FALSE(simd_active());
}

TEST(SimdParity, F32Dots) { check_dtype(DType::F32, kFloatSizes); }
TEST(SimdParity, F16Dots) { check_dtype(DType::F16, kFloatSizes); }
TEST(SimdParity, BF16Dots) { check_dtype(DType::BF16, kFloatSizes); }
TEST(SimdParity, Q8_0Dots) { check_dtype(DType::Q8_0, kLegacySizes); }
TEST(SimdParity, Q4_0Dots) { check_dtype(DType::Q4_0, kLegacySizes); }
// Rows this long are chunked (repack.h) for the dtypes whose one-column kernels walk chunks.
constexpr int64_t kChunkedSize = 8192;

TEST(SimdParity, Q8_0PackedDots) { check_packed(DType::Q8_0, {32, 96, 224, 1024, kChunkedSize}); }
TEST(SimdParity, Q4_0PackedDots) { check_packed(DType::Q4_0, {32, 96, 224, 1024, kChunkedSize}); }
TEST(SimdParity, Q4_1PackedDots) { check_packed(DType::Q4_1, {32, 96, 224, 1024, kChunkedSize}); }
TEST(SimdParity, Q5_0PackedDots) { check_packed(DType::Q5_0, {32, 96, 224, 1024, kChunkedSize}); }
TEST(SimdParity, Q5_1PackedDots) { check_packed(DType::Q5_1, {32, 96, 224, 1024, kChunkedSize}); }
TEST(SimdParity, Q2_KPackedDots) { check_packed(DType::Q2_K, kKSizes); }
TEST(SimdParity, Q3_KPackedDots) { check_packed(DType::Q3_K, kKSizes); }
TEST(SimdParity, Q4_KPackedDots) { check_packed(DType::Q4_K, {256, 768, 2048, kChunkedSize}); }
TEST(SimdParity, Q5_KPackedDots) { check_packed(DType::Q5_K, kKSizes); }
TEST(SimdParity, Q6_KPackedDots) { check_packed(DType::Q6_K, kKSizes); }
TEST(SimdParity, Q5_0Dots) { check_dtype(DType::Q5_0, kLegacySizes); }
TEST(SimdParity, Q4_1Dots) { check_dtype(DType::Q4_1, kLegacySizes); }
TEST(SimdParity, Q5_1Dots) { check_dtype(DType::Q5_1, kLegacySizes); }
TEST(SimdParity, Q2_KDots) { check_dtype(DType::Q2_K, kKSizes); }
TEST(SimdParity, Q3_KDots) { check_dtype(DType::Q3_K, kKSizes); }
TEST(SimdParity, Q4_KDots) { check_dtype(DType::Q4_K, kKSizes); }
TEST(SimdParity, Q5_KDots) { check_dtype(DType::Q5_K, kKSizes); }
TEST(SimdParity, Q6_KDots) { check_dtype(DType::Q6_K, kKSizes); }

// BF16 values at the edges of the dot-product instruction's semantics: denormal inputs and
// products, sums that cancel to denormals.
TEST(SimdParity, BF16DenormalsFlushLikeTheInstruction) {
  LevelGuard guard;
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> exp(-140, -100);
  std::vector<uint16_t> w(256), a(256);
  for (size_t i = 0; i < w.size(); ++i) {
    w[i] = fp32_to_bf16(std::ldexp(1.0f + (rng() % 128) / 128.0f, exp(rng)) * (rng() % 2 ? 1.0f : -1.0f));
    a[i] = fp32_to_bf16(std::ldexp(1.0f + (rng() % 128) / 128.0f, -exp(rng) - 120) * (rng() % 2 ? 1.0f : -1.0f));
  }
  for (DotOrder order : {DotOrder::kRow, DotOrder::kBatch}) {
    set_cpu_features_override(true);
    const float want = dot(DType::BF16, 256, w.data(), a.data(), order);
    for (SimdLevel level : kSimdLevels) {
      if (level > cpu_simd_level()) continue;
      set_simd_level_cap(level);
      EXPECT_EQ(bits(want), bits(dot(DType::BF16, 256, w.data(), a.data(), order))) << simd_level_name(level);
    }
  }
}

#if defined(__x86_64__) || defined(__i386__)
// The emulated dot-product step flushes denormals through MXCSR for its own loops only: after a
// BF16 dot on every level the mode is as it was, and float arithmetic again yields denormals.
TEST(SimdParity, BF16DotsLeaveTheDenormalModeAsItWas) {
  LevelGuard guard;
  const std::vector<uint16_t> w(256, fp32_to_bf16(1.5f)), a(256, fp32_to_bf16(-0.25f));
  for (SimdLevel level : kSimdLevels) {
    if (level > cpu_simd_level()) continue;
    set_simd_level_cap(level);
    for (DotOrder order : {DotOrder::kRow, DotOrder::kBatch}) {
      const unsigned before = _mm_getcsr();
      EXPECT_EQ(dot(DType::BF16, 256, w.data(), a.data(), order), -96.0f) << simd_level_name(level);
      EXPECT_EQ(_mm_getcsr(), before) << simd_level_name(level);
      volatile float smallest_normal = std::numeric_limits<float>::min();
      EXPECT_EQ(std::fpclassify(smallest_normal / 2), FP_SUBNORMAL) << simd_level_name(level);
    }
  }
}
#endif

// Blocks quantized eight at a time and one at a time (2144: three past the last eight).
TEST(SimdParity, ActivationQuantizers) {
  LevelGuard guard;
  for (const int64_t n : {2048, 2144}) {
    auto x = random_floats(n, 77, 3.0f);
    for (int i = 0; i < 32; ++i) x[i] = 0.0f;                   // an all-zero block
    for (int i = 256; i < 288; ++i) x[i] = (i % 2 ? 2.5f : -2.5f);  // ties in amax and halves
    for (int i = 320; i < 352; ++i) x[i] = 1e-44f;                // amax / 127 underflows to zero
    x[600] = -x[601] - 0.0f;
    for (DType weight : {DType::Q8_0, DType::Q4_1, DType::Q4_K}) {
      if (n % dtype_info(weight).block_size != 0) continue;
      const size_t bytes = row_bytes(vec_dot_type(weight), n);
      std::vector<uint8_t> want(bytes), got(bytes);
      set_cpu_features_override(true);
      quantize_activation(weight, x.data(), want.data(), n);
      for (SimdLevel level : kSimdLevels) {
        if (level > cpu_simd_level()) continue;
        set_simd_level_cap(level);
        std::fill(got.begin(), got.end(), 0xAB);
        quantize_activation(weight, x.data(), got.data(), n);
        EXPECT_EQ(0, std::memcmp(want.data(), got.data(), bytes))
            << dtype_name(vec_dot_type(weight)) << " " << simd_level_name(level) << " n=" << n;
      }
    }
  }
}

TEST(SimdParity, F16ActivationsConvertLikeFp32ToFp16) {
  LevelGuard guard;
  auto x = random_floats(1000, 78, 1000.0f);  // 1000: a leftover after the vector part
  // Half precision's edges: rounding ties, overflow, subnormals, signed zero, NaNs, infinities.
  const float edges[] = {65504.0f, 65520.0f, -65536.0f, 1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 0x1p-24f, 0x1p-25f,
                         0x1.8p-25f, -0x1p-15f, 0x1p-140f, -0.0f, std::numeric_limits<float>::infinity(),
                         -std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::signaling_NaN()};
  std::copy(std::begin(edges), std::end(edges), x.begin() + 3);
  std::vector<uint16_t> want(x.size()), got(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = fp32_to_fp16(x[i]);
  for (SimdLevel level : kSimdLevels) {
    if (level > cpu_simd_level()) continue;
    set_simd_level_cap(level);
    std::fill(got.begin(), got.end(), 0xABCD);
    quantize_activation(DType::F16, x.data(), got.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_EQ(want[i], got[i]) << simd_level_name(level) << " element " << i << " = " << x[i];
  }
}

TEST(SimdParity, VectorExpAndSilu) {
  LevelGuard guard;
  std::vector<float> x = random_floats(4096, 9, 30.0f);
  std::mt19937 rng(3);
  for (size_t i = 0; i < 512; ++i) x[i] = -200.0f + 300.0f * static_cast<float>(i) / 512.0f;  // both clamps and denormal results
  x[600] = -std::numeric_limits<float>::infinity();
  x[601] = 0.0f;
  x[602] = -0.0f;
  const float shift = 1.25f;
  std::vector<float> want_exp(x.size()), want_silu(x.size()), got(x.size());
  set_cpu_features_override(true);
  const double want_sum = exp_shifted_lanes(x.data(), shift, want_exp.data(), static_cast<int64_t>(x.size()));
  silu_lanes(x.data(), want_silu.data(), static_cast<int64_t>(x.size()));
  for (SimdLevel level : kSimdLevels) {
    if (level > cpu_simd_level()) continue;
    set_simd_level_cap(level);
    EXPECT_EQ(exp_shifted_lanes(x.data(), shift, got.data(), static_cast<int64_t>(x.size())), want_sum) << simd_level_name(level);
    expect_same_bits(want_exp, got, std::string("exp ") + simd_level_name(level));
    silu_lanes(x.data(), got.data(), static_cast<int64_t>(x.size()));
    expect_same_bits(want_silu, got, std::string("silu ") + simd_level_name(level));
  }
}

// Softmax rows of every length around the vector width, with and without a mask, whole or cut
// at a live prefix (the causal mask's -inf tail), and a row that is all -inf.
TEST(SimdParity, SoftMaxRows) {
  LevelGuard guard;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  uint32_t seed = 20;
  for (int64_t n : {1, 15, 16, 17, 100, 3072})
    for (int64_t live : {n, n * 2 / 3, int64_t{0}})
      for (bool masked : {false, true}) {
        std::vector<float> x = random_floats(n, ++seed, 8.0f), m = random_floats(n, ++seed, 2.0f);
        if (n > 5) m[n / 2] = kNegInf;  // a masked position inside the live prefix
        std::fill(m.begin() + live, m.end(), kNegInf);
        const float* mask = masked ? m.data() : nullptr;
        std::vector<float> want(n, 7.0f), got(n), w(n);
        set_cpu_features_override(true);
        soft_max_row(x.data(), mask, masked ? live : n, 0.125f, want.data(), n, w.data());
        for (SimdLevel level : kSimdLevels) {
          if (level > cpu_simd_level()) continue;
          set_simd_level_cap(level);
          std::fill(got.begin(), got.end(), 7.0f);
          soft_max_row(x.data(), mask, masked ? live : n, 0.125f, got.data(), n, w.data());
          expect_same_bits(want, got, std::string("softmax ") + simd_level_name(level) + " n=" + std::to_string(n) +
                                          " live " + std::to_string(live) + (masked ? " masked" : ""));
        }
      }
}

}  // namespace
}  // namespace engine::cpu
