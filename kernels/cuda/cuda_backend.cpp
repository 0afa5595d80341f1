// The CUDA backend's memory and step: the weights copied up once, the KV cache, the compute
// buffer; at allocate every node's launch with its tensors' device addresses; at compute the
// inputs copied up, the launches queued in order, the outputs copied down, with no wait
// between them (get_output waits).
#include "cuda/cuda_backend.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "common/graph_walk.h"
#include "cuda/cuda_check.h"
#include "engine/error.h"
#include "engine/model.h"

namespace engine::cuda {
namespace {

constexpr size_t kUploadChunk = 64ull << 20;  // weights go up through pinned staging of this size

}  // namespace

Memory::Memory(size_t bytes, Kind kind) : bytes_(bytes), kind_(kind) {
  if (bytes == 0) return;
  void* p = nullptr;
  const cudaError_t result = kind == Kind::kDevice ? cudaMalloc(&p, bytes) : cudaMallocHost(&p, bytes);
  if (result != cudaSuccess) {
    cudaGetLastError();
    throw Error("cuda: allocating " + std::to_string(bytes) + " bytes of " +
                (kind == Kind::kDevice ? "device" : "pinned host") + " memory failed: " + cudaGetErrorString(result));
  }
  data_ = static_cast<char*>(p);
}

Memory::~Memory() {
  if (!data_) return;
  if (kind_ == Kind::kDevice)
    cudaFree(data_);
  else
    cudaFreeHost(data_);
}

size_t scratch_bytes(const Graph& graph) { return staged_bytes(inputs_of(graph)) + staged_bytes(outputs_of(graph)); }

std::unique_ptr<Backend> make_backend(int device) { return std::make_unique<CudaBackend>(device); }

CudaBackend::CudaBackend(int device) : device_index_(device) {
  const std::vector<DeviceInfo> all = devices();
  if (all.empty()) throw Error("cuda: no device found (no driver reports one)");
  if (device < 0 || static_cast<size_t>(device) >= all.size())
    throw Error("cuda: no device " + std::to_string(device) + " (it has " + std::to_string(all.size()) + ")");
  info_ = all[static_cast<size_t>(device)];
  make_current();
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  attention_max_kv_ = attention_max_kv(device);
}

CudaBackend::~CudaBackend() {
  cudaSetDevice(device_index_);
  cudaStreamSynchronize(stream_);
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
  cudaStreamDestroy(stream_);
}

void CudaBackend::make_current() const { check(cudaSetDevice(device_index_), "cudaSetDevice"); }

void CudaBackend::load_weights(const Model& model) {
  make_current();
  weight_infos_ = &model.file().tensors();
  const size_t bytes = model.weight_storage_bytes();
  weights_ = Memory(bytes, Memory::Kind::kDevice);
  const Memory staging(std::min(bytes, kUploadChunk), Memory::Kind::kPinnedHost);
  for (size_t done = 0; done < bytes;) {
    const size_t n = std::min(bytes - done, staging.size());
    model.file().copy_data(staging.data(), done, n);
    check(cudaMemcpy(weights_.data() + done, staging.data(), n, cudaMemcpyHostToDevice), "cudaMemcpy (weights)");
    done += n;
  }
}

void CudaBackend::allocate_kv(const KVCache& kv) {
  make_current();
  kv_ = Memory(kv.bytes(), Memory::Kind::kDevice);
  kv_layout_ = kv;
  check(cudaMemset(kv_.data(), 0, kv_.size()), "cudaMemset (KV cache)");
}

char* CudaBackend::address(const Tensor& t) const {
  const Placement at = placement(t, weight_infos_, kv_layout_, placed_, "cuda");
  const Memory* stores[] = {&weights_, &kv_, &buffer_};
  const Memory& store = *stores[static_cast<int>(at.store)];
  if (at.offset + t.nbytes() > store.size())
    throw Error("cuda backend: tensor '" + t.name + "' lies past the end of its memory (" +
                std::to_string(at.offset + t.nbytes()) + " > " + std::to_string(store.size()) + " bytes)");
  return store.data() + at.offset;
}

TensorArg CudaBackend::arg(const Tensor* t) const {
  TensorArg a;
  if (!t) return a;
  a.data = address(*t);
  for (int d = 0; d < kMaxDims; ++d) {
    a.ne[d] = t->ne[d];
    a.nb[d] = static_cast<int64_t>(t->nb[d]);
  }
  return a;
}

void CudaBackend::allocate(Graph& graph, const Plan& plan) {
  synchronize();  // the staging of the step before is rewritten
  if (plan.buffer_size > buffer_.size()) buffer_ = Memory(plan.buffer_size, Memory::Kind::kDevice);
  placed_.clear();
  for (const auto& [t, offset] : plan.offsets) placed_.emplace(t, offset);

  steps_.clear();
  const std::vector<Tensor*>& nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Tensor* node = nodes[i];
    if (fuses_device_attention(nodes, i, plan, attention_max_kv_)) {
      const Tensor* kq = node;
      const Tensor* soft_max = nodes[i + 1];
      const Tensor* kqv = nodes[i + 2];
      Launch l = make_attention_launch(*soft_max);
      const Tensor* bound[] = {kq->src[0], kq->src[1], kqv->src[0], soft_max->src[1]};
      for (int s = 0; s < 4; ++s) l.src[s] = arg(bound[s]);
      l.dst = arg(kqv);
      steps_.push_back({kqv, l});
      i += 2;
      continue;
    }
    if (!is_dispatched(node)) continue;
    if (!supports(*node)) throw unsupported_node(*node, "cuda");
    Launch l = make_launch(*node);
    for (int s = 0; s < kMaxSrc; ++s) l.src[s] = arg(node->src[s]);
    l.dst = arg(node);
    steps_.push_back({node, l});
  }

