#pragma once
// How each op runs on the device: the shader variant, the workgroup grid, and the record the
// shader reads (shaders/common.glsl's Dispatch), filled from the node with the typed op
// parameters (engine/op_params.h). One dispatch per node, but for attention's three nodes,
// which run as one; the dispatch over the Op enum is plan_dispatch.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/plan.h"
#include "engine/tensor.h"

namespace engine::vulkan {

// Mirrors shaders/common.glsl's Dispatch, std430.
struct DispatchRecord {
  uint32_t ne[4][4];   // src0, src1, src2, dst
  uint32_t nb[4][4];   // byte strides
  uint32_t offset[4];  // byte offsets inside the bindings (set when binding); src0's travels in the push constant
  int32_t params[8];   // the op's parameters in the shader's order
  uint32_t extra[4];
  uint32_t src3[4];    // a fourth source: byte offset inside its binding (set when binding), nb1..nb3
};
static_assert(sizeof(DispatchRecord) == 208);

// The tensors a dispatch binds, in binding order: src0, src1, src2, dst, then the fourth
// source (binding 5); absent ones bind an empty buffer.
constexpr int kDispatchTensors = 5;

// The kernels a MUL_MAT runs with: mul_mat.comp (register blocks), mul_mat_vec.comp (a row per
// workgroup) or mul_mat_tiled.comp (shared-memory tiles, workgroups over row and column tiles).
enum class MulMatKernel { kRegisters, kSplitRows, kTiles };

struct DispatchPlan {
  std::string shader;  // a variant of shaders/*.comp ("mul_mat_q4_0")
  MulMatKernel mul_mat = MulMatKernel::kRegisters;  // a MUL_MAT's kernel
  uint32_t groups[3] = {1, 1, 1};
  DispatchRecord record{};
  const Tensor* tensors[kDispatchTensors] = {};
};

// Which kernels a device runs the products with.
struct KernelChoice {
  // GPUs: a row per workgroup for few columns (decode), shared-memory tiles from 16 columns
  // (prefill), f16 and bf16 weights excepted (mul_mat.comp keeps the CPU's lane order). A
  // software device runs mul_mat.comp's register blocks throughout: there a workgroup's
  // invocations are SIMD lanes of one CPU thread, shared memory is host memory gathered lane by
  // lane, and the register blocks ran a 2048 x 8192 Q4_0 product 3.8x faster than the tiles
  // (64 columns) and 34x faster than split rows (one column).
  bool gpu_products = false;
  // Split rows add their partial sums with subgroup arithmetic, else through a shared-memory tree.
  bool subgroup_sums = false;
};
// The device's choice. The environment variable ENGINE_VULKAN_KERNELS overrides it: "gpu",
// "gpu-shared-sums" (no subgroup arithmetic) or "software"; Error on any other value.
KernelChoice kernel_choice(const DeviceInfo& device, bool subgroup_arithmetic);

// The dispatch of a supported compute node. Throws Error where a shape exceeds what 32-bit
// shader indices reach.
DispatchPlan plan_dispatch(const Tensor& node, const KernelChoice& choice);

// A range of src0 rows [first_row, row_end) one dispatch of a node covers, and its grid. A
// MUL_MAT or GET_ROWS whose weight matrix spans more than one binding reaches (`max_range`
// bytes, bindings starting at multiples of `alignment`) runs as several such dispatches.
struct RowChunk {
  uint32_t first_row, row_end;
  uint32_t groups[3];
};
// The node's chunks: one covering every row where src0 fits one binding (or the node reads no
// matrix it could split, and binding it reports what does not fit).
std::vector<RowChunk> row_chunks(const Tensor& node, const DispatchPlan& plan, uint64_t max_range, uint64_t alignment);

// Whether kq -> soft_max -> kqv (nodes i, i + 1, i + 2) run as one attention dispatch: their
// shapes are an attention over an f16 KV cache whose score rows fit the shader's shared memory
// (and it the device's `shared_bytes`), nothing else reads the scores or probabilities, and
// the plan puts kqv over none of its inputs, which other workgroups still read while it is
// written.
bool fuses_attention(const std::vector<Tensor*>& nodes, size_t i, const Plan& plan, size_t shared_bytes);
// That dispatch: bindings K, Q, V, kqv and the mask.
DispatchPlan plan_attention(const Tensor& kq, const Tensor& soft_max, const Tensor& kqv);

}  // namespace engine::vulkan
