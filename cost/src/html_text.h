#pragma once
// Text pieces of the HTML report: escaping, number spellings, tolerant reads of the json documents.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace cost::html {

std::string escape(std::string_view s);  // & < > " ' as entities
std::string fixed(double v, int decimals);  // "12.35"; "—" when v is not finite
std::string si(double v);                   // "1.5k", "20M", "0.05": axis ticks, short labels

// A documents' field, or NaN / "" / an empty array when it is absent or of another type, so
// a partial document yields a partial report rather than an exception.
double num(const nlohmann::json& j, const char* key);
std::string str(const nlohmann::json& j, const char* key);
const nlohmann::json& list(const nlohmann::json& j, const char* key);

std::string layer_name(double layer);  // "L3"; "rest" for nodes outside the layers (layer < 0)

}  // namespace cost::html
