#pragma once
// Architecture presets of public models (the JSON files of models/presets/, compiled in).
// A preset becomes a header-only model: every tensor declared, no weights, so the cost
// analyzer can walk its graph with no file at all.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model.h"
#include "engine/synth.h"

namespace engine {

struct Preset {
  std::string name;         // "llama-3-8b"
  std::string description;  // "Llama 3 8B (Meta)"
  SynthSpec spec;           // shape; spec.type is the published weights' dtype
};

const std::vector<Preset>& presets();
// The preset `name`; throws Error listing the known names when there is none.
const Preset& find_preset(std::string_view name);
// A header-only model of the preset, its matrices in `type` (default: the preset's).
std::unique_ptr<Model> preset_model(const Preset& preset, std::optional<DType> type = std::nullopt);

}  // namespace engine
