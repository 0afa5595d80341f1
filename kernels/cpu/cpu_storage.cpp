// The CPU backend's memory: its copy of the weights (packed where the SIMD kernels read them
// packed), the KV cache, the compute buffer and scratch, and the binding of a graph to them.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "cpu/cpu_backend.h"
#include "cpu/cpu_features.h"
#include "cpu/decode_tuning.h"
#include "cpu/repack.h"
#include "cpu/row_split.h"
#include "cpu/schedule.h"
#include "cpu/scratch.h"
#include "engine/error.h"

namespace engine::cpu {
namespace {

// engine-run -v: the form each weight dtype's decode products run on, and the timing behind it.
void log_decode_forms(const std::vector<GGUFTensorInfo>& weights) {
  std::string line;
  for (const DecodeForm& f : decode_forms()) {
    if (std::none_of(weights.begin(), weights.end(), [&](const GGUFTensorInfo& w) { return w.type == f.weight; })) continue;
    std::string requests;
    for (size_t c = 0; c < kRowClasses; ++c)
      requests += fmt::format("{}{}: {}", c == 0 ? "" : ", ", kTimedRowElements[c], requests_name(f.rows[c].chosen));
    line += fmt::format("{}{} {} (requests by row length {})", line.empty() ? "" : ", ", dtype_name(f.weight),
                        simd_level_name(f.level), requests);
    std::string timed;
    for (const auto& [threads, r] : {std::pair{"all threads", f.all_threads}, std::pair{"one thread", f.one_thread}}) {
      std::string rates;
      for (const auto& [level, gbs] : form_rates(r))
        if (gbs > 0) rates += fmt::format("{}{} {:.1f}", rates.empty() ? "" : ", ", simd_level_name(level), gbs);
      if (!rates.empty()) timed += fmt::format("{}{} {} GB/s", timed.empty() ? "" : "; ", threads, rates);
    }
    for (size_t c = 0; c < kRowClasses; ++c)
      for (const auto& [threads, r] : {std::pair{"all threads", f.rows[c].all_threads}, std::pair{"one thread", f.rows[c].one_thread}})
        if (r.near_and_far_gbs > 0)
          timed += fmt::format("; {} rows of {} on {}: near+far {:.1f}, far {:.1f}, none {:.1f} GB/s", simd_level_name(f.level),
                               kTimedRowElements[c], threads, r.near_and_far_gbs, r.far_only_gbs, r.no_requests_gbs);
    if (!timed.empty()) line += " (timed: " + timed + ")";
  }
  spdlog::info("cpu: decode products on {}", line.empty() ? "no dot kernel" : line);
}

}  // namespace

void CpuBackend::load_weights(const Model& model) {
  weight_infos_ = &model.file().tensors();
  log_decode_forms(*weight_infos_);
  weights_ = HostMemory(model.weight_storage_bytes());
  model.file().copy_data(weights_.data(), 0, weights_.size());
  packed_.assign(weight_infos_->size(), false);
}

void CpuBackend::allocate_kv(const KVCache& kv) {
  kv_ = HostMemory(kv.bytes());
  kv_layout_ = kv;
}

void CpuBackend::allocate(Graph& graph, const Plan& plan) {
  bind_leaves(graph);
  if (simd_active()) pack_weights(graph);
  buffer_.reserve(plan.buffer_size);
  plan.bind(graph, buffer_.data());
  schedule_ = schedule(graph.nodes(), plan, pool_.size());
  scratch_.reserve(cpu::scratch_bytes(graph, schedule_, pool_.size(), [&](const Tensor& t) { return is_packed(&t); }));
  group_ns_.assign(graph.nodes().size(), 0);
  allocated_ = &graph;
  allocated_plan_ = &plan;
}

void CpuBackend::rebind(Graph& graph, const Plan& plan) {
  if (&graph != allocated_ || &plan != allocated_plan_) return allocate(graph, plan);
  Plan::bind_views(graph);
}

void CpuBackend::set_input(const Tensor& input, const void* data, size_t bytes) {
  if (!input.has(kInput) || !input.data || bytes != input.nbytes())
    throw Error("cpu backend: cannot set input '" + input.name + "' from " + std::to_string(bytes) + " bytes");
  std::memcpy(input.data, data, bytes);
}

void CpuBackend::get_output(const Tensor& output, void* data, size_t bytes) {
  if (!output.has(kOutput) || !output.data || bytes != output.nbytes())
    throw Error("cpu backend: cannot read output '" + output.name + "' into " + std::to_string(bytes) + " bytes");
  std::memcpy(data, output.data, bytes);
}

void CpuBackend::bind_leaves(Graph& graph) {
  for (Tensor* node : graph.nodes())
    for (Tensor* leaf : {node->src[0], node->src[1], node->src[2], node->view_src})
      if (leaf) bind_leaf(*leaf);
}

void CpuBackend::bind_leaf(Tensor& leaf) {
  if (leaf.has(kWeight)) {
    if (!weight_infos_ || leaf.storage_index < 0 || static_cast<size_t>(leaf.storage_index) >= weight_infos_->size())
      throw Error("cpu backend: weight '" + leaf.name + "' is not among the loaded weights");
    leaf.data = weights_.data() + (*weight_infos_)[leaf.storage_index].offset;
  } else if (leaf.has(kKV)) {
    if (!kv_layout_ || leaf.storage_index < 0 || kv_layout_->offset(leaf.storage_index) + leaf.nbytes() > kv_.size())
      throw Error("cpu backend: KV tensor '" + leaf.name + "' lies outside the allocated KV cache");
    leaf.data = kv_.data() + kv_layout_->offset(leaf.storage_index);
  }
}

void CpuBackend::pack_weights(const Graph& graph) {
  for (Tensor* w : weights_to_pack(graph, [&](const Tensor& t) { return is_packed(&t); })) {
    const int64_t chunk_blocks = packed_chunk_blocks(*w);
    const int64_t unit = packed_rows_unit(chunk_blocks);
    const int64_t units = w->ne[1] * w->ne[2] / unit;  // a 3-d tensor's experts one after another
    const size_t unit_bytes = static_cast<size_t>(unit) * w->nb[1];
    pool_.run(pool_.size(), [&](int ith) {
      const WorkRange mine = split_work(units, ith, pool_.size());
      if (mine.begin < mine.end)
        pack_rows(w->type, w->ne[0], (mine.end - mine.begin) * unit, static_cast<char*>(w->data) + mine.begin * unit_bytes, chunk_blocks);
    });
    packed_[w->storage_index] = true;
  }
}

}  // namespace engine::cpu
