#pragma once
// CPU kernels, one per op. Each computes its share of `dst` (split by ith / nth) from
// dst->src[]; all tensors have their data bound. Kernels needing scratch ask for it
// through work_size() and receive it in ComputeParams::wdata, shared by all threads.
#include <cstddef>

#include "engine/tensor.h"

namespace engine::cpu {

class Barrier;

struct ComputeParams {
  int ith = 0;                // this thread's index
  int nth = 1;                // thread count
  void* wdata = nullptr;      // scratch shared by all threads of this node
  size_t wsize = 0;
  Barrier* barrier = nullptr; // waits until all nth threads arrive
};

void barrier_wait(const ComputeParams& p);

// Scratch bytes a MUL_MAT node needs with nth threads (activations converted to the
// weight type's dot-product format).
size_t mul_mat_work_size(const Tensor* dst, int nth);

void get_rows(const ComputeParams& p, Tensor* dst);
void add(const ComputeParams& p, Tensor* dst);
void mul(const ComputeParams& p, Tensor* dst);
void scale(const ComputeParams& p, Tensor* dst);
void rms_norm(const ComputeParams& p, Tensor* dst);
void norm(const ComputeParams& p, Tensor* dst);
void mul_mat(const ComputeParams& p, Tensor* dst);
void rope(const ComputeParams& p, Tensor* dst);
void soft_max(const ComputeParams& p, Tensor* dst);
void cont(const ComputeParams& p, Tensor* dst);  // CONT and CPY: strided copy with dtype conversion
void silu(const ComputeParams& p, Tensor* dst);
void gelu(const ComputeParams& p, Tensor* dst);

// Dtypes accepted as MUL_MAT src0 / GET_ROWS table / CPY destination.
bool mul_mat_supports(DType weight);
bool get_rows_supports(DType table);
bool copy_supports(DType from, DType to);

}  // namespace engine::cpu
