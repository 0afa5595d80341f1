#pragma once
// The process's own memory as the kernel reports it.
#include <cstddef>

namespace cost {

// Peak resident set size (VmHWM in /proc/self/status) in bytes; 0 where it cannot be read.
size_t peak_rss_bytes();

}  // namespace cost
