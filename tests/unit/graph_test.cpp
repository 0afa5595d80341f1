#include "engine/graph.h"

#include <gtest/gtest.h>

#include "engine/error.h"

using namespace engine;

TEST(Graph, ExpandOrdersSourcesDepthFirst) {
  Graph g;
  Tensor* w = g.new_tensor_2d(DType::F32, 8, 4, "w");
  Tensor* x = g.new_tensor_2d(DType::F32, 8, 1, "x");
  Tensor* n = named(g.rms_norm(x, 1e-5f), "norm");
  Tensor* y = named(g.mul_mat(w, n), "y");
  Tensor* r = named(g.reshape_2d(y, 2, 2), "r");
  g.expand(r);
  ASSERT_EQ(g.nodes().size(), 3u);
  EXPECT_EQ(g.nodes()[0]->name, "norm");
  EXPECT_EQ(g.nodes()[1]->name, "y");
  EXPECT_EQ(g.nodes()[2]->name, "r");
  EXPECT_EQ(r->view_src, y);
  EXPECT_EQ(y->shape_str(), "[4, 1]");
}

TEST(Graph, MulMatRejectsMismatchedInnerDimension) {
  Graph g;
  Tensor* w = g.new_tensor_2d(DType::F32, 8, 4, "w");
  Tensor* x = g.new_tensor_2d(DType::F32, 6, 1, "x");
  EXPECT_THROW(g.mul_mat(w, x), Error);
}

TEST(Graph, PermuteAndTransposeSwapStrides) {
  Graph g;
  const int64_t ne[3] = {4, 3, 2};
  Tensor* a = g.new_tensor(DType::F32, 3, ne, "a");
  Tensor* p = g.permute(a, 0, 2, 1, 3);
  EXPECT_EQ(p->ne[1], 2);
  EXPECT_EQ(p->ne[2], 3);
  EXPECT_EQ(p->nb[2], a->nb[1]);
  EXPECT_FALSE(p->is_contiguous());
  Tensor* t = g.transpose(a);
  EXPECT_EQ(t->ne[0], 3);
  EXPECT_EQ(t->nb[0], a->nb[1]);
}

TEST(Graph, ViewPastStorageEndIsAnError) {
  Graph g;
  Tensor* a = g.new_tensor_1d(DType::F16, 16, "cache");
  EXPECT_NO_THROW(g.view_1d(a, 8, 16));
  EXPECT_THROW(g.view_1d(a, 8, 24), Error);
}

TEST(DType, BlockLayoutsMatchGGUF) {
  EXPECT_EQ(row_bytes(DType::Q4_0, 64), 36u);
  EXPECT_EQ(row_bytes(DType::Q6_K, 256), 210u);
  EXPECT_EQ(row_bytes(DType::Q8_K, 256), 292u);
  EXPECT_EQ(dtype_from_gguf(30), DType::BF16);
  EXPECT_FALSE(dtype_from_gguf(16).has_value());
  EXPECT_THROW(row_bytes(DType::Q4_K, 100), Error);
}

TEST(Tensor, BytesOfAPermutedViewSpanItsSource) {
  // Dimension 0 of the view strides over whole rows of the source: the span is the source's.
  engine::Graph g;
  const int64_t ne[3] = {13, 7, 3};
  engine::Tensor* a = g.new_tensor(engine::DType::F32, 3, ne, "a");
  engine::Tensor* swapped = g.permute(a, 1, 0, 2, 3);
  EXPECT_EQ(swapped->nbytes(), a->nbytes());
  engine::Tensor* q = g.new_tensor_2d(engine::DType::Q4_0, 64, 3, "q");
  EXPECT_EQ(q->nbytes(), 3u * 2 * 18) << "blocks stay dense";
}
