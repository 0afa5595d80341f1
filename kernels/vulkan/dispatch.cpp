#include "vulkan/dispatch.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "common/device_ops.h"
#include "cpu/vec_dot.h"
#include "engine/error.h"
#include "engine/op_params.h"

namespace engine::vulkan {
namespace {

// Largest workgroup count in one grid dimension every Vulkan device takes.
constexpr uint32_t kMaxGroups = 65535;

uint32_t narrow(int64_t v, const Tensor& node) {
  if (v < 0 || v > std::numeric_limits<uint32_t>::max())
    throw Error("vulkan backend: node '" + node.name + "' has a size past 32 bits (" + std::to_string(v) + ")");
  return static_cast<uint32_t>(v);
}

// `count` workgroups laid out as x * y, x within the device-wide limit.
void grid(DispatchPlan& d, int64_t count, const Tensor& node) {
  const uint32_t n = std::max<uint32_t>(1, narrow(count, node));
  d.groups[0] = std::min(n, kMaxGroups);
  d.groups[1] = (n + d.groups[0] - 1) / d.groups[0];
}

void describe(DispatchRecord& r, int slot, const Tensor* t) {
  if (!t) return;
  for (int d = 0; d < kMaxDims; ++d) {
    r.ne[slot][d] = narrow(t->ne[d], *t);
    r.nb[slot][d] = narrow(static_cast<int64_t>(t->nb[d]), *t);
  }
}

int32_t bits(float f) {
  int32_t i;
  std::memcpy(&i, &f, sizeof i);
  return i;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// mul_mat.comp's ORDER_*: the summation order of the CPU backend's dot products for f16 and
// bf16 weights, whose activations are rounded where a last-bit difference would show.
uint32_t dot_order_code(DType weight, int64_t k, int64_t rows, int64_t cols, bool kv_span) {
  switch (cpu::dot_order(weight, k, rows, cols, kv_span)) {
    case cpu::DotOrder::kRow: return 0;
    case cpu::DotOrder::kRowPadded: return 1;
    case cpu::DotOrder::kBatch: return 2;
  }
  return 0;
}

// attention.comp's MAX_KV (the scores of one query row it keeps in shared memory) and all the
// shared memory it declares with it.
constexpr int64_t kAttentionMaxKv = 4096;
constexpr size_t kAttentionSharedBytes = kAttentionMaxKv * sizeof(float) + 64 * (sizeof(float) + 2 * sizeof(float));

constexpr int64_t kElementwiseGroup = 256;  // the local size of the one-element-per-invocation shaders
constexpr int64_t kMulMatRows = 16;         // output rows per mul_mat workgroup (mul_mat.comp's ROWS)
constexpr int64_t kTileRows = 32;           // mul_mat_tiled.comp's TILE_ROWS
constexpr int64_t kTileCols = 32;           // and TILE_COLS
constexpr int64_t kTiledMinColumns = 16;    // products of this many columns run tiled on GPUs

MulMatKernel mul_mat_kernel(const Tensor& node, const KernelChoice& choice) {
  const DType w = node.src[0]->type;
  if (!choice.gpu_products || w == DType::F16 || w == DType::BF16) return MulMatKernel::kRegisters;
  return node.ne[1] >= kTiledMinColumns ? MulMatKernel::kTiles : MulMatKernel::kSplitRows;
}

// The grid of a MUL_MAT node's dispatch over `rows` of its src0 rows.
void mul_mat_grid(DispatchPlan& d, int64_t rows, const Tensor& node) {
  switch (d.mul_mat) {
    case MulMatKernel::kRegisters: grid(d, (rows + kMulMatRows - 1) / kMulMatRows, node); break;
    case MulMatKernel::kSplitRows: grid(d, rows, node); break;
    case MulMatKernel::kTiles: {
      const int64_t row_tiles = (rows + kTileRows - 1) / kTileRows;
      if (row_tiles > kMaxGroups) throw Error("vulkan backend: node '" + node.name + "' has more rows than a dispatch reaches");
      d.groups[0] = static_cast<uint32_t>(row_tiles);
      d.groups[1] = narrow((node.ne[1] + kTileCols - 1) / kTileCols, node);
      break;
    }
  }
  d.groups[2] = narrow(node.ne[2] * node.ne[3], node);
}

}  // namespace

KernelChoice kernel_choice(const DeviceInfo& device, bool subgroup_arithmetic) {
  KernelChoice choice{device.type != "software", subgroup_arithmetic};
  if (const char* kernels = std::getenv("ENGINE_VULKAN_KERNELS")) {
    const std::string_view v(kernels);
    if (v != "gpu" && v != "gpu-shared-sums" && v != "software")
      throw Error("ENGINE_VULKAN_KERNELS is '" + std::string(v) + "': it takes gpu, gpu-shared-sums or software");
    choice.gpu_products = v != "software";
    choice.subgroup_sums = v == "gpu" && subgroup_arithmetic;
  }
  return choice;
}

DispatchPlan plan_dispatch(const Tensor& node, const KernelChoice& choice) {
  DispatchPlan d;
  DispatchRecord& r = d.record;
  for (int s = 0; s < kMaxSrc; ++s) describe(r, s, d.tensors[s] = node.src[s]);
  describe(r, 3, d.tensors[3] = &node);
  const int64_t elements_groups = (node.nelements() + kElementwiseGroup - 1) / kElementwiseGroup;
  switch (node.op) {
    case Op::GET_ROWS:
      d.shader = "get_rows_" + lower(dtype_name(node.src[0]->type));
      grid(d, elements_groups, node);
      break;
    case Op::MUL_MAT:
      d.mul_mat = mul_mat_kernel(node, choice);
      d.shader = std::string(d.mul_mat == MulMatKernel::kTiles       ? "mul_mat_tiled_"
                             : d.mul_mat == MulMatKernel::kRegisters ? "mul_mat_"
                             : choice.subgroup_sums                  ? "mul_mat_vec_"
                                                                     : "mul_mat_vec_shared_sums_") +
                 lower(dtype_name(node.src[0]->type));
      r.extra[0] = dot_order_code(node.src[0]->type, node.src[0]->ne[0], node.src[0]->ne[1], node.src[1]->ne[1],
                                  mul_mat_params(node).kv_span);
      mul_mat_grid(d, node.ne[0], node);
      break;
    case Op::MUL_MAT_ID:  // mul_mat.comp's registers kernel, a workgroup z per slot; one-row dot order, as the CPU's
      d.mul_mat = MulMatKernel::kRegisters;
      d.shader = "mul_mat_id_" + lower(dtype_name(node.src[0]->type));
      r.extra[0] = dot_order_code(node.src[0]->type, node.src[0]->ne[0], node.src[0]->ne[1], 1, false);
      mul_mat_grid(d, node.ne[0], node);
      d.groups[2] = narrow(node.ne[1] * node.ne[2], node);
      if (d.groups[2] > kMaxGroups) throw Error("vulkan backend: node '" + node.name + "' has more slots than a dispatch reaches");
      break;
    case Op::ADD:
    case Op::MUL:
    case Op::DIV:
      d.shader = node.op == Op::ADD ? "add" : node.op == Op::MUL ? "mul" : "div";
      grid(d, elements_groups, node);
      break;
    case Op::SUM_ROWS:
      d.shader = "sum_rows";
      grid(d, (node.nrows() + 63) / 64, node);
      break;
    case Op::ARGSORT:
      d.shader = "argsort";
      grid(d, elements_groups, node);
      break;
    case Op::SCALE:
    case Op::SILU:
    case Op::GELU:
      d.shader = node.op == Op::SCALE ? "scale" : node.op == Op::SILU ? "silu" : "gelu";
      if (node.op == Op::SCALE) r.params[0] = bits(scale_param(node));
      grid(d, elements_groups, node);
      break;
    case Op::RMS_NORM:
    case Op::NORM:
      d.shader = node.op == Op::RMS_NORM ? "rms_norm" : "norm";
      r.params[0] = bits(eps_param(node));
      grid(d, node.nrows(), node);
      break;
    case Op::SOFT_MAX:
      d.shader = "soft_max";
      r.params[0] = bits(scale_param(node));
      r.extra[0] = node.src[1] != nullptr;
      grid(d, node.nrows(), node);
      break;
    case Op::ROPE: {
      const RopeParams p = rope_params(node);
      d.shader = "rope";
      r.params[0] = p.n_rot;
      r.params[1] = p.mode;
      r.params[2] = bits(std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot)));  // in float, as the CPU backend
      r.params[3] = bits(p.freq_scale);
      r.params[4] = bits(p.attn_factor);
      r.extra[0] = node.src[2] != nullptr;
      grid(d, (node.nelements() / 2 + kElementwiseGroup - 1) / kElementwiseGroup, node);
      break;
    }
    case Op::CONT:
    case Op::CPY: {
      const DType to = node.op == Op::CPY ? node.src[1]->type : node.type;
      d.shader = to == DType::F16 ? "copy_f32_f16" : "copy_f32_f32";
      grid(d, elements_groups, node);
      break;
    }
    default: throw Error("vulkan backend: no shader for " + std::string(op_name(node.op)) + " (node '" + node.name + "')");
  }
  return d;
}

