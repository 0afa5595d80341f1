#pragma once
// Number spellings of the trace, which follows Python's conventions.
#include <string>

namespace cost {

// Python's repr of a float: "49152.0", "1e+16", "0.5".
std::string py_float(double v);
// C's "%g": "1.22288e+11", "177".
std::string g_format(double v);

}  // namespace cost
