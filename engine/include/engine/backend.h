#pragma once
// A backend holds a model's weights, a KV cache and a compute buffer in memory of its own,
// and runs a graph's nodes in order. The graph says where each tensor lives (a weight, a KV
// tensor, a place in the plan), never an address; the backend binds it. Per-op timing comes
// from the backend's own clock and goes to a Profiler as {node, op, name, layer, backend, ns}.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/graph.h"
#include "engine/kv_cache.h"
#include "engine/model.h"
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
  // Room for `n` more records, taken before a step's timed loop: a reallocation inside it
  // (page faults on fresh memory: milliseconds) would land in one op's time.
  void make_room(size_t n) {
    if (records_.capacity() - records_.size() < n) records_.reserve(std::max(2 * records_.capacity(), records_.size() + n));
  }
  const std::vector<OpTiming>& records() const { return records_; }
  void clear() { records_.clear(); }

 private:
  std::vector<OpTiming> records_;
};

// One device a backend can run on, as list_devices() reports it.
struct DeviceInfo {
  std::string backend;      // "cpu", "vulkan", "cuda"
  int index = 0;            // the backend's device number (BackendParams::device)
  std::string name;         // "AMD EPYC 9R14"
  size_t memory_bytes = 0;  // the device's memory (the CPU: the system's)
  size_t free_bytes = 0;    // of it, free now (the CPU: MemAvailable)
  std::string driver;       // what runs the kernels ("avx512" for the CPU: its kernel set)
  std::string type;         // "cpu", "discrete-gpu", "integrated-gpu", "virtual-gpu", "software" (a GPU API on the CPU)
  int subgroup_size = 0;    // threads that run in lockstep (SIMD width, warp), 0 for the CPU
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // The device this backend runs on.
  virtual const DeviceInfo& device() const = 0;
  // Whether this backend can execute `node` (its op with its sources' dtypes).
  virtual bool supports(const Tensor& node) const = 0;
  // Takes the model's weights into storage of its own, in the layouts its kernels read. The
  // model is left as it was, so other backends can take it too. Once, before any allocate.
  virtual void load_weights(const Model& model) = 0;
  // Allocates a zero-filled KV cache laid out as `kv` says. Before any allocate.
  virtual void allocate_kv(const KVCache& kv) = 0;
  // Reserves the plan's compute buffer and binds the graph's tensors to storage: weight and KV
  // leaves, placed tensors, views. Inputs can be set after this.
  virtual void allocate(Graph& graph, const Plan& plan) = 0;
  // Binds again the graph last allocated, with the plan it was allocated with, after
  // rebase_step moved its views and multiplies to another position (a session does this every
  // decode step): what a backend derived from the nodes and the plan still holds, so it may
  // keep it. Another graph is allocated. By default, allocate.
  virtual void rebind(Graph& graph, const Plan& plan) { allocate(graph, plan); }
  // Writes an input tensor (kInput) of the allocated graph; `bytes` must be its size.
  virtual void set_input(const Tensor& input, const void* data, size_t bytes) = 0;
  // Reads an output tensor (kOutput) after compute; `bytes` must be its size.
  virtual void get_output(const Tensor& output, void* data, size_t bytes) = 0;
  // Returns when every computation handed to the backend has finished.
  virtual void synchronize() = 0;
  // Runs every node of the graph in order; records one OpTiming per node when profiler
  // is non-null. Throws Error naming the first node it does not support. A backend may
  // compute consecutive nodes in one pass; a tensor of such a group that no other node reads
  // and that is not a graph output may then be left unwritten.
  virtual void compute(const Graph& graph, Profiler* profiler) = 0;
  // Bytes held for the weights, the KV cache, the compute buffer, and work memory outside the
  // plan (scratch_bytes: the CPU kernels' work memory, kernels/cpu/scratch.h; Vulkan's dispatch
  // records and staging; allocate reserves it for the graph, and compute never grows it).
  virtual size_t weights_bytes() const = 0;
  virtual size_t kv_cache_bytes() const = 0;
  virtual size_t compute_buffer_bytes() const = 0;
  virtual size_t scratch_bytes() const = 0;
  // Whether multiplies of `weight` matrices over a prompt's tokens keep the activations in
  // float instead of quantizing them to the weight's dot-product format (Q8_0 / Q8_K, as
  // llama.cpp does): their results then stand to llama.cpp's as a float forward pass does.
  virtual bool prefill_float_activations(DType /*weight*/) const { return false; }
  // Whether its attention kernels skip the positions a causal mask hides: the products of two
  // or more queries a head (kMulMatCausal) and their softmax. The cost model's calibrated rates
  // are then of the work done, not of the dense work the graph counts.
  virtual bool skips_masked_attention() const { return false; }
};

