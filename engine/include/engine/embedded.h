#pragma once
// Data files compiled into the library (see cmake/EmbedFiles.cmake).
#include <string_view>
#include <vector>

namespace engine {

struct EmbeddedFile {
  std::string_view name;     // file name, e.g. "llama-3-8b.json"
  std::string_view content;
};

// The model presets of models/presets/, in name order.
const std::vector<EmbeddedFile>& embedded_presets();

}  // namespace engine
