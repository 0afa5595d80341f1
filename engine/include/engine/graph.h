#pragma once
// A Graph owns its tensors and lists the op nodes in execution order. Op constructors
// infer and validate shapes; expand() appends a result and everything it depends on in
// depth-first source order, so the node order is the order the builder asked for.
#include <deque>
#include <unordered_set>
#include <string>
#include <vector>

#include "engine/op_params.h"
#include "engine/tensor.h"

namespace engine {

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Leaves: tensors with no op (weights, inputs, KV storage).
  Tensor* new_tensor(DType type, int n_dims, const int64_t* ne, std::string name = {});
  Tensor* new_tensor_1d(DType type, int64_t ne0, std::string name = {});
  Tensor* new_tensor_2d(DType type, int64_t ne0, int64_t ne1, std::string name = {});

  // Ops. Each returns a new node, not yet in the execution order (see expand()).
  // dst[:, i, j] = row ids[i, j] of table (of its batch j where the table is 3-d).
  Tensor* get_rows(Tensor* table, Tensor* ids);
  Tensor* add(Tensor* a, Tensor* b);
  Tensor* mul(Tensor* a, Tensor* b);
  Tensor* div(Tensor* a, Tensor* b);
  Tensor* sum_rows(Tensor* a);
  // For each row of f32 a [n, rows]: the i32 indices of its elements, largest first.
  Tensor* argsort_desc(Tensor* a);
  Tensor* scale(Tensor* a, float s);
  Tensor* rms_norm(Tensor* a, float eps);
  Tensor* norm(Tensor* a, float eps);
  Tensor* mul_mat(Tensor* a, Tensor* b);
  // Mixture-of-experts multiply: experts as [k, n, n_expert], b [k, 1 or n_used, tokens] f32,
  // ids [n_used, tokens] i32; dst [n, n_used, tokens], slot (i, t) the product of expert
  // ids[i, t] with b's row (i, t) (row (0, t) where b has one per token).
  Tensor* mul_mat_id(Tensor* as, Tensor* b, Tensor* ids);
  // Rotates the first p.n_rot elements of each row of a [head_dim, heads, tokens] tensor;
  // freq_factors (may be null) divide the angles of the rotated pairs.
  Tensor* rope(Tensor* a, Tensor* pos, Tensor* freq_factors, const RopeParams& p);
  // softmax(a * scale + mask) along dim 0; mask may be null, else [a.ne0, >= a.ne1] f32.
  Tensor* soft_max(Tensor* a, Tensor* mask, float scale);
  Tensor* silu(Tensor* a);
  Tensor* gelu(Tensor* a);
  Tensor* cont(Tensor* a);
  // Dense copy of a, reshaped to [ne0, ne1] (same element count).
  Tensor* cont_2d(Tensor* a, int64_t ne0, int64_t ne1);
  // Copies a into the view dst (same element count); the result aliases dst.
  Tensor* cpy(Tensor* a, Tensor* dst);

  Tensor* reshape_2d(Tensor* a, int64_t ne0, int64_t ne1);
  Tensor* reshape_3d(Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2);
  Tensor* view_1d(Tensor* a, int64_t ne0, size_t offset);
  Tensor* view_2d(Tensor* a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset);
  Tensor* view_3d(Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, size_t nb1, size_t nb2, size_t offset);
  // Result axis axes[i] takes source axis i, as ggml_permute.
  Tensor* permute(Tensor* a, int ax0, int ax1, int ax2, int ax3);
  Tensor* transpose(Tensor* a);

  // Appends t and, first, its not-yet-listed sources (depth first, source order).
  void expand(Tensor* t);

  const std::vector<Tensor*>& nodes() const { return nodes_; }
  const std::deque<Tensor>& tensors() const { return tensors_; }
  // The layer index new nodes receive (-1 outside transformer blocks).
  void set_layer(int layer) { layer_ = layer; }
  int layer() const { return layer_; }
  // The module path new nodes receive (dotted, as the checkpoint names its modules).
  void set_module(std::string module) { module_ = std::move(module); }
  const std::string& module() const { return module_; }
  // Gives every unnamed node the name "node_<index>".
  void name_unnamed_nodes();

 private:
  Tensor* new_node(Op op, DType type, const int64_t ne[4], Tensor* a, Tensor* b = nullptr, Tensor* c = nullptr);
  Tensor* new_view(Op op, Tensor* a, const int64_t ne[4], const size_t nb[4], size_t offset);
  void visit(Tensor* t);

  std::deque<Tensor> tensors_;
  std::vector<Tensor*> nodes_;
  std::unordered_set<const Tensor*> visited_;
  int layer_ = -1;
  std::string module_;
};

// Sets a node's name and returns it, for builder one-liners.
inline Tensor* named(Tensor* t, std::string name) {
  t->name = std::move(name);
  return t;
}

}  // namespace engine
