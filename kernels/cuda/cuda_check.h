#pragma once
// CUDA runtime calls checked: a failure throws Error naming the call and the runtime's reason.
#include <cuda_runtime_api.h>

namespace engine::cuda {

void check(cudaError_t result, const char* what);

}  // namespace engine::cuda
