#include "engine/op_params.h"
#include "engine/graph.h"

#include <string>

#include "engine/error.h"

namespace engine {
namespace {

std::string describe(const Tensor* t) { return "'" + t->name + "' " + t->shape_str(); }

// why() builds the message only on failure: graphs are built every step.
template <typename Why>
void require(bool ok, Op op, const Why& why) {
  if (!ok) throw Error(std::string(op_name(op)) + ": " + std::string(why()));
}

bool can_repeat(const Tensor* small, const Tensor* big) {
  for (int i = 0; i < kMaxDims; ++i)
    if (small->ne[i] == 0 || big->ne[i] % small->ne[i] != 0) return false;
  return true;
}

}  // namespace

Tensor* Graph::new_tensor(DType type, int n_dims, const int64_t* ne, std::string name) {
  if (n_dims < 1 || n_dims > kMaxDims) throw Error("tensor '" + name + "': bad dimension count");
  Tensor& t = tensors_.emplace_back();
  t.name = std::move(name);
  t.type = type;
  for (int i = 0; i < n_dims; ++i) {
    if (ne[i] < 0) throw Error("tensor '" + t.name + "': negative dimension");
    t.ne[i] = ne[i];
  }
  if (t.ne[0] % dtype_info(type).block_size != 0)
    throw Error("tensor '" + t.name + "': row of " + std::to_string(t.ne[0]) + " is not a whole number of " +
                std::string(dtype_name(type)) + " blocks");
  set_contiguous_strides(t);
  t.layer = layer_;
  t.module = module_;
  return &t;
}

Tensor* Graph::new_tensor_1d(DType type, int64_t ne0, std::string name) {
  return new_tensor(type, 1, &ne0, std::move(name));
}

Tensor* Graph::new_tensor_2d(DType type, int64_t ne0, int64_t ne1, std::string name) {
  const int64_t ne[2] = {ne0, ne1};
  return new_tensor(type, 2, ne, std::move(name));
}

Tensor* Graph::new_node(Op op, DType type, const int64_t ne[4], Tensor* a, Tensor* b, Tensor* c) {
  Tensor* t = new_tensor(type, kMaxDims, ne);
  t->op = op;
  t->src[0] = a;
  t->src[1] = b;
  t->src[2] = c;
  return t;
}

Tensor* Graph::new_view(Op op, Tensor* a, const int64_t ne[4], const size_t nb[4], size_t offset) {
  Tensor& t = tensors_.emplace_back();
  t.type = a->type;
  for (int i = 0; i < kMaxDims; ++i) {
    t.ne[i] = ne[i];
    t.nb[i] = nb[i];
  }
  t.op = op;
  t.src[0] = a;
  t.view_src = a->view_src ? a->view_src : a;
  t.view_offs = a->view_offs + offset;
  t.view_offs_per_past = a->view_offs_per_past;
  t.layer = layer_;
  t.module = module_;
  require(t.view_offs + t.nbytes() <= t.view_src->nbytes(), op,
          [&] { return "view of " + describe(a) + " runs past the end of its storage"; });
  return &t;
}

Tensor* Graph::get_rows(Tensor* table, Tensor* ids) {
  require(ids->type == DType::I32, Op::GET_ROWS, [&] { return "ids " + describe(ids) + " must be i32"; });
  require(ids->ne[2] == 1 && ids->ne[3] == 1 && table->ne[3] == 1 && (table->ne[2] == 1 || table->ne[2] == ids->ne[1]),
          Op::GET_ROWS, [&] { return "ids " + describe(ids) + " do not select from " + describe(table) + ": 2-d tables, or 3-d with a batch per column of ids"; });
  require(table->nb[0] == dtype_info(table->type).block_bytes, Op::GET_ROWS, [&] { return "table rows must be dense"; });
  const int64_t ne[4] = {table->ne[0], ids->ne[0], ids->ne[1], 1};
  return new_node(Op::GET_ROWS, DType::F32, ne, table, ids);
}

Tensor* Graph::add(Tensor* a, Tensor* b) {
  require(can_repeat(b, a), Op::ADD, [&] { return describe(b) + " does not broadcast to " + describe(a); });
  return new_node(Op::ADD, DType::F32, a->ne, a, b);
}

Tensor* Graph::mul(Tensor* a, Tensor* b) {
  require(can_repeat(b, a), Op::MUL, [&] { return describe(b) + " does not broadcast to " + describe(a); });
  return new_node(Op::MUL, DType::F32, a->ne, a, b);
}

Tensor* Graph::div(Tensor* a, Tensor* b) {
  require(can_repeat(b, a), Op::DIV, [&] { return describe(b) + " does not broadcast to " + describe(a); });
  return new_node(Op::DIV, DType::F32, a->ne, a, b);
}

Tensor* Graph::sum_rows(Tensor* a) {
  require(a->type == DType::F32, Op::SUM_ROWS, [&] { return describe(a) + " must be f32"; });
  const int64_t ne[4] = {1, a->ne[1], a->ne[2], a->ne[3]};
  return new_node(Op::SUM_ROWS, DType::F32, ne, a);
}

Tensor* Graph::argsort_desc(Tensor* a) {
  require(a->type == DType::F32 && a->ne[2] == 1 && a->ne[3] == 1 && a->ne[0] <= (int64_t{1} << 20), Op::ARGSORT,
          [&] { return describe(a) + " must be 2-d f32 with rows of at most 2^20"; });
  return new_node(Op::ARGSORT, DType::I32, a->ne, a);
}

Tensor* Graph::scale(Tensor* a, float s) {
  Tensor* t = new_node(Op::SCALE, DType::F32, a->ne, a);
  set_scale_param(*t, s);
  return t;
}

Tensor* Graph::rms_norm(Tensor* a, float eps) {
  Tensor* t = new_node(Op::RMS_NORM, DType::F32, a->ne, a);
  set_eps_param(*t, eps);
  return t;
}

Tensor* Graph::norm(Tensor* a, float eps) {
  Tensor* t = new_node(Op::NORM, DType::F32, a->ne, a);
  set_eps_param(*t, eps);
  return t;
}

Tensor* Graph::mul_mat(Tensor* a, Tensor* b) {
  require(a->ne[0] == b->ne[0], Op::MUL_MAT,
          [&] { return "inner dimensions differ: " + describe(a) + " x " + describe(b); });
  require(a->ne[2] != 0 && a->ne[3] != 0 && b->ne[2] % a->ne[2] == 0 && b->ne[3] % a->ne[3] == 0, Op::MUL_MAT,
          [&] { return describe(a) + " does not broadcast over " + describe(b); });
  require(a->nb[0] == dtype_info(a->type).block_bytes && b->type == DType::F32, Op::MUL_MAT,
          [&] { return "src0 rows must be dense and src1 must be f32"; });
  const int64_t ne[4] = {a->ne[1], b->ne[1], b->ne[2], b->ne[3]};
  return new_node(Op::MUL_MAT, DType::F32, ne, a, b);
}

Tensor* Graph::mul_mat_id(Tensor* as, Tensor* b, Tensor* ids) {
  const int64_t n_used = ids->ne[0], n_tokens = ids->ne[1];
  require(ids->type == DType::I32 && ids->ne[2] == 1 && ids->ne[3] == 1, Op::MUL_MAT_ID,
          [&] { return "ids " + describe(ids) + " must be 2-d i32"; });
  require(as->ne[0] == b->ne[0] && as->ne[3] == 1 && b->ne[3] == 1 && b->ne[2] == n_tokens &&
              (b->ne[1] == 1 || b->ne[1] == n_used) && n_used <= as->ne[2],
          Op::MUL_MAT_ID, [&] { return describe(as) + " x " + describe(b) + " by " + describe(ids) + " do not fit"; });
  require(as->nb[0] == dtype_info(as->type).block_bytes && b->type == DType::F32, Op::MUL_MAT_ID,
          [&] { return "experts' rows must be dense and src1 must be f32"; });
  const int64_t ne[4] = {as->ne[1], n_used, n_tokens, 1};
  return new_node(Op::MUL_MAT_ID, DType::F32, ne, as, b, ids);
}

Tensor* Graph::rope(Tensor* a, Tensor* pos, Tensor* freq_factors, const RopeParams& p) {
  const int n_rot = p.n_rot;
  require(pos->type == DType::I32 && pos->ne[0] == a->ne[2], Op::ROPE,
          [&] { return "positions " + describe(pos) + " must be i32 with one entry per token of " + describe(a); });
  require(n_rot > 0 && n_rot % 2 == 0 && n_rot <= a->ne[0], Op::ROPE, [&] { return "bad rotated dimension count"; });
  require(!freq_factors || freq_factors->ne[0] >= n_rot / 2, Op::ROPE, [&] { return "too few frequency factors"; });
  Tensor* t = new_node(Op::ROPE, DType::F32, a->ne, a, pos, freq_factors);
  set_rope_params(*t, p);
  return t;
}

Tensor* Graph::soft_max(Tensor* a, Tensor* mask, float s) {
  require(!mask || (mask->ne[0] == a->ne[0] && mask->ne[1] >= a->ne[1] && mask->type == DType::F32), Op::SOFT_MAX,
          [&] { return "mask must be f32 [" + std::to_string(a->ne[0]) + ", >= " + std::to_string(a->ne[1]) + "]"; });
  Tensor* t = new_node(Op::SOFT_MAX, DType::F32, a->ne, a, mask);
  set_scale_param(*t, s);
  return t;
}

Tensor* Graph::silu(Tensor* a) { return new_node(Op::SILU, DType::F32, a->ne, a); }
Tensor* Graph::gelu(Tensor* a) { return new_node(Op::GELU, DType::F32, a->ne, a); }
Tensor* Graph::cont(Tensor* a) { return new_node(Op::CONT, a->type, a->ne, a); }

Tensor* Graph::cont_2d(Tensor* a, int64_t ne0, int64_t ne1) {
  require(ne0 * ne1 == a->nelements(), Op::CONT, [&] { return "element count of " + describe(a) + " changes"; });
  const int64_t ne[4] = {ne0, ne1, 1, 1};
  return new_node(Op::CONT, a->type, ne, a);
}

Tensor* Graph::cpy(Tensor* a, Tensor* dst) {
  require(a->nelements() == dst->nelements(), Op::CPY,
          [&] { return describe(a) + " and " + describe(dst) + " differ in size"; });
  Tensor* t = new_view(Op::CPY, dst, dst->ne, dst->nb, 0);
  t->src[0] = a;
  t->src[1] = dst;
  return t;
}

Tensor* Graph::reshape_2d(Tensor* a, int64_t ne0, int64_t ne1) { return reshape_3d(a, ne0, ne1, 1); }

Tensor* Graph::reshape_3d(Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2) {
  require(a->is_contiguous(), Op::RESHAPE, [&] { return describe(a) + " is not contiguous"; });
  require(ne0 * ne1 * ne2 == a->nelements(), Op::RESHAPE,
          [&] { return "element count of " + describe(a) + " changes"; });
  Tensor shape;
  shape.type = a->type;
  shape.ne[0] = ne0, shape.ne[1] = ne1, shape.ne[2] = ne2;
  set_contiguous_strides(shape);
  return new_view(Op::RESHAPE, a, shape.ne, shape.nb, 0);
}

Tensor* Graph::view_1d(Tensor* a, int64_t ne0, size_t offset) {
  const int64_t ne[4] = {ne0, 1, 1, 1};
  const size_t row = row_bytes(a->type, ne0);
  const size_t nb[4] = {a->nb[0], row, row, row};
  return new_view(Op::VIEW, a, ne, nb, offset);
}

Tensor* Graph::view_2d(Tensor* a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset) {
  const int64_t ne[4] = {ne0, ne1, 1, 1};
  const size_t nb[4] = {a->nb[0], nb1, nb1 * ne1, nb1 * ne1};
  return new_view(Op::VIEW, a, ne, nb, offset);
}

Tensor* Graph::view_3d(Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, size_t nb1, size_t nb2, size_t offset) {
  const int64_t ne[4] = {ne0, ne1, ne2, 1};
  const size_t nb[4] = {a->nb[0], nb1, nb2, nb2 * ne2};
  return new_view(Op::VIEW, a, ne, nb, offset);
}

Tensor* Graph::permute(Tensor* a, int ax0, int ax1, int ax2, int ax3) {
  const int axes[4] = {ax0, ax1, ax2, ax3};
  int seen = 0;
  for (int ax : axes) {
    require(ax >= 0 && ax < kMaxDims, Op::PERMUTE, [&] { return "axis out of range"; });
    seen |= 1 << ax;
  }
  require(seen == 0xF, Op::PERMUTE, [&] { return "axes are not a permutation"; });
  int64_t ne[4];
  size_t nb[4];
  for (int i = 0; i < kMaxDims; ++i) {
    ne[axes[i]] = a->ne[i];
    nb[axes[i]] = a->nb[i];
  }
  return new_view(Op::PERMUTE, a, ne, nb, 0);
}

Tensor* Graph::transpose(Tensor* a) {
  const int64_t ne[4] = {a->ne[1], a->ne[0], a->ne[2], a->ne[3]};
  const size_t nb[4] = {a->nb[1], a->nb[0], a->nb[2], a->nb[3]};
  return new_view(Op::TRANSPOSE, a, ne, nb, 0);
}

void Graph::visit(Tensor* t) {
  if (!t || t->op == Op::NONE || visited_.count(t)) return;
  visited_.insert(t);
  for (Tensor* s : t->src) visit(s);
  nodes_.push_back(t);
}

void Graph::expand(Tensor* t) { visit(t); }

void Graph::name_unnamed_nodes() {
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i]->name.empty()) nodes_[i]->name = "node_" + std::to_string(i);
}

}  // namespace engine
