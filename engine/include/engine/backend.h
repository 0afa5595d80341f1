#pragma once
// A backend runs a graph's nodes in order. Per-op timing comes from the backend's own
// clock and goes to a Profiler as {node, op, name, layer, backend, ns}.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/graph.h"
#include "engine/plan.h"

namespace engine {

struct OpTiming {
  int node;  // index in graph.nodes()
  Op op;
  std::string name;
  int layer;
  std::string backend;
  uint64_t ns;
};

class Profiler {
 public:
  void record(OpTiming t) { records_.push_back(std::move(t)); }
  const std::vector<OpTiming>& records() const { return records_; }
  void clear() { records_.clear(); }

 private:
  std::vector<OpTiming> records_;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Whether this backend can execute `node` (its op with its sources' dtypes).
  virtual bool supports(const Tensor& node) const = 0;
  // Reserves the plan's compute buffer and binds every placed tensor and view to it.
  // Weights and KV tensors must already have data. Input tensors are writable after this.
  virtual void allocate(const Graph& graph, const Plan& plan) = 0;
  // Runs every node of the graph in order; records one OpTiming per node when profiler
  // is non-null. Throws Error naming the first node it does not support. A backend may
  // compute consecutive nodes in one pass; a tensor of such a group that no other node reads
  // and that is not a graph output may then be left unwritten.
  virtual void compute(const Graph& graph, Profiler* profiler) = 0;
  // Bytes currently held for compute buffers.
  virtual size_t compute_buffer_bytes() const = 0;
  // Whether multiplies of `weight` matrices over a prompt's tokens keep the activations in
  // float instead of quantizing them to the weight's dot-product format (Q8_0 / Q8_K, as
  // llama.cpp does): their results then stand to llama.cpp's as a float forward pass does.
  virtual bool prefill_float_activations(DType /*weight*/) const { return false; }
};

// The CPU backend with `n_threads` worker threads (0: all hardware threads).
std::unique_ptr<Backend> make_cpu_backend(int n_threads);

}  // namespace engine
