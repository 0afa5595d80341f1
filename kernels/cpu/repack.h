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
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/graph.h"

namespace engine::cpu {

constexpr int64_t kPackRows = 16;

// True for the dtypes with a packed layout (above).
bool has_packed_layout(DType type);
// True when `w` (a model weight) has a packed layout: a legacy or K-quant type, dense, rows a
// multiple of kPackRows; 2-D, or 3-D experts (each expert's rows whole groups).
bool packable(const Tensor& w);


// Regroups `rows` rows of k elements (rows a multiple of kPackRows) at data into the packed layout.
void pack_rows(DType type, int64_t k, int64_t rows, void* data);

// The packable weights of the graph that only products (is_mat_mul) read as their weight
// operand, less those `packed` says are packed already: pack_rows each, then remember it packed.
std::vector<Tensor*> weights_to_pack(const Graph& graph, const std::function<bool(const Tensor&)>& packed);

// One packed group (kPackRows rows of k elements) back in the file layout, rows row_bytes apart.
void unpack_group(DType type, int64_t k, const char* group, char* out);

}  // namespace engine::cpu
