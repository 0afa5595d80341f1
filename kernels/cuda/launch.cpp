// The dispatch over the op enum: each node's parameters from its typed op parameters, then the
// kernel family that runs it.
#include "cuda/launch.h"

#include <cmath>
#include <string>

#include "engine/error.h"
#include "engine/op_params.h"

namespace engine::cuda {

Launch make_launch(const Tensor& node) {
  Launch l;
  l.op = node.op;
  l.src0_type = node.src[0] ? node.src[0]->type : DType::F32;
  l.dst_type = node.op == Op::CPY ? node.src[1]->type : node.type;
  switch (node.op) {
    case Op::SCALE:
    case Op::SOFT_MAX:
      l.params[0] = scale_param(node);
      l.flags[0] = node.op == Op::SOFT_MAX && node.src[1] != nullptr;
      break;
    case Op::RMS_NORM:
    case Op::NORM: l.params[0] = eps_param(node); break;
    case Op::ROPE: {
      const RopeParams p = rope_params(node);
      l.params[0] = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));  // in float, as the CPU backend
      l.params[1] = p.freq_scale;
      l.params[2] = p.attn_factor;
      l.flags[0] = p.n_rot;
      l.flags[1] = p.mode;
      l.flags[2] = node.src[2] != nullptr;
      break;
    }
    default: break;
  }
  return l;
}

Launch make_attention_launch(const Tensor& soft_max) {
  Launch l;
  l.kernel = Kernel::kAttention;
  l.params[0] = scale_param(soft_max);
  l.flags[0] = soft_max.src[1] != nullptr;
  return l;
}

void launch(const Launch& l, cudaStream_t stream) {
  if (l.kernel == Kernel::kAttention) return launch_attention(l, stream);
  switch (l.op) {
    case Op::MUL_MAT: return launch_mul_mat(l, stream);
    case Op::MUL_MAT_ID: return launch_mul_mat_id(l, stream);
    case Op::GET_ROWS: return launch_get_rows(l, stream);
    case Op::ADD:
    case Op::MUL:
    case Op::DIV: return launch_binary(l, stream);
    case Op::SUM_ROWS: return launch_sum_rows(l, stream);
    case Op::ARGSORT: return launch_argsort(l, stream);
    case Op::SCALE:
    case Op::SILU:
    case Op::GELU: return launch_unary(l, stream);
    case Op::CONT:
    case Op::CPY: return launch_copy(l, stream);
    case Op::RMS_NORM:
    case Op::NORM: return launch_norm(l, stream);
    case Op::SOFT_MAX: return launch_soft_max(l, stream);
    case Op::ROPE: return launch_rope(l, stream);
    default: throw Error("cuda backend: no kernel for " + std::string(op_name(l.op)));
  }
}

}  // namespace engine::cuda
