#pragma once
// How each op runs on the device: the shader variant, the workgroup grid, and the record the
// shader reads (shaders/common.glsl's Dispatch), filled from the node with the typed op
// parameters (engine/op_params.h). One dispatch per node; the dispatch over the Op enum is
// plan_dispatch.
#include <cstdint>
#include <string>

#include "engine/tensor.h"

namespace engine::vulkan {

// Mirrors shaders/common.glsl's Dispatch, std430.
struct DispatchRecord {
  uint32_t ne[4][4];   // src0, src1, src2, dst
  uint32_t nb[4][4];   // byte strides
  uint32_t offset[4];  // byte offsets inside the bindings (set when binding)
  int32_t params[8];   // the op's parameters in the shader's order
  uint32_t extra[4];
};
static_assert(sizeof(DispatchRecord) == 192);

struct DispatchPlan {
  std::string shader;  // a variant of shaders/*.comp ("mul_mat_q4_0")
  uint32_t groups[3] = {1, 1, 1};
  DispatchRecord record{};
};

// Whether a node of this op with these dtypes has a shader: the Vulkan backend's support table.
bool supports(const Tensor& node);
// The dispatch of a supported compute node. Throws Error where a shape exceeds what 32-bit
// shader indices reach.
DispatchPlan plan_dispatch(const Tensor& node);

}  // namespace engine::vulkan
