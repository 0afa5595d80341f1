#pragma once
// Human-readable quantities for the text report.
#include <string>

namespace cost {

std::string human_bytes(double bytes);   // "1.50 GiB"
std::string human_count(double n);       // "1.22 G"
std::string human_seconds(double s);     // "12.3 ms"

}  // namespace cost
