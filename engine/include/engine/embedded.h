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

// models/stories260K.gguf, a real trained model (models/README.md): the model the tools
// use when given none. Open it with GGUFFile::from_bytes.
EmbeddedFile embedded_default_model();

}  // namespace engine
