#include "cpu/repack.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <unordered_set>
#include <vector>

#include "engine/error.h"
#include "engine/quants.h"
#include "quant_formats.h"

namespace engine::cpu {
namespace {

constexpr size_t kScaleBytes = kPackRows * sizeof(uint16_t);

// The K-quant layouts: the block's first `dwords` 4-byte pieces of the group's rows side by side
// (a row per 32-bit lane), then the rows in pairs: `pieces` 32-byte pieces of the block from byte
// pieces_from on, the two rows' pieces alternating, then each tail field of the two side by side.
struct KLayout {
  size_t dwords, pieces_from, pieces;
  struct Field {
    size_t from, size;
  } tail[2];
};
constexpr KLayout kQ2KLayout{21, 0, 0, {}};
constexpr KLayout kQ3KLayout{0, 0, 3, {{96, 12}, {108, 2}}};  // hmask, qs; scales; d
constexpr KLayout kQ4KLayout{36, 0, 0, {}};
constexpr KLayout kQ5KLayout{4, 16, 5, {}};                 // d, dmin, scales; qh, qs
constexpr KLayout kQ6KLayout{0, 0, 6, {{192, 16}, {208, 2}}};  // ql, qh; scales; d

const KLayout* k_layout(DType type) {
  switch (type) {
    case DType::Q2_K: return &kQ2KLayout;
    case DType::Q3_K: return &kQ3KLayout;
    case DType::Q4_K: return &kQ4KLayout;
    case DType::Q5_K: return &kQ5KLayout;
    case DType::Q6_K: return &kQ6KLayout;
    default: return nullptr;
  }
}

// Moves the group of rows [r0, r0 + kPackRows) of a packed weight at `packed` (chunked as
// chunk_blocks says) between the layouts: to_packed, its file rows `rows` -> there; else back.
void convert_group(DType type, int64_t k, char* rows, char* packed, int64_t r0, int64_t chunk_blocks, bool to_packed) {
  const size_t bb = dtype_info(type).block_bytes, row = row_bytes(type, k);
  const auto move = [&](char* file, char* pack, size_t n) { std::memcpy(to_packed ? pack : file, to_packed ? file : pack, n); };
  for (int64_t i = 0; i < k / dtype_info(type).block_size; ++i) {
    char* pack = packed + packed_block_offset(r0, i, bb, row, chunk_blocks);
    for (int64_t r = 0; r < kPackRows; ++r) {
      char* file = rows + r * row + i * bb;
      if (const KLayout* kl = k_layout(type)) {
        for (size_t c = 0; c < kl->dwords; ++c) move(file + 4 * c, pack + (c * kPackRows + r) * 4, 4);
        const size_t pair_bytes = 2 * (bb - 4 * kl->dwords);
        char* pair = pack + kl->dwords * kPackRows * 4 + (r / 2) * pair_bytes;
        const size_t p = r % 2;
        for (size_t j = 0; j < kl->pieces; ++j) move(file + kl->pieces_from + 32 * j, pair + 64 * j + 32 * p, 32);
        size_t at = 64 * kl->pieces;
        for (const auto& field : kl->tail) {
          move(file + field.from, pair + at + field.size * p, field.size);
          at += 2 * field.size;
        }
        continue;
      }
      // Q4_0, Q5_0, Q8_0: the scale, then dword j of the rest; Q4_1, Q5_1: the scale, the min,
      // then the same.
      const int halves = type == DType::Q4_1 || type == DType::Q5_1 ? 2 : 1;
      for (int h = 0; h < halves; ++h) move(file + h * sizeof(uint16_t), pack + h * kScaleBytes + r * sizeof(uint16_t), sizeof(uint16_t));
      char* levels = file + halves * sizeof(uint16_t);
      for (size_t j = 0; j < (bb - halves * sizeof(uint16_t)) / 4; ++j)
        move(levels + 4 * j, pack + halves * kScaleBytes + (j * kPackRows + r) * 4, 4);
    }
  }
}

}  // namespace

bool has_packed_layout(DType type) {
  switch (type) {
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q8_0: return true;
    default: return k_layout(type) != nullptr;
  }
}

bool packable(const Tensor& w) {
  return has_packed_layout(w.type) && w.has(kWeight) && w.ne[1] % kPackRows == 0 && w.ne[3] == 1 && w.is_contiguous();
}

size_t long_group_bytes() {
  static const size_t bytes = [] {
    const long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    return l1 > 0 ? static_cast<size_t>(l1) : size_t{48 * 1024};
  }();
  return bytes;
}

int64_t packed_chunk_blocks(DType type, int64_t k, int64_t rows) {
  switch (type) {
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q4_K: break;
    default: return 0;
  }
  const size_t group_row = kPackRows * row_bytes(type, k);
  if (group_row <= long_group_bytes() || rows % kRunRows != 0) return 0;
  const int64_t blocks = k / dtype_info(type).block_size;
  const auto chunks = static_cast<int64_t>((group_row + kPackChunkBytes - 1) / kPackChunkBytes);
  return (blocks + chunks - 1) / chunks;
}

int64_t packed_chunk_blocks(const Tensor& w) { return w.ne[2] == 1 ? packed_chunk_blocks(w.type, w.ne[0], w.ne[1]) : 0; }

void pack_rows(DType type, int64_t k, int64_t rows, void* data, int64_t chunk_blocks) {
  if (!has_packed_layout(type)) throw Error("pack_rows: no packed layout for " + std::string(dtype_name(type)));
  const int64_t unit = packed_rows_unit(chunk_blocks);
  if (rows % unit != 0) throw Error("pack_rows: " + std::to_string(rows) + " rows are not whole groups of " + std::to_string(unit));
  const size_t unit_bytes = static_cast<size_t>(unit) * row_bytes(type, k), group_bytes = kPackRows * row_bytes(type, k);
  std::vector<char> file(unit_bytes);
  for (int64_t u = 0; u < rows / unit; ++u) {
    char* packed = static_cast<char*>(data) + u * unit_bytes;
    std::memcpy(file.data(), packed, unit_bytes);
    for (int64_t r0 = 0; r0 < unit; r0 += kPackRows)
      convert_group(type, k, file.data() + r0 / kPackRows * group_bytes, packed, r0, chunk_blocks, true);
  }
}

std::vector<Tensor*> weights_to_pack(const Graph& graph, const std::function<bool(const Tensor&)>& packed) {
  const auto candidate = [&](const Tensor* node) {
    const Tensor* w = is_mat_mul(node->op) ? node->src[0] : nullptr;
    return w && w->has(kWeight) && !packed(*w) && packable(*w);
  };
  // Every step graph comes here: most find nothing left to pack, and stop at this check.
  if (std::none_of(graph.nodes().begin(), graph.nodes().end(), candidate)) return {};
  // Weights read by anything but a product's weight operand keep the file layout.
  std::unordered_set<const Tensor*> other_readers;
  for (const Tensor* node : graph.nodes()) {
    if (node->view_src) other_readers.insert(node->view_src);
    for (int s = 0; s < kMaxSrc; ++s)
      if (node->src[s] && !(is_mat_mul(node->op) && s == 0)) other_readers.insert(node->src[s]);
  }
  std::vector<Tensor*> out;
  for (const Tensor* node : graph.nodes()) {
    if (!candidate(node)) continue;
    Tensor* w = node->src[0];
    if (!other_readers.count(w) && std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
  }
  return out;
}

void unpack_group(DType type, int64_t k, const char* packed, int64_t r0, int64_t chunk_blocks, char* out) {
  if (!has_packed_layout(type)) throw Error("unpack_group: no packed layout for " + std::string(dtype_name(type)));
  convert_group(type, k, out, const_cast<char*>(packed), r0, chunk_blocks, false);
}

}  // namespace engine::cpu
