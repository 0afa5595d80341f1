#pragma once
// One kernel launch of the CUDA backend: a node's tensors as device addresses with shapes and
// byte strides, and the op's parameters; make_launch fills it from the node, launch dispatches
// over the op enum to the kernel families (one .cu file each).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "engine/tensor.h"

namespace engine::cuda {

struct TensorArg {
  char* data = nullptr;  // element 0 on the device
  int64_t ne[4] = {1, 1, 1, 1};
  int64_t nb[4] = {};  // byte strides
};

// The op of a launch: a node's, or the fused attention of kq, SOFT_MAX and kqv.
enum class Kernel { kNode, kAttention };

struct Launch {
  Kernel kernel = Kernel::kNode;
  Op op = Op::NONE;
  DType src0_type = DType::F32;
  DType dst_type = DType::F32;
  TensorArg src[4];  // src0, src1, src2, and the attention's mask
  TensorArg dst;
  float params[4] = {};  // scale, eps; rope: theta scale, freq_scale, attn_factor
  int32_t flags[4] = {};  // rope: n_rot, mode, has factors; soft_max and attention: has mask
};

// The launch of a node, or of the attention around `soft_max` (its scale, its mask), addresses left unset.
Launch make_launch(const Tensor& node);
Launch make_attention_launch(const Tensor& soft_max);
// Queues the launch's kernel on `stream`; throws Error where a shape exceeds a grid.
void launch(const Launch& l, cudaStream_t stream);

// The kernel families (*.cu).
void launch_mul_mat(const Launch& l, cudaStream_t stream);    // MUL_MAT
void launch_mul_mat_id(const Launch& l, cudaStream_t stream); // MUL_MAT_ID
void launch_get_rows(const Launch& l, cudaStream_t stream);   // GET_ROWS
void launch_binary(const Launch& l, cudaStream_t stream);     // ADD, MUL, DIV
void launch_sum_rows(const Launch& l, cudaStream_t stream);   // SUM_ROWS
void launch_argsort(const Launch& l, cudaStream_t stream);    // ARGSORT
void launch_unary(const Launch& l, cudaStream_t stream);      // SCALE, SILU, GELU
void launch_copy(const Launch& l, cudaStream_t stream);       // CONT, CPY
void launch_norm(const Launch& l, cudaStream_t stream);       // RMS_NORM, NORM
void launch_soft_max(const Launch& l, cudaStream_t stream);   // SOFT_MAX
void launch_rope(const Launch& l, cudaStream_t stream);       // ROPE
void launch_attention(const Launch& l, cudaStream_t stream);  // kq, SOFT_MAX, kqv in one
// Score positions one attention launch holds for a query (its shared memory on this device).
int64_t attention_max_kv(int device);

}  // namespace engine::cuda
