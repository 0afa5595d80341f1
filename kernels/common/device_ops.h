#pragma once
// What the device backends (Vulkan, CUDA) run alike: their (op, dtype) support table, and when
// attention's three nodes run as one kernel over an f16 KV cache.
#include <cstddef>
#include <string_view>
#include <vector>

#include "engine/error.h"
#include "engine/plan.h"
#include "engine/tensor.h"

namespace engine {

// Row length the GPU backends' ARGSORT takes: a kernel quadratic in it, made for expert counts.
constexpr int64_t kDeviceArgsortMax = 4096;

// Whether a device backend runs `node`: every op of the supported architectures' graphs,
// weights of every dtype the files hold (weight_types), activations in f32.
bool device_supports(const Tensor& node);
// The Error for a node `backend` does not support, naming its op, its sources' dtypes and it.
Error unsupported_node(const Tensor& node, std::string_view backend);
// The weight dtypes a device backend's products and row gathers read.
const std::vector<DType>& device_weight_types();

// Whether nodes i, i + 1, i + 2 (attention_chain) run as one device kernel: an attention of
// f32 queries over an f16 K and V with heads grouped evenly, at most `max_kv` positions a
// score row, an f32 mask of whole rows, and kqv placed over none of its inputs, which other
// workgroups still read while it is written.
bool fuses_device_attention(const std::vector<Tensor*>& nodes, size_t i, const Plan& plan, int64_t max_kv);

}  // namespace engine
