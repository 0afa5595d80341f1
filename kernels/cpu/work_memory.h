#pragma once
// The kernels' work memory (the CPU backend's scratch, scratch.h) comes in pieces of whole cache
// lines: each piece starts 64-byte aligned, and no two threads' slices share a line.
#include <cstddef>

namespace engine::cpu {

constexpr size_t kWorkAlign = 64;

// `bytes` rounded up to whole pieces.
constexpr size_t work_bytes(size_t bytes) { return (bytes + kWorkAlign - 1) / kWorkAlign * kWorkAlign; }

}  // namespace engine::cpu
