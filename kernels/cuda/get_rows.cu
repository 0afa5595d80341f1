// GET_ROWS: dst[:, i, j] = row ids[i, j] (src1, i32) of the table (src0), of its batch j where
// the table is 3-d (an expert's per token), in f32 from the table's dtype. One thread per
// element of dst.
#include "cuda/common.cuh"

namespace engine::cuda {
namespace {

constexpr int kThreads = 256;

template <DType T>
__global__ void get_rows_kernel(TensorArg table, TensorArg ids, TensorArg dst) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= elements(dst)) return;
  int64_t at[4];
  unravel(i, dst.ne, at);
  const int32_t id = *reinterpret_cast<const int32_t*>(ids.data + at[1] * ids.nb[0] + at[2] * ids.nb[1]);
  if (id < 0 || id >= table.ne[1]) {  // an id past the table reads as nan, never out of bounds
    *reinterpret_cast<float*>(element(dst, at[0], at[1], at[2], at[3])) = __int_as_float(0x7fc00000);
    return;
  }
  const auto* row = reinterpret_cast<const uint8_t*>(element(table, 0, id, table.ne[2] > 1 ? at[2] : 0, 0));
  *reinterpret_cast<float*>(element(dst, at[0], at[1], at[2], at[3])) = Weight<T>::at(row, at[0]);
}

}  // namespace

void launch_get_rows(const Launch& l, cudaStream_t stream) {
  const TensorArg& dst = l.dst;
  with_weight_type(l.src0_type, [&]<DType T>() {
    get_rows_kernel<T><<<blocks_for(dst.ne[0] * dst.ne[1] * dst.ne[2] * dst.ne[3], kThreads), kThreads, 0, stream>>>(
        l.src[0], l.src[1], dst);
  });
  check_launch("get_rows_kernel");
}

}  // namespace engine::cuda