struct BackendParams {
  int device = 0;     // which of the backend's devices (list_devices)
  int n_threads = 0;  // CPU worker threads (0: all hardware threads)
};

// The backends this product has, built into this binary or not ("cpu", "cuda", "vulkan").
std::vector<std::string> known_backends();
// The backends built into this binary.
std::vector<std::string> available_backends();
// Every device of every backend built in, backend by backend.
std::vector<DeviceInfo> list_devices();
// Throws Error unless `name` is a backend built into this binary with a device `device`: an
// unknown name is named with the known ones, a known one that was not built says so, and a
// device it does not have is named with the count it has.
void check_backend(std::string_view name, int device = 0);
// Device `device` of backend `name`; throws Error as check_backend does.
DeviceInfo device_info(std::string_view name, int device);
// The backend `name` on device params.device. Throws Error as check_backend does.
std::unique_ptr<Backend> make_backend(std::string_view name, const BackendParams& params);
// The scratch bytes (Backend::scratch_bytes) that backend `name` with `n_threads` threads
// reserves for `graph` placed by `plan`, computed without a backend.
size_t backend_scratch_bytes(std::string_view name, const Graph& graph, const Plan& plan, int n_threads);

// The CPU backend with `n_threads` worker threads (0: all hardware threads).
std::unique_ptr<Backend> make_cpu_backend(int n_threads);

// What a CPU decode form streamed with each way of requesting its weight ahead: into L2 far ahead
// and into L1 a short way ahead as well ("near+far"), into L2 only ("far"), or not at all (the
// hardware prefetcher alone: "none"). GB/s, the median of each one's passes; 0: not timed.
struct CpuRequestRates {
  double near_and_far_gbs = 0, far_only_gbs = 0, no_requests_gbs = 0;
};

// How a CPU decode form requests its weight ahead on one class of rows, those of at least
// `row_elements` elements (the first class: any shorter too) up to the next class's: the way of
// the three timed in turns on rows of `row_elements`, on all threads and on one alone, kept as a
// form is (CpuDecodeForm).
struct CpuStreamRequests {
  int64_t row_elements = 0;
  std::string chosen;
  CpuRequestRates all_threads, one_thread;
};

// What a dtype's one-column products streamed in each form when timed, each form with the way of
// requesting its weight ahead kept for it (GB/s; 0: not timed: no choice, not on this CPU, or
// ENGINE_CPU_TUNE=0).
struct CpuFormRates {
  double avx2_gbs = 0, avx2_vnni_gbs = 0, avx512_gbs = 0;
};

// The instruction set ("avx2", "avx512-bf16", ...) the CPU backend's one-column products
// (decode) of a weight dtype run on. Where the CPU has more than AVX2, each of its AVX2, AVX2 +
// VNNI and AVX-512 forms is timed on this machine with each way of requesting its weight ahead, on
// all threads and on one thread alone (the GB/s figures, each the median of its timed passes;
// every form gives the same bits). Of the ways within the swings of a shared host of the fastest
// on all threads, the one fastest alone is kept: first each form's way, then the form; then the
// form's way on each other class of row length. A choice cached per CPU model in a file
// (cpu_decode_forms_path).
struct CpuDecodeForm {
  DType weight;
  std::string form;
  CpuFormRates all_threads;             // every thread streaming its share at once, as decode does
  CpuFormRates one_thread;              // one thread alone, its arithmetic less hidden behind memory
  std::vector<CpuStreamRequests> rows;  // by row length, shortest first
};
// The forms in use, chosen first where not yet (from the cache, else timed); with `retime`,
// timed now and the cache rewritten (engine-bench --tune).
std::vector<CpuDecodeForm> cpu_decode_forms(bool retime = false);
// The cache file of that choice on this machine (empty where there is no folder for it).
std::string cpu_decode_forms_path();

}  // namespace engine
