#include "cost/html_report.h"

#include <nlohmann/json.hpp>
#include <string>

#include "html_charts.h"
#include "html_tables.h"
#include "html_text.h"
#include "report_units.h"

namespace cost {

namespace {

using nlohmann::json;
using html::escape;

// Nothing may load from anywhere; a blocked attempt shows up as a self-test error.
constexpr const char* kHead = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<script>
window.__reportErrors = [];
window.addEventListener('error', function (e) {
  window.__reportErrors.push('error: ' + (e.message || (e.target && e.target.outerHTML) || 'unknown'));
}, true);
window.addEventListener('securitypolicyviolation', function (e) {
  window.__reportErrors.push('blocked: ' + e.blockedURI + ' (' + e.violatedDirective + ')');
});
(function () {
  var original = console.error;
  console.error = function () {
    window.__reportErrors.push('console.error: ' + Array.prototype.join.call(arguments, ' '));
    original.apply(console, arguments);
  };
})();
</script>
<style>
body { font: 14px/1.45 system-ui, "DejaVu Sans", sans-serif; color: #222; margin: 0 auto; max-width: 1400px; padding: 12px 24px 40px; }
h1 { font-size: 22px; margin: 8px 0 2px; } h2 { font-size: 19px; margin: 28px 0 8px; border-bottom: 2px solid #4e79a7; }
h3 { font-size: 15px; margin: 16px 0 6px; } .meta { color: #555; margin: 0 0 8px; }
nav a { margin-right: 14px; color: #4e79a7; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 8px 0; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: 6px 12px; color: #555; font-size: 12px; }
.card b { display: block; color: #222; font-size: 16px; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(560px, 1fr)); gap: 14px; }
figure.chart { margin: 0; border: 1px solid #ddd; border-radius: 6px; padding: 6px 8px; background: #fff; }
figure.chart svg { display: block; width: 100%; height: auto; }
figcaption { font-size: 12px; color: #555; }
svg .title { font-size: 15px; font-weight: 600; fill: #222; } svg .tick { font-size: 11px; fill: #444; }
svg .axis { font-size: 12.5px; fill: #222; } svg text.legend { font-size: 11.5px; fill: #222; }
svg .frame { fill: none; stroke: #999; }
.tables { display: grid; grid-template-columns: repeat(auto-fit, minmax(620px, 1fr)); gap: 6px 18px; }
.wide { grid-column: 1 / -1; }
.scroll { max-height: 340px; overflow: auto; border: 1px solid #ddd; border-radius: 4px; }
table { border-collapse: collapse; width: 100%; font-size: 12.5px; }
th, td { padding: 2px 8px; border-bottom: 1px solid #eee; text-align: left; white-space: nowrap; }
thead th { position: sticky; top: 0; background: #f3f5f8; }
.r { text-align: right; font-variant-numeric: tabular-nums; }
.t { font-family: "DejaVu Sans Mono", monospace; white-space: pre; }
tr.total td { font-weight: 600; border-top: 2px solid #999; }
footer { margin-top: 30px; color: #555; font-size: 12px; } #selftest { white-space: pre-wrap; }
</style>
)";

// After load the page measures its own charts, so a browser-driven test can read the result.
constexpr const char* kSelfTest = R"(<script>
function reportSelfTest() {
  var charts = [];
  document.querySelectorAll('figure.chart').forEach(function (f) {
    var svg = f.querySelector('svg'), box = svg ? svg.getBoundingClientRect() : { width: 0, height: 0 };
    var marks = f.querySelectorAll('.mark'), drawn = 0;
    marks.forEach(function (m) { var b = m.getBoundingClientRect(); if (b.width > 0 || b.height > 0) drawn++; });
    charts.push({ id: f.id, title: svg ? svg.getAttribute('aria-label') : '', width: box.width, height: box.height,
                  marks: marks.length, drawn_marks: drawn });
  });
  document.getElementById('selftest').textContent = JSON.stringify({
    charts: charts, tables: document.querySelectorAll('table').length,
    external_refs: document.querySelectorAll('[src], link[href], [href^="http"]').length,
    errors: window.__reportErrors });
}
reportSelfTest();
window.addEventListener('load', reportSelfTest);
</script>
)";

std::string titled(const std::string& title, const std::string& body) {
  return "<div><h3>" + escape(title) + "</h3>" + body + "</div>\n";
}

std::string phase_section(const std::string& key, const json& phase, const json& profile, const html::OpColors& colors) {
  const std::string name = key == "prefill" ? "Prefill" : key == "decode" ? "Decode" : key;
  const json& hardware = profile.contains("hardware") ? profile["hardware"] : json::object();
  std::string s = "<section id=\"" + escape(key) + "\"><h2>" + escape(name) + "</h2>\n" + html::phase_summary(phase);
  s += "<div class=\"charts\">\n" + html::layer_time_chart(key + "-layers", name, phase, colors) +
       html::roofline_chart(key + "-roofline", name, phase, hardware, colors) +
       html::op_type_chart(key + "-optypes", name, phase, colors) + "</div>\n";
  s += "<div class=\"tables\">\n" + titled("Per-op profile", html::ops_table(phase)) +
       titled("Module tree", html::module_tree_table(phase)) +
       titled("Efficiency per layer", html::layer_efficiency_table(phase)) +
       titled("Op-type summary", html::op_type_table(phase)) + titled("Slowest nodes", html::slowest_table(phase)) +
       titled("Predicted vs measured", html::predicted_vs_measured_table(phase)) + "</div></section>\n";
  return s;
}

std::string profile_header(const json& profile) {
  const json& model = profile.contains("model") ? profile["model"] : json::object();
  const json& hw = profile.contains("hardware") ? profile["hardware"] : json::object();
  std::string s = "<p class=\"meta\">" + escape(html::str(model, "arch")) + ", " +
                  html::fixed(html::num(model, "n_layer"), 0) + " layers, " + escape(html::str(model, "weight_type")) +
                  ", " + html::si(html::num(model, "params")) + " parameters; backend " +
                  escape(html::str(profile, "backend")) + ", " + html::fixed(html::num(profile, "threads"), 0) +
                  " threads; hardware " + escape(html::str(hw, "name")) +
                  (html::str(hw, "calibrated").empty() ? "" : ", calibrated " + escape(html::str(hw, "calibrated"))) +
                  " (" + html::fixed(html::num(hw, "mem_bw_gbs"), 1) + " GB/s)</p>\n";
  if (profile.contains("memory")) s += "<h3>Memory</h3>" + html::memory_summary(profile["memory"]);
  return s;
}

std::string bench_section(const json& bench) {
  std::string s = "<section id=\"bench\"><h2>Benchmark</h2>\n";
  const json& sweeps = bench.contains("sweeps") ? bench["sweeps"] : json::object();
  std::string charts, tables;
  for (const std::string kind : {"pp", "tg"}) {
    const json& points = html::list(sweeps, kind.c_str());
    if (points.empty()) continue;
    charts += html::sweep_throughput_chart("sweep-" + kind + "-throughput", kind, points) +
              html::sweep_memory_chart("sweep-" + kind + "-memory", kind, points);
    tables += "<div class=\"wide\"><h3>" + std::string(kind == "pp" ? "Prompt-length sweep" : "Context-depth sweep") +
              "</h3>" + html::sweep_table(kind, points) + "</div>\n";
  }
  if (!charts.empty()) s += "<div class=\"charts\">\n" + charts + "</div>\n";
  if (!html::list(bench, "tests").empty()) tables += titled("Tests", html::bench_tests_table(bench["tests"]));
  return s + "<div class=\"tables\">\n" + tables + "</div></section>\n";
}

}  // namespace

void write_html_report(std::ostream& out, const json* profile, const json* bench) {
  const json empty = json::object();
  const json& p = profile ? *profile : empty;
  const json& phases = p.contains("phases") && p["phases"].is_object() ? p["phases"] : empty;
  std::string source = html::str(p.contains("model") ? p["model"] : empty, "source");
  if (source.empty() && bench) source = html::str(*bench, "model_desc");
  out << kHead << "<title>engine report" << (source.empty() ? "" : ": " + escape(source)) << "</title></head><body>\n";
  out << "<header><h1>engine report" << (source.empty() ? "" : ": " + escape(source)) << "</h1>\n";
  if (profile) out << profile_header(p);
  out << "<nav>";
  for (const char* key : {"prefill", "decode"})
    if (phases.contains(key)) out << "<a href=\"#" << key << "\">" << key << "</a>";
  if (bench) out << "<a href=\"#bench\">benchmark</a>";
  out << "<a href=\"#selftest\">self-test</a></nav></header>\n";
  const html::OpColors colors = html::op_colors(p);
  for (const char* key : {"prefill", "decode"})
    if (phases.contains(key)) out << phase_section(key, phases[key], p, colors);
  if (bench) out << bench_section(*bench);
  out << "<footer><details><summary>page self-test (chart sizes, errors)</summary><pre id=\"selftest\"></pre>"
         "</details>Generated by the engine's cost library; self-contained: no scripts, styles or fonts are "
         "fetched.</footer>\n"
      << kSelfTest << "</body></html>\n";
}

}  // namespace cost
