#pragma once
// Weights regrouped once, in the CPU backend's copy of them, for its SIMD kernels: each group of kPackRows rows
// stores block i of all its rows together, so a multiply streams one run of memory instead of
// kPackRows interleaved rows, and the kernels load registers without transposing. Same bytes,
// same size; only their order changes. Per group and block index:
//   Q8_0: the kPackRows f16 scales, then for j = 0..7 the j-th 4 bytes of each row's levels.
//   Q4_0: the kPackRows f16 scales, then for j = 0..3 the j-th 4 bytes of each row's nibbles.
//   Q4_1: the kPackRows f16 scales, the kPackRows f16 mins, then the nibbles as Q4_0's.
//   Q5_0, Q5_1: as Q4_0, Q4_1, the rows' qh words first among their dwords (j = 0..4).
//   Q2_K: for c = 0..20 the c-th 4 bytes of each row's super-block.
//   Q3_K: rows in pairs; per pair the two rows' 32-byte pieces of hmask then qs alternate, then
//         their 12 scale bytes, then their two d.
//   Q4_K: for c = 0..35 the c-th 4 bytes of each row's super-block.
//   Q5_K: for c = 0..3 the c-th 4 bytes (d and dmin, the scales) of each row's super-block as
//         Q4_K's, then the rows in pairs; per pair the two rows' 32-byte pieces of qh then qs
//         alternate.
//   Q6_K: rows in pairs; per pair the two rows' 32-byte pieces of ql then qh alternate, then
//         their 16 scales, then their two d.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/graph.h"

namespace engine::cpu {

constexpr int64_t kPackRows = 16;

// Long rows: a decode product reads a group's whole row of blocks between two uses of an
// activation block, and past L1's size the activation leaves L1 each time (on the Zen 5 of
// docs/benchmarks.md products on rows of 8192 streamed 10-13 % slower than on rows of 2048).
// Where a group's row outgrows long_group_bytes(), the weight's groups lie in runs of
// kChunkGroups, chunk by chunk: chunk c of every group of the run (blocks [c * chunk_blocks,
// ...), the last chunk shorter), then chunk c + 1. A one-column product walks a run in that
// order: one stream, each activation chunk read by the run's groups while it is in L1.
constexpr size_t kPackChunkBytes = 16 * 1024;  // a group's blocks in one chunk, about
constexpr int64_t kChunkGroups = 4;
constexpr int64_t kRunRows = kChunkGroups * kPackRows;

// This machine's L1 data cache as the system reports it (32 KiB on Zen 4, 48 KiB on Zen 5 and
// recent Xeons), 48 KiB where it reports none.
size_t long_group_bytes();

// The rows a packed weight is split in (packing, a decode product's threads): whole runs where
// it is chunked, else whole groups.
inline int64_t packed_rows_unit(int64_t chunk_blocks) { return chunk_blocks > 0 ? kRunRows : kPackRows; }

// The blocks of a chunk for a 2-D weight of `type` with rows of k elements, `rows` rows; 0 where
// its groups lie whole (short rows, rows not whole runs, and the dtypes whose one-column kernels
// walk groups whole).
int64_t packed_chunk_blocks(DType type, int64_t k, int64_t rows);
int64_t packed_chunk_blocks(const Tensor& w);  // 0 for 3-D (experts)
// The same for a backend's copy of w, which it `packed` or keeps in the file layout (0).
inline int64_t held_chunk_blocks(const Tensor& w, bool packed) { return packed ? packed_chunk_blocks(w) : 0; }

// Byte offset of block i of the group holding row r (counted from a run's first row) in a
// packed weight of rows row_bytes long and blocks of block_bytes, chunked as chunk_blocks says.
inline size_t packed_block_offset(int64_t r, int64_t i, size_t block_bytes, size_t row_bytes, int64_t chunk_blocks) {
  const int64_t group = r / kPackRows;
  const auto block = static_cast<int64_t>(kPackRows * block_bytes);
  if (chunk_blocks == 0) return static_cast<size_t>(group * kPackRows * static_cast<int64_t>(row_bytes) + i * block);
  const int64_t blocks = static_cast<int64_t>(row_bytes / block_bytes);
  const int64_t run = group / kChunkGroups, g = group % kChunkGroups, c0 = i / chunk_blocks * chunk_blocks;
  const int64_t len = std::min(chunk_blocks, blocks - c0);
  return static_cast<size_t>(run * kRunRows * static_cast<int64_t>(row_bytes) + (c0 * kChunkGroups + g * len + i - c0) * block);
}

// True for the dtypes with a packed layout (above).
bool has_packed_layout(DType type);
// True when `w` (a model weight) has a packed layout: a legacy or K-quant type, dense, rows a
// multiple of kPackRows; 2-D, or 3-D experts (each expert's rows whole groups).
bool packable(const Tensor& w);


// Regroups `rows` rows of k elements at data into the packed layout, chunked as chunk_blocks
// says (packed_chunk_blocks of the whole weight; rows then whole runs, else whole groups).
void pack_rows(DType type, int64_t k, int64_t rows, void* data, int64_t chunk_blocks = 0);

// The packable weights of the graph that only products (is_mat_mul) read as their weight
// operand, less those `packed` says are packed already: pack_rows each, then remember it packed.
std::vector<Tensor*> weights_to_pack(const Graph& graph, const std::function<bool(const Tensor&)>& packed);

// The packed group of rows [r0, r0 + kPackRows) (r0 from a run's first row at `packed`, chunked as
// chunk_blocks says) back in the file layout at out, rows row_bytes apart.
void unpack_group(DType type, int64_t k, const char* packed, int64_t r0, int64_t chunk_blocks, char* out);

}  // namespace engine::cpu
