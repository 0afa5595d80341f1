#include "engine/tensor.h"

#include <algorithm>
#include <string>

namespace engine {

size_t Tensor::nbytes() const {
  if (nelements() == 0) return 0;
  // A view may stride dimension 0 too (a permuted one does); blocks of a quantized type are dense.
  const DTypeInfo& info = dtype_info(type);
  size_t bytes = info.block_size == 1 ? info.block_bytes + static_cast<size_t>(ne[0] - 1) * nb[0] : row_bytes(type, ne[0]);
  for (int i = 1; i < kMaxDims; ++i) bytes += static_cast<size_t>(ne[i] - 1) * nb[i];
  return bytes;
}

bool Tensor::is_contiguous() const {
  size_t expect = dtype_info(type).block_bytes;
  if (nb[0] != expect) return false;
  expect = row_bytes(type, ne[0]);
  for (int i = 1; i < kMaxDims; ++i) {
    if (ne[i] != 1 && nb[i] != expect) return false;
    expect *= static_cast<size_t>(ne[i]);
  }
  return true;
}

int Tensor::n_dims() const {
  for (int i = kMaxDims - 1; i >= 1; --i)
    if (ne[i] > 1) return i + 1;
  return 1;
}

std::string Tensor::shape_str() const {
  int n = std::max(2, n_dims());
  std::string s = "[";
  for (int i = 0; i < n; ++i) {
    if (i) s += ", ";
    s += std::to_string(ne[i]);
  }
  return s + "]";
}

void set_contiguous_strides(Tensor& t) {
  const auto& info = dtype_info(t.type);
  t.nb[0] = info.block_bytes;
  t.nb[1] = row_bytes(t.type, t.ne[0]);
  for (int i = 2; i < kMaxDims; ++i) t.nb[i] = t.nb[i - 1] * static_cast<size_t>(t.ne[i - 1]);
}

}  // namespace engine
