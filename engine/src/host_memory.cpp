#include "engine/host_memory.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include "engine/error.h"

namespace engine {

HostMemory::HostMemory(size_t bytes) {
  if (bytes == 0) return;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw Error("cannot allocate " + std::to_string(bytes) + " bytes of host memory: " + std::strerror(errno));
  // Both best effort: without transparent huge pages 4 KiB pages serve, and without
  // MADV_POPULATE_WRITE the pages fault in on first touch.
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE);
#endif
#ifdef MADV_POPULATE_WRITE
  madvise(p, bytes, MADV_POPULATE_WRITE);
#endif
  data_ = static_cast<std::byte*>(p);
  size_ = bytes;
}

HostMemory::~HostMemory() {
  if (data_) munmap(data_, size_);
}

HostMemory::HostMemory(HostMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

HostMemory& HostMemory::operator=(HostMemory&& other) noexcept {
  if (this != &other) {
    if (data_) munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

namespace {

// A /proc/meminfo figure ("MemAvailable:") in bytes, 0 when absent.
size_t meminfo_bytes(const std::string& wanted) {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  size_t kib = 0;
  while (meminfo >> key >> kib) {
    if (key == wanted) return kib * 1024;
    meminfo.ignore(256, '\n');
  }
  return 0;
}

}  // namespace

size_t available_host_memory() { return meminfo_bytes("MemAvailable:"); }

size_t total_host_memory() { return meminfo_bytes("MemTotal:"); }

}  // namespace engine
