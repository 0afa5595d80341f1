// Fuzz target: the hardware profile reader on arbitrary text. A malformed profile must raise
// engine::Error; one that parses must survive writing and reading back unchanged.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string_view>

#include "cost/hardware.h"
#include "engine/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cost::HardwareProfile profile;
  try {
    profile = cost::parse_profile(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
  } catch (const engine::Error&) {
    return 0;
  }
  std::ostringstream written;
  cost::write_profile(profile, written, "fuzz");
  const cost::HardwareProfile again = cost::parse_profile(written.str(), "written profile");
  if (again.name != profile.name || again.mem_bw_gbs != profile.mem_bw_gbs || again.mul_mat_gbs != profile.mul_mat_gbs ||
      again.op_gbs != profile.op_gbs || again.device_names != profile.device_names)
    __builtin_trap();
  return 0;
}
