#include <fstream>
#include <string>

#include "bench.h"

size_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // "VmHWM:   1234 kB"
  return 0;
}

bool reset_peak_rss() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";  // Linux: "5" resets the peak RSS to the current RSS
  clear_refs.flush();
  return static_cast<bool>(clear_refs);
}
