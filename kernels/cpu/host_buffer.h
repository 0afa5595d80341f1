#pragma once
// The CPU backend's compute buffer and scratch: page-aligned bytes, backed up front as the
// weights and KV cache are (HostMemory: no step pays a page fault), that only ever grow.
#include <cstddef>

#include "engine/host_memory.h"

namespace engine::cpu {

class HostBuffer {
 public:
  void reserve(size_t bytes) {
    if (bytes > memory_.size()) memory_ = HostMemory(bytes);
  }
  void* data() const { return memory_.data(); }
  size_t size() const { return memory_.size(); }

 private:
  HostMemory memory_;
};

}  // namespace engine::cpu
