#include "number_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace cost {

std::string py_float(double v) {
  char buf[64];
  const double mag = std::fabs(v);
  if (mag != 0 && (mag >= 1e16 || mag < 1e-4)) {
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    return std::string(buf, end);
  }
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  std::string s(buf, end);
  if (s.find('.') == std::string::npos) s += ".0";
  return s;
}

std::string g_format(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace cost
