// The CUDA per-element weight accessors (kernels/cuda/dequant.cuh), compiled for the host and
// checked bit for bit against the engine's own dequantize_row.
#include "cuda/dequant.cuh"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/quants.h"
#include "random_floats.h"

using engine::DType;

namespace {

// Elements per test row: odd for the unblocked dtypes, three legacy blocks, two K super-blocks.
template <DType T>
constexpr int64_t kRowElems = engine::cuda::Weight<T>::kBlockElems == 1    ? 45
                              : engine::cuda::Weight<T>::kBlockElems == 32 ? 3 * 32
                                                                           : 2 * 256;

// Equal bit for bit; any nan matches any nan, as GPU arithmetic does not keep nan payloads.
bool same(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b) || (std::isnan(a) && std::isnan(b));
}

// Expects Weight<T>::at to give dequantize_row's value for every element of `row`, placed at
// byte 2 of its buffer as rows may be only 2-byte aligned.
template <DType T>
void expect_matches_cpu(const std::vector<uint8_t>& row, const std::string& what) {
  const int64_t n = kRowElems<T>;
  std::vector<float> want(n);
  engine::dequantize_row(T, row.data(), want.data(), n);
  std::vector<uint8_t> buf(row.size() + 2);
  std::memcpy(buf.data() + 2, row.data(), row.size());
  for (int64_t i = 0; i < n; ++i) {
    const float got = engine::cuda::Weight<T>::at(buf.data() + 2, i);
    if (!same(got, want[i])) {
      ADD_FAILURE() << engine::dtype_name(T) << " " << what << ": element " << i << " is " << got << " (bits 0x"
                    << std::hex << std::bit_cast<uint32_t>(got) << "), dequantize_row gives " << want[i] << " (bits 0x"
                    << std::bit_cast<uint32_t>(want[i]) << ")";
      return;
    }
  }
}

// Expects Weight<T>::group to give at()'s value for every element of every group of `row` (placed at
// byte 2 of its buffer, as above), n elements long.
template <DType T>
void expect_groups_match_at(const std::vector<uint8_t>& row, int64_t n, const std::string& what) {
  using W = engine::cuda::Weight<T>;
  std::vector<uint8_t> buf(row.size() + 2);
  std::memcpy(buf.data() + 2, row.data(), row.size());
  const uint8_t* r = buf.data() + 2;
  for (int64_t g = 0; g < n / W::kGroup; ++g) {
    float out[W::kGroup + 1];
    out[W::kGroup] = 12345.0f;  // a guard: group() writes kGroup elements, no more
    W::group(r, g, out);
    for (int e = 0; e < W::kGroup; ++e) {
      const int64_t i = W::kGroup * g + e;
      const float want = W::at(r, i);
      if (!same(out[e], want)) {
        ADD_FAILURE() << engine::dtype_name(T) << " " << what << ": group " << g << " element " << e << " is "
                      << out[e] << " (bits 0x" << std::hex << std::bit_cast<uint32_t>(out[e]) << "), at(" << std::dec
                      << i << ") gives " << want << " (bits 0x" << std::hex << std::bit_cast<uint32_t>(want) << ")";
        return;
      }
    }
    if (out[W::kGroup] != 12345.0f) {
      ADD_FAILURE() << engine::dtype_name(T) << " " << what << ": group " << g << " wrote past kGroup elements";
      return;
    }
  }
}

// Float rows worth quantizing: ordinary, tiny and large scales, zeros, an outlier, and magnitudes
// that overflow f16 (infinite scales in the quantized blocks).
std::vector<std::pair<std::string, std::vector<float>>> float_rows(int64_t n) {
  const auto size = static_cast<size_t>(n);
  std::vector<std::pair<std::string, std::vector<float>>> rows;
  for (uint32_t seed = 1; seed <= 3; ++seed)
    rows.emplace_back("normal seed " + std::to_string(seed), random_floats(size, seed));
  rows.emplace_back("tiny", random_floats(size, 4, 1e-6f));
  rows.emplace_back("large", random_floats(size, 5, 3e4f));
  rows.emplace_back("beyond f16", random_floats(size, 6, 1e6f));
  rows.emplace_back("zeros", std::vector<float>(size, 0.0f));
  rows.emplace_back("constant", std::vector<float>(size, -65504.0f));
  auto outlier = random_floats(size, 7);
  outlier[size / 3] = 1e5f;
  rows.emplace_back("outlier", outlier);
  return rows;
}

