#pragma once
// The hardware profile JSON files (cost/hardware/*.json), embedded at build time.
#include <vector>

#include "engine/embedded.h"

namespace cost::detail {

// In file-name order.
const std::vector<engine::EmbeddedFile>& embedded_hardware_files();

}  // namespace cost::detail
