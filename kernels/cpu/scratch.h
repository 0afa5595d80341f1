#pragma once
// The CPU backend's work memory outside the plan: one buffer, sized for the largest need of a
// graph's nodes and reused by every node; no kernel keeps work memory of its own. It holds, per
// node (each thread's part a 64-byte aligned slice, work_memory.h):
//   MUL_MAT: the activations converted to the weight's dot format, and per thread a row of
//     gathered floats (strided activations), then its dot tiles' work memory (DotTile::work:
//     activation tables, weight rows prepared or unpacked, widened F16 rows);
//   the fused attention pass: every query in K's dot format and each query's mask live prefix,
//     and per thread a block of queries' scores, their probabilities in V's dot format,
//     softmax's scaled row, and its dot tiles' work memory;
//   SOFT_MAX: per thread a row's scaled inputs and the mask rows' live prefixes;
//   ROPE: per thread one position's cos / sin.
#include <cstddef>
#include <functional>

#include "cpu/schedule.h"
#include "engine/graph.h"
#include "engine/plan.h"

namespace engine::cpu {

// Work memory bytes `node` needs, run by nth threads (a MUL_MAT's weight packed or not, as
// ComputeParams::weight_packed): its kernel's *_work_size (kernels.h).
size_t node_work_size(const Tensor* node, int nth, bool weight_packed);

// Bytes that buffer needs for `graph`, its nodes run together as `together` says (schedule.h),
// by `n_threads` threads, `packed` telling the weights the backend holds regrouped (repack.h).
size_t scratch_bytes(const Graph& graph, const Schedule& together, int n_threads, const std::function<bool(const Tensor&)>& packed);
// The same for a backend that has not packed any weight yet: allocating `graph` packs those
// weights_to_pack offers when SIMD is active.
size_t scratch_bytes(const Graph& graph, const Plan& plan, int n_threads);

}  // namespace engine::cpu
