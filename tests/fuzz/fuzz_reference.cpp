// Fuzz target: the reference JSONL reader of engine-run --replay on arbitrary text. A malformed line
// must raise engine::Error naming it; a crash, a sanitizer report or any other exception is a bug.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "engine/error.h"
#include "reference_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    for (const ReferenceLine& line : read_reference(in, "fuzz.jsonl"))
      for (const auto& step : line.top10)
        if (step.empty()) __builtin_trap();  // the reader promises non-empty steps
  } catch (const engine::Error&) {
  }
  return 0;
}
