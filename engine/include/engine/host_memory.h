#pragma once
// Large host buffers (weights, KV cache) on 2 MiB pages where the kernel offers
// them (transparent huge pages). Streaming a model's weights through 4 KiB pages costs a TLB
// miss every 4 KiB and a scattered KV store one per row; huge pages remove nearly all of both.
// Without huge pages the buffer still works, on ordinary pages.
#include <cstddef>

namespace engine {

class HostMemory {
 public:
  HostMemory() = default;
  // `bytes` zero-filled bytes, page-aligned, backed up front (no step pays a page fault).
  // Throws Error naming the size when the memory cannot be mapped.
  explicit HostMemory(size_t bytes);
  ~HostMemory();
  HostMemory(HostMemory&& other) noexcept;
  HostMemory& operator=(HostMemory&& other) noexcept;
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;

  std::byte* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

// Bytes the system can still hand out without swapping (Linux: MemAvailable), 0 when unknown.
size_t available_host_memory();
// Bytes of memory the system has (Linux: MemTotal), 0 when unknown.
size_t total_host_memory();

}  // namespace engine
