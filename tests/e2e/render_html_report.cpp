// Test helper: renders cost::write_html_report from json files (a fixture profile, an
// engine-bench json document), so the page can be checked in a browser before engine-run
// writes profiles itself. Usage: render-html-report OUT.html [--profile P.json] [--bench B.json]
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cost/html_report.h"

namespace {

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(in);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc % 2 != 0) {
    std::fprintf(stderr, "usage: render-html-report OUT.html [--profile P.json] [--bench B.json]\n");
    return 1;
  }
  try {
    std::optional<nlohmann::json> profile, bench;
    for (int i = 2; i + 1 < argc; i += 2) {
      const std::string flag = argv[i];
      if (flag == "--profile") profile = read_json(argv[i + 1]);
      else if (flag == "--bench") bench = read_json(argv[i + 1]);
      else throw std::runtime_error("unknown flag " + flag);
    }
    std::ofstream out(argv[1]);
    cost::write_html_report(out, profile ? &*profile : nullptr, bench ? &*bench : nullptr);
    out.close();
    if (!out) throw std::runtime_error(std::string("cannot write ") + argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "render-html-report: %s\n", e.what());
    return 1;
  }
  return 0;
}
