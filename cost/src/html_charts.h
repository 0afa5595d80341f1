#pragma once
// The HTML report's charts, each an inline-SVG <figure> drawn from the profile or bench document.
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace cost::html {

// A color per op type, the same in every chart: by time summed over all phases, largest first.
using OpColors = std::map<std::string, std::string>;
OpColors op_colors(const nlohmann::json& profile);

// Time of each layer (from the phase's "ops"), stacked by op type.
std::string layer_time_chart(const std::string& id, const std::string& phase_name, const nlohmann::json& phase,
                             const OpColors& colors);
// Every node at (flops/byte, GFLOP/s) under the memory-bandwidth slope and the compute ceilings.
std::string roofline_chart(const std::string& id, const std::string& phase_name, const nlohmann::json& phase,
                           const nlohmann::json& hardware, const OpColors& colors);
// Measured and roofline-predicted time per op type.
std::string op_type_chart(const std::string& id, const std::string& phase_name, const nlohmann::json& phase,
                          const OpColors& colors);

// A sweep of engine-bench ("pp" over "tokens", "tg" over "depth"): tokens/s with ±sd bars, one line per model.
std::string sweep_throughput_chart(const std::string& id, const std::string& kind, const nlohmann::json& points);
// The same sweep's memory: the session's bytes (weights + KV + compute buffer), its KV cache, the peak RSS.
std::string sweep_memory_chart(const std::string& id, const std::string& kind, const nlohmann::json& points);

}  // namespace cost::html