bool fuses_attention(const std::vector<Tensor*>& nodes, size_t i, const Plan& plan, size_t shared_bytes) {
  return shared_bytes >= kAttentionSharedBytes && fuses_device_attention(nodes, i, plan, kAttentionMaxKv);
}

DispatchPlan plan_attention(const Tensor& kq, const Tensor& soft_max, const Tensor& kqv) {
  DispatchPlan d;
  DispatchRecord& r = d.record;
  const Tensor* k = kq.src[0];
  const Tensor* v = kqv.src[0];
  const Tensor* mask = soft_max.src[1];
  const Tensor* bound[kDispatchTensors] = {k, kq.src[1], v, &kqv, mask};
  for (int s = 0; s < 4; ++s) describe(r, s, d.tensors[s] = bound[s]);
  d.tensors[4] = mask;
  if (mask)
    for (int dim = 1; dim < kMaxDims; ++dim) r.src3[dim] = narrow(static_cast<int64_t>(mask->nb[dim]), *mask);
  d.shader = "attention";
  r.params[0] = bits(scale_param(soft_max));
  const int64_t n_kv = kq.ne[0], n_tokens = kq.ne[1];
  r.extra[0] = dot_order_code(k->type, k->ne[0], n_kv, n_tokens, false);
  r.extra[1] = dot_order_code(v->type, n_kv, v->ne[1], n_tokens, true);
  r.extra[2] = mask != nullptr;
  grid(d, n_tokens * kq.ne[2], kqv);
  return d;
}

std::vector<RowChunk> row_chunks(const Tensor& node, const DispatchPlan& plan, uint64_t max_range, uint64_t alignment) {
  const Tensor* w = node.src[0];
  const bool splittable = (node.op == Op::MUL_MAT || node.op == Op::GET_ROWS) && w->ne[2] * w->ne[3] == 1;
  const uint32_t rows = w ? narrow(w->ne[1], *w) : 0;
  if (!splittable || w->nbytes() + alignment <= max_range) return {{0, rows, {plan.groups[0], plan.groups[1], plan.groups[2]}}};
  const uint64_t per_chunk = std::max<uint64_t>(1, (max_range - alignment) / w->nb[1]);
  std::vector<RowChunk> chunks;
  for (uint64_t first = 0; first < rows; first += per_chunk) {
    RowChunk c{static_cast<uint32_t>(first), static_cast<uint32_t>(std::min<uint64_t>(rows, first + per_chunk)), {1, 1, 1}};
    DispatchPlan part = plan;
    if (node.op == Op::MUL_MAT) mul_mat_grid(part, c.row_end - c.first_row, node);
    std::copy(part.groups, part.groups + 3, c.groups);
    chunks.push_back(c);
  }
  return chunks;
}

}  // namespace engine::vulkan
