#pragma once
// The HTML report's tables: the profile views of one phase, engine-bench's tests and sweeps.
#include <nlohmann/json.hpp>
#include <string>

namespace cost::html {

std::string phase_summary(const nlohmann::json& phase);        // steps, tokens, wall time, op-time coverage, rates
std::string ops_table(const nlohmann::json& phase);            // per op: label, type, layer, ms, %, calls; TOTAL row
std::string module_tree_table(const nlohmann::json& phase);    // the module tree with self / total time
std::string layer_efficiency_table(const nlohmann::json& phase);  // per layer: work, rates, roofline %
std::string op_type_table(const nlohmann::json& phase);        // per op type: count, total, mean, share
std::string slowest_table(const nlohmann::json& phase);        // the slowest node executions
std::string predicted_vs_measured_table(const nlohmann::json& phase);  // per layer and per op type
std::string memory_summary(const nlohmann::json& memory);      // weights, KV cache, compute buffer, peak RSS

std::string bench_tests_table(const nlohmann::json& tests);    // engine-bench's records
std::string sweep_table(const std::string& kind, const nlohmann::json& points);  // "pp" or "tg" sweep points

}  // namespace cost::html
