#include "cost/process_memory.h"

#include <fstream>
#include <sstream>
#include <string>

namespace cost {

size_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    size_t kib = 0;
    std::string unit;
    if (fields >> kib >> unit && unit == "kB") return kib * 1024;
    return 0;
  }
  return 0;
}

}  // namespace cost
