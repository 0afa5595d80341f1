// A dot tile's work memory: dot_tile_work_size_at is exactly what dot_tile_at takes, for every
// weight dtype, order and instruction set, in tile shapes mul_mat and the fused attention give it
// (packed weights included): the tile runs on that many bytes and throws on a piece fewer; and
// dot_tile_work_size covers whichever form a one-column tile runs on (decode_tuning.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpu/cpu_features.h"
#include "cpu/host_buffer.h"
#include "cpu/repack.h"
#include "cpu/vec_dot.h"
#include "cpu/work_memory.h"
#include "engine/error.h"

namespace engine::cpu {
namespace {

// Restores the default level when a test ends.
struct LevelGuard {
  ~LevelGuard() { set_cpu_features_override(false); }
};

// A tile of zero weights and activations (what it takes does not depend on their values).
struct ZeroTile {
  std::vector<char> w, a;
  std::vector<float> out;
  DotTile tile;

  ZeroTile(DType type, int64_t n, int64_t rows, int64_t cols, bool packed)
      : w(row_bytes(type, n) * rows), a(row_bytes(vec_dot_type(type), n) * cols), out(rows * cols) {
    tile = DotTile{n,     w.data(), row_bytes(type, n), rows, a.data(), row_bytes(vec_dot_type(type), n), cols,
                   reinterpret_cast<char*>(out.data()), sizeof(float), sizeof(float) * rows, packed};
  }

  void run(SimdLevel level, DType type, DotOrder order, size_t work_size) {
    HostBuffer work;
    work.reserve(work_size);
    tile.work = static_cast<char*>(work.data());
    tile.work_size = work_size;
    dot_tile_at(level, type, order, tile);
  }
};

TEST(TileWork, DotTileWorkSizeIsWhatTheTileTakes) {
  LevelGuard guard;
  const DType types[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                         DType::Q8_0, DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K};
  // rows x cols: decode rows and heads, prefill chunks, causal parts, the fused attention's keys.
  const int64_t shapes[][2] = {{1, 1}, {16, 1}, {32, 4}, {13, 5}, {128, 64}, {48, 3}};
  const SimdLevel levels[] = {SimdLevel::kScalar, SimdLevel::kAvx2, SimdLevel::kAvx2Vnni, SimdLevel::kAvx512, SimdLevel::kAvx512Bf16};
  int checked = 0;
  for (DType type : types)
    for (int64_t n : {64, 128, 512, 768})
      for (const auto& shape : shapes)
        for (bool packed : {false, true}) {
          if (n % dtype_info(type).block_size != 0 || (packed && (!has_packed_layout(type) || shape[0] % kPackRows != 0))) continue;
          for (DotOrder order : {DotOrder::kRow, DotOrder::kRowPadded, DotOrder::kBatch})
            for (SimdLevel level : levels) {
              if (level > cpu_simd_level()) continue;
              set_simd_level_cap(level);
              ZeroTile t(type, n, shape[0], shape[1], packed);
              const size_t need = dot_tile_work_size_at(level, type, order, t.tile);
              const std::string what = std::string(dtype_name(type)) + (packed ? " packed" : "") + " n=" + std::to_string(n) +
                                       " " + std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + " order " +
                                       std::to_string(static_cast<int>(order)) + " level " + std::to_string(static_cast<int>(level));
              EXPECT_EQ(need % kWorkAlign, 0u) << what;
              EXPECT_NO_THROW(t.run(level, type, order, need)) << what;
              if (need > 0) {
                EXPECT_THROW(t.run(level, type, order, need - kWorkAlign), Error) << what;
              }
              if (shape[1] == 1 && level >= SimdLevel::kAvx2) {  // decode's tile fits every form up to the level
                for (SimdLevel form : {SimdLevel::kAvx2, SimdLevel::kAvx2Vnni}) {
                  if (form <= level) {
                    EXPECT_GE(dot_tile_work_size(type, order, t.tile), dot_tile_work_size_at(form, type, order, t.tile)) << what;
                  }
                }
                EXPECT_GE(dot_tile_work_size(type, order, t.tile), need) << what;
              }
              checked += need > 0;
            }
        }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace engine::cpu