  const std::vector<const Tensor*> inputs = inputs_of(graph), outputs = outputs_of(graph);
  if (staged_bytes(inputs) > upload_.size()) upload_ = Memory(staged_bytes(inputs), Memory::Kind::kPinnedHost);
  if (staged_bytes(outputs) > readback_.size()) readback_ = Memory(staged_bytes(outputs), Memory::Kind::kPinnedHost);
  inputs_.clear();
  outputs_.clear();
  size_t staged = 0;
  for (const Tensor* t : inputs) {
    inputs_.push_back({t, address(*t), staged});
    staged += staged_size(*t);
  }
  staged = 0;
  for (const Tensor* t : outputs) {
    outputs_.push_back({t, address(*t), staged});
    staged += staged_size(*t);
  }
  allocated_ = &graph;
}

void CudaBackend::set_input(const Tensor& input, const void* data, size_t bytes) {
  for (const Copy& c : inputs_)
    if (c.tensor == &input && bytes == input.nbytes()) {
      synchronize();
      std::memcpy(upload_.data() + c.staging, data, bytes);
      return;
    }
  throw Error("cuda backend: cannot set input '" + input.name + "' from " + std::to_string(bytes) + " bytes");
}

void CudaBackend::get_output(const Tensor& output, void* data, size_t bytes) {
  for (const Copy& c : outputs_)
    if (c.tensor == &output && bytes == output.nbytes()) {
      synchronize();
      std::memcpy(data, readback_.data() + c.staging, bytes);
      return;
    }
  throw Error("cuda backend: cannot read output '" + output.name + "' into " + std::to_string(bytes) + " bytes");
}

void CudaBackend::synchronize() {
  make_current();
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (a kernel of the step failed)");
}

void CudaBackend::compute(const Graph& graph, Profiler* profiler) {
  if (&graph != allocated_) throw Error("cuda backend: compute of a graph other than the one last allocated");
  make_current();
  for (const Copy& in : inputs_)
    check(cudaMemcpyAsync(in.device, upload_.data() + in.staging, in.tensor->nbytes(), cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync (inputs)");
  while (profiler && events_.size() < steps_.size() + 1) {
    cudaEvent_t e;
    check(cudaEventCreate(&e), "cudaEventCreate");
    events_.push_back(e);
  }
  if (profiler) check(cudaEventRecord(events_[0], stream_), "cudaEventRecord");
  for (size_t i = 0; i < steps_.size(); ++i) {
    launch(steps_[i].launch, stream_);
    if (profiler) check(cudaEventRecord(events_[i + 1], stream_), "cudaEventRecord");
  }
  for (const Copy& out : outputs_)
    check(cudaMemcpyAsync(readback_.data() + out.staging, out.device, out.tensor->nbytes(), cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync (outputs)");
  if (!profiler) return;

  synchronize();
  // Views and the CPY results that alias their destination took no launch: zero time.
  size_t step = 0;
  const auto& nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Tensor* node = nodes[i];
    uint64_t ns = 0;
    if (step < steps_.size() && steps_[step].node == node) {
      float ms = 0.0f;
      check(cudaEventElapsedTime(&ms, events_[step], events_[step + 1]), "cudaEventElapsedTime");
      ns = static_cast<uint64_t>(static_cast<double>(ms) * 1e6);
      ++step;
    }
    profiler->record({static_cast<int>(i), node->op, node->name, node->layer, "cuda", ns});
  }
}

}  // namespace engine::cuda
