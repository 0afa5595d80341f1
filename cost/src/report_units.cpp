#include "report_units.h"

#include <cmath>
#include <cstdio>

namespace cost {
namespace {

std::string scaled(double v, const char* const* units, int n_units, double step, const char* fmt) {
  int u = 0;
  while (u + 1 < n_units && std::fabs(v) >= step) v /= step, ++u;
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v, units[u]);
  return buf;
}

}  // namespace

std::string human_bytes(double bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  return scaled(bytes, units, 5, 1024.0, "%.2f %s");
}

std::string human_count(double n) {
  static const char* const units[] = {"", "K", "M", "G", "T", "P"};
  std::string s = scaled(n, units, 6, 1000.0, "%.3g %s");
  if (s.back() == ' ') s.pop_back();  // no unit below a thousand
  return s;
}

std::string human_seconds(double s) {
  char buf[64];
  if (s >= 1) std::snprintf(buf, sizeof buf, "%.3f s", s);
  else if (s >= 1e-3) std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.3f us", s * 1e6);
  return buf;
}

}  // namespace cost
