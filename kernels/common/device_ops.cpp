#include "common/device_ops.h"

#include <algorithm>
#include <string>

#include "common/graph_walk.h"
#include "engine/op_params.h"

namespace engine {
namespace {

bool is(const Tensor* t, DType type) { return t && t->type == type; }
bool is_f32_or_absent(const Tensor* t) { return !t || t->type == DType::F32; }
bool is_weight_type(DType t) {
  const std::vector<DType>& all = device_weight_types();
  return std::find(all.begin(), all.end(), t) != all.end();
}

}  // namespace

const std::vector<DType>& device_weight_types() {
  static const std::vector<DType> types = {DType::F32,  DType::F16,  DType::BF16, DType::Q4_0, DType::Q4_1,
                                           DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::Q2_K, DType::Q3_K,
                                           DType::Q4_K, DType::Q5_K, DType::Q6_K};
  return types;
}

bool device_supports(const Tensor& node) {
  const Tensor* a = node.src[0];
  const Tensor* b = node.src[1];
  if (op_info(node.op).is_view || node.op == Op::NONE) return true;
  if (node.op == Op::ARGSORT) return node.type == DType::I32 && is(a, DType::F32) && a->ne[0] <= kDeviceArgsortMax;
  if (!a || (node.op != Op::CPY && node.op != Op::CONT && node.type != DType::F32)) return false;
  switch (node.op) {
    case Op::GET_ROWS: return is_weight_type(a->type) && is(b, DType::I32);
    case Op::MUL_MAT: return is_weight_type(a->type) && is(b, DType::F32);
    case Op::MUL_MAT_ID: return is_weight_type(a->type) && is(b, DType::F32) && is(node.src[2], DType::I32);
    case Op::ADD:
    case Op::MUL:
    case Op::DIV: return is(a, DType::F32) && is(b, DType::F32);
    case Op::SUM_ROWS: return is(a, DType::F32);
    case Op::SCALE:
    case Op::RMS_NORM:
    case Op::NORM:
    case Op::SILU:
    case Op::GELU: return is(a, DType::F32);
    case Op::ROPE: {
      const int mode = rope_params(node).mode;
      return is(a, DType::F32) && is(b, DType::I32) && is_f32_or_absent(node.src[2]) && (mode == kRopeNormal || mode == kRopeNeox);
    }
    case Op::SOFT_MAX: return is(a, DType::F32) && is_f32_or_absent(b);
    case Op::CONT: return is(a, DType::F32) && (node.type == DType::F32 || node.type == DType::F16);
    case Op::CPY: return is(a, DType::F32) && b && (b->type == DType::F32 || b->type == DType::F16);
    default: return false;
  }
}

Error unsupported_node(const Tensor& node, std::string_view backend) {
  std::string dtypes;
  for (const Tensor* s : node.src)
    if (s) dtypes += (dtypes.empty() ? "" : ", ") + std::string(dtype_name(s->type));
  return Error(std::string(backend) + " backend does not support " + std::string(op_name(node.op)) + " on " + dtypes +
               " (node '" + node.name + "')");
}

bool fuses_device_attention(const std::vector<Tensor*>& nodes, size_t i, const Plan& plan, int64_t max_kv) {
  if (!attention_chain(nodes, i)) return false;
  const Tensor* kq = nodes[i];
  const Tensor* soft_max = nodes[i + 1];
  const Tensor* kqv = nodes[i + 2];
  const Tensor* k = kq->src[0];
  const Tensor* q = kq->src[1];
  const Tensor* v = kqv->src[0];
  const Tensor* mask = soft_max->src[1];
  const int64_t n_kv = kq->ne[0], n_tokens = kq->ne[1], heads = kq->ne[2];
  if (!is(k, DType::F16) || !is(v, DType::F16) || !is(q, DType::F32) || q->nb[0] != sizeof(float)) return false;
  if (n_kv > max_kv || kq->ne[3] != 1 || k->ne[3] != 1 || v->ne[3] != 1 || q->ne[3] != 1) return false;
  if (soft_max->ne[0] != n_kv || v->ne[0] != n_kv || kqv->ne[1] != n_tokens || kqv->ne[2] != heads) return false;
  if (heads % k->ne[2] != 0 || heads % v->ne[2] != 0 || k->nb[0] != 2 || v->nb[0] != 2) return false;
  if (mask && (!is(mask, DType::F32) || mask->nb[0] != sizeof(float) || mask->ne[0] < n_kv || mask->ne[1] < n_tokens))
    return false;
  for (const Tensor* input : {k, q, v, mask})
    if (input && plan.overlap(kqv, input)) return false;
  return true;
}

}  // namespace engine
