#include "cpu/repack.h"

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

// Moves one group between the layouts: to_packed, file rows `rows` -> `packed`; else back.
void convert_group(DType type, int64_t k, char* rows, char* packed, bool to_packed) {
  const size_t bb = dtype_info(type).block_bytes, row = row_bytes(type, k);
  const auto move = [&](char* file, char* pack, size_t n) { std::memcpy(to_packed ? pack : file, to_packed ? file : pack, n); };
  for (int64_t i = 0; i < k / dtype_info(type).block_size; ++i) {
    char* pack = packed + i * kPackRows * bb;
    for (int64_t r = 0; r < kPackRows; ++r) {
      char* file = rows + r * row + i * bb;
      if (type == DType::Q4_K) {  // dword c of each row side by side
        for (size_t c = 0; c < bb / 4; ++c) move(file + 4 * c, pack + (c * kPackRows + r) * 4, 4);
        continue;
      }
      if (type == DType::Q6_K) {  // row pairs, their fields interleaved 32 (scales 16, d 2) bytes at a time
        char* pair = pack + (r / 2) * 2 * bb;
        const int64_t p = r % 2;
        for (int j = 0; j < 6; ++j) move(file + 32 * j, pair + 64 * j + 32 * p, 32);  // ql[0..127], qh[0..63]
        move(file + 192, pair + 384 + 16 * p, 16);                                     // scales
        move(file + 208, pair + 416 + 2 * p, 2);                                       // d
        continue;
      }
      // Q4_0, Q8_0: the scale, then dword j of the levels; Q4_1: the scale, the min, then the same.
      const int halves = type == DType::Q4_1 ? 2 : 1;
      for (int h = 0; h < halves; ++h) move(file + h * sizeof(uint16_t), pack + h * kScaleBytes + r * sizeof(uint16_t), sizeof(uint16_t));
      char* levels = file + halves * sizeof(uint16_t);
      for (size_t j = 0; j < (bb - halves * sizeof(uint16_t)) / 4; ++j)
        move(levels + 4 * j, pack + halves * kScaleBytes + (j * kPackRows + r) * 4, 4);
    }
  }
}

}  // namespace

bool has_packed_layout(DType type) {
  return type == DType::Q4_0 || type == DType::Q4_1 || type == DType::Q8_0 || type == DType::Q4_K || type == DType::Q6_K;
}

bool packable(const Tensor& w) {
  return has_packed_layout(w.type) && w.has(kWeight) && w.ne[1] % kPackRows == 0 && w.ne[3] == 1 && w.is_contiguous();
}

void pack_rows(DType type, int64_t k, int64_t rows, void* data) {
  if (!has_packed_layout(type)) throw Error("pack_rows: no packed layout for " + std::string(dtype_name(type)));
  if (rows % kPackRows != 0) throw Error("pack_rows: " + std::to_string(rows) + " rows are not whole groups");
  const size_t group_bytes = kPackRows * row_bytes(type, k);
  std::vector<char> group(group_bytes);
  for (int64_t g = 0; g < rows / kPackRows; ++g) {
    char* file = static_cast<char*>(data) + g * group_bytes;
    std::memcpy(group.data(), file, group_bytes);
    convert_group(type, k, group.data(), file, true);
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

void unpack_group(DType type, int64_t k, const char* group, char* out) {
  if (!has_packed_layout(type)) throw Error("unpack_group: no packed layout for " + std::string(dtype_name(type)));
  convert_group(type, k, out, const_cast<char*>(group), false);
}

}  // namespace engine::cpu
