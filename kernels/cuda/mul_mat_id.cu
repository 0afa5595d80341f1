// MUL_MAT_ID: dst[:, i, t] = expert ids[i, t] of src0 ([k, n, n_expert], any weight dtype)
// times row (i, t) of src1, or row (0, t) where src1 has one row per token; the ids (src2, i32)
// are read on the device. A matrix-vector product per slot (i, t), a warp a row (mat_vec.cuh):
// a step reads only the experts its slots chose. Slots are the grid's fastest dimension so that
// the slots of one expert read each of its rows close together in time (from L2 after the
// first). An id outside the experts gives a column of nan and reads no weight.
#include "cuda/common.cuh"
#include "cuda/mat_vec.cuh"

namespace engine::cuda {
namespace {

constexpr int kWarps = 4;  // rows per block

template <DType T>
__global__ void mul_mat_id_kernel(TensorArg experts, TensorArg x, TensorArg ids, TensorArg dst) {
  const int64_t n_used = dst.ne[1];
  const int64_t i = blockIdx.x % n_used, t = blockIdx.x / n_used;
  const int64_t r = static_cast<int64_t>(blockIdx.y) * kWarps + threadIdx.x / kWarp;
  if (r >= dst.ne[0]) return;
  auto* out = reinterpret_cast<float*>(element(dst, r, i, t, 0));
  const bool lead = threadIdx.x % kWarp == 0;
  const int32_t e = *reinterpret_cast<const int32_t*>(element(ids, i, t, 0, 0));
  if (e < 0 || e >= experts.ne[2]) {
    if (lead) *out = __int_as_float(0x7fc00000);
    return;
  }
  const auto* row = reinterpret_cast<const uint8_t*>(element(experts, 0, r, e, 0));
  const char* activations = element(x, 0, x.ne[1] == 1 ? 0 : i, t, 0);
  float sums[1] = {};
  warp_row_dots<T, 1>(row, experts.ne[0], [&](int) { return activations; }, x.nb[0], 1, sums);
  const float s = warp_sum(sums[0]);
  if (lead) *out = s;
}

}  // namespace

void launch_mul_mat_id(const Launch& l, cudaStream_t stream) {
  const TensorArg& dst = l.dst;
  const dim3 grid(blocks_for(dst.ne[1] * dst.ne[2], 1), grid_yz((dst.ne[0] + kWarps - 1) / kWarps));
  with_weight_type(l.src0_type, [&]<DType T>() {
    mul_mat_id_kernel<T><<<grid, kWarps * kWarp, 0, stream>>>(l.src[0], l.src[1], l.src[2], dst);
  });
  check_launch("mul_mat_id_kernel");
}

}  // namespace engine::cuda
