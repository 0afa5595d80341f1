#pragma once
// The CPU backend's compute buffer and scratch: 64-byte aligned bytes that only ever grow.
#include <cstddef>
#include <memory>
#include <new>

#include "engine/plan.h"

namespace engine::cpu {

class HostBuffer {
 public:
  void reserve(size_t bytes) {
    if (bytes <= size_) return;
    data_.reset(static_cast<std::byte*>(::operator new(bytes, std::align_val_t{Plan::kAlignment})));
    size_ = bytes;
  }
  void* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(std::byte* p) const { ::operator delete(p, std::align_val_t{Plan::kAlignment}); }
  };
  std::unique_ptr<std::byte, Free> data_;
  size_t size_ = 0;
};

}  // namespace engine::cpu
