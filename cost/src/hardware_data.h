#pragma once
// The hardware profile JSON files (cost/hardware/*.json), embedded at build time.
#include <span>
#include <string_view>

namespace cost::detail {

struct EmbeddedFile {
  std::string_view file_name;  // "h100-sxm.json"
  std::string_view text;
};

// In file-name order.
std::span<const EmbeddedFile> embedded_hardware_files();

}  // namespace cost::detail
