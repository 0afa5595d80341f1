#pragma once
// Owned CUDA allocations: device memory (cudaMalloc) and pinned host memory (cudaMallocHost),
// freed with their owner; size() is what was asked for, the figure the backend reports.
#include <cstddef>
#include <utility>

namespace engine::cuda {

class Memory {
 public:
  enum class Kind { kDevice, kPinnedHost };
  Memory() = default;
  Memory(size_t bytes, Kind kind);  // throws Error naming the bytes where the allocation fails
  ~Memory();
  Memory(Memory&& o) noexcept { *this = std::move(o); }
  Memory& operator=(Memory&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
    std::swap(kind_, o.kind_);
    return *this;
  }
  char* data() const { return data_; }
  size_t size() const { return bytes_; }

 private:
  char* data_ = nullptr;
  size_t bytes_ = 0;
  Kind kind_ = Kind::kDevice;
};

}  // namespace engine::cuda
