#pragma once
// One self-contained HTML page from a profile document (cost::profile_json) and/or an
// engine-bench document with sweeps: inline CSS and SVG charts, no network at view time.
// Callers need nlohmann_json (header-only) to build the documents.
#include <nlohmann/json_fwd.hpp>
#include <ostream>

namespace cost {

// Writes the page. Either document may be null; its sections are then left out. Fields
// missing from a document leave blanks ("—") or empty charts rather than failing. The page
// checks itself after load: a JSON summary of every chart's size and any script or policy
// error lands in <pre id="selftest"> (read by tests/e2e/html_report_test.py).
void write_html_report(std::ostream& out, const nlohmann::json* profile, const nlohmann::json* bench);

}  // namespace cost