template <DType T>
std::vector<uint8_t> quantized(const std::vector<float>& x) {
  std::vector<uint8_t> q(engine::row_bytes(T, static_cast<int64_t>(x.size())));
  engine::quantize_row(T, x.data(), q.data(), static_cast<int64_t>(x.size()));
  return q;
}

// Random bytes: every byte pattern is a valid block, including encodings the quantizers never
// write (nan, infinite and subnormal scales, every scale and mask bit).
std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

template <typename>
class CudaDequantWeight : public ::testing::Test {};

template <DType T>
using Tag = std::integral_constant<DType, T>;
using WeightTypes = ::testing::Types<Tag<DType::F32>, Tag<DType::F16>, Tag<DType::BF16>, Tag<DType::Q4_0>,
                                     Tag<DType::Q4_1>, Tag<DType::Q5_0>, Tag<DType::Q5_1>, Tag<DType::Q8_0>,
                                     Tag<DType::Q2_K>, Tag<DType::Q3_K>, Tag<DType::Q4_K>, Tag<DType::Q5_K>,
                                     Tag<DType::Q6_K>>;

// Names the instantiations by dtype ("CudaDequantWeight/q4_K.…").
struct DTypeName {
  template <typename Tag>
  static std::string GetName(int) {
    return std::string(engine::dtype_name(Tag::value));
  }
};

TYPED_TEST_SUITE(CudaDequantWeight, WeightTypes, DTypeName);

}  // namespace

TEST(CudaDequant, HalfToFloatMatchesFp16ToFp32ForEveryHalf) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float got = engine::cuda::half_to_float(static_cast<uint16_t>(h));
    const float want = engine::fp16_to_fp32(static_cast<uint16_t>(h));
    ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want)) << "half 0x" << std::hex << h;
  }
}

TYPED_TEST(CudaDequantWeight, BlockShapeMatchesDTypeInfo) {
  constexpr DType T = TypeParam::value;
  EXPECT_EQ(engine::cuda::Weight<T>::kBlockElems, engine::dtype_info(T).block_size);
  EXPECT_EQ(static_cast<size_t>(engine::cuda::Weight<T>::kBlockBytes), engine::dtype_info(T).block_bytes);
}

TYPED_TEST(CudaDequantWeight, MatchesDequantizeRowOnQuantizedRows) {
  constexpr DType T = TypeParam::value;
  for (const auto& [what, x] : float_rows(kRowElems<T>)) expect_matches_cpu<T>(quantized<T>(x), what);
}

TYPED_TEST(CudaDequantWeight, MatchesDequantizeRowOnRandomBytes) {
  constexpr DType T = TypeParam::value;
  for (uint32_t seed = 1; seed <= 8; ++seed)
    expect_matches_cpu<T>(random_bytes(engine::row_bytes(T, kRowElems<T>), seed),
                          "random bytes seed " + std::to_string(seed));
}

// Elements per group() test row: whole groups, several blocks (six F32/F16/BF16 groups, as kRowElems'
// 45 is not a whole number of them).
template <DType T>
constexpr int64_t kGroupRowElems = engine::cuda::Weight<T>::kBlockElems == 1 ? 48 : kRowElems<T>;

TYPED_TEST(CudaDequantWeight, GroupMatchesAt) {
  constexpr DType T = TypeParam::value;
  using W = engine::cuda::Weight<T>;
  static_assert(W::kBlockElems % W::kGroup == 0 || W::kGroup % W::kBlockElems == 0);
  EXPECT_EQ(W::kGroup, W::kBlockElems == 1 ? 8 : 32);
  if (W::kBlockElems > 1) {
    EXPECT_EQ(W::kBlockElems % W::kGroup, 0);
  }
  constexpr int64_t n = kGroupRowElems<T>;
  ASSERT_EQ(n % W::kGroup, 0);
  for (const auto& [what, x] : float_rows(n)) expect_groups_match_at<T>(quantized<T>(x), n, what);
  for (uint32_t seed = 1; seed <= 8; ++seed)
    expect_groups_match_at<T>(random_bytes(engine::row_bytes(T, n), seed), n,
                              "random bytes seed " + std::to_string(seed));
}
