#include "html_tables.h"

#include <cmath>
#include <vector>

#include "html_text.h"
#include "report_units.h"

namespace cost::html {

namespace {

using nlohmann::json;

enum class Align { kText, kNumber, kTree };
struct Column {
  std::string title;
  Align align;
};
using Row = std::vector<std::string>;

// Cells are plain text; a final row can be styled as the total.
std::string table(const std::vector<Column>& columns, const std::vector<Row>& rows, bool total_row = false) {
  static const char* const cls[] = {"", " class=\"r\"", " class=\"t\""};
  std::string s = "<div class=\"scroll\"><table><thead><tr>";
  for (const Column& c : columns) s += "<th" + std::string(cls[static_cast<int>(c.align)]) + ">" + escape(c.title) + "</th>";
  s += "</tr></thead><tbody>";
  for (size_t r = 0; r < rows.size(); ++r) {
    s += total_row && r + 1 == rows.size() ? "<tr class=\"total\">" : "<tr>";
    for (size_t c = 0; c < columns.size() && c < rows[r].size(); ++c)
      s += "<td" + std::string(cls[static_cast<int>(columns[c].align)]) + ">" + escape(rows[r][c]) + "</td>";
    s += "</tr>";
  }
  return s + "</tbody></table></div>\n";
}

std::string bytes_text(double b) { return std::isfinite(b) ? human_bytes(b) : "—"; }
std::string count_text(double n) { return std::isfinite(n) ? human_count(n) : "—"; }
std::string layer_text(double layer) { return std::isfinite(layer) && layer >= 0 ? fixed(layer, 0) : "—"; }

std::string card(const std::string& name, const std::string& value) {
  return "<div class=\"card\">" + escape(name) + "<b>" + escape(value) + "</b></div>";
}

}  // namespace

std::string phase_summary(const json& phase) {
  const double wall = num(phase, "wall_ms"), ops = num(phase, "op_ms_sum"), tokens = num(phase, "tokens");
  return "<div class=\"cards\">" + card("steps", fixed(num(phase, "steps"), 0)) + card("tokens", fixed(tokens, 0)) +
         card("wall time", fixed(wall, 3) + " ms") + card("tokens/s", fixed(tokens / wall * 1000, 2)) +
         card("sum of op times", fixed(ops, 3) + " ms (" + fixed(100 * ops / wall, 1) + " % of wall)") +
         card("work", count_text(num(phase, "flops")) + "FLOP, " + bytes_text(num(phase, "bytes"))) +
         card("achieved", fixed(num(phase, "tflops") * 1000, 2) + " GFLOP/s") + "</div>\n";
}

std::string ops_table(const json& phase) {
  std::vector<Row> rows;
  double ms = 0, calls = 0;
  for (const json& o : list(phase, "ops")) {
    rows.push_back({str(o, "label"), str(o, "op"), layer_text(num(o, "layer")), fixed(num(o, "ms"), 3),
                    fixed(num(o, "pct"), 2), fixed(num(o, "calls"), 0)});
    if (std::isfinite(num(o, "ms"))) ms += num(o, "ms");
    if (std::isfinite(num(o, "calls"))) calls += num(o, "calls");
  }
  rows.push_back({"TOTAL", "", "", fixed(ms, 3), "100.00", fixed(calls, 0)});
  return table({{"op", Align::kText}, {"type", Align::kText}, {"layer", Align::kNumber}, {"ms", Align::kNumber},
                {"%", Align::kNumber}, {"calls", Align::kNumber}},
               rows, true);
}

std::string module_tree_table(const json& phase) {
  std::vector<Row> rows;
  for (const json& m : list(phase, "modules"))
    rows.push_back({str(m, "art") + str(m, "name"), fixed(num(m, "self_ms"), 3), fixed(num(m, "total_ms"), 3),
                    fixed(num(m, "calls"), 0)});
  return table({{"module", Align::kTree}, {"self ms", Align::kNumber}, {"total ms", Align::kNumber},
                {"calls", Align::kNumber}},
               rows);
}

std::string layer_efficiency_table(const json& phase) {
  std::vector<Row> rows;
  for (const json& l : list(phase, "layers"))
    rows.push_back({layer_text(num(l, "layer")), fixed(num(l, "ms"), 3), count_text(num(l, "flops")),
                    bytes_text(num(l, "bytes")), fixed(num(l, "gflops_s"), 2), fixed(num(l, "gb_s"), 2),
                    fixed(num(l, "roofline_pct"), 1)});
  return table({{"layer", Align::kNumber}, {"ms", Align::kNumber}, {"FLOP", Align::kNumber}, {"bytes", Align::kNumber},
                {"GFLOP/s", Align::kNumber}, {"GB/s", Align::kNumber}, {"roofline %", Align::kNumber}},
               rows);
}

std::string op_type_table(const json& phase) {
  double total = 0;
  for (const json& t : list(phase, "op_types"))
    if (std::isfinite(num(t, "total_ms"))) total += num(t, "total_ms");
  std::vector<Row> rows;
  for (const json& t : list(phase, "op_types"))
    rows.push_back({str(t, "op"), fixed(num(t, "count"), 0), fixed(num(t, "total_ms"), 3), fixed(num(t, "mean_ms"), 4),
                    fixed(100 * num(t, "total_ms") / total, 1)});
  return table({{"op type", Align::kText}, {"count", Align::kNumber}, {"total ms", Align::kNumber},
                {"mean ms", Align::kNumber}, {"% of op time", Align::kNumber}},
               rows);
}

std::string slowest_table(const json& phase) {
  std::vector<Row> rows;
  for (const json& s : list(phase, "slowest"))
    rows.push_back({str(s, "name"), str(s, "op"), layer_text(num(s, "layer")), fixed(num(s, "ms"), 4)});
  return table({{"node", Align::kText}, {"op", Align::kText}, {"layer", Align::kNumber}, {"ms", Align::kNumber}}, rows);
}

std::string predicted_vs_measured_table(const json& phase) {
  std::vector<Row> rows;
  for (const json& l : list(phase, "layers"))
    rows.push_back({"layer " + layer_text(num(l, "layer")), fixed(num(l, "predicted_ms"), 3), fixed(num(l, "ms"), 3),
                    fixed(num(l, "ratio"), 2)});
  for (const json& t : list(phase, "op_types"))
    rows.push_back({"op " + str(t, "op"), fixed(num(t, "predicted_ms"), 3), fixed(num(t, "total_ms"), 3),
                    num(t, "predicted_ms") > 0 ? fixed(num(t, "ratio"), 2) : "-"});  // a view: predicted no time
  return table({{"scope", Align::kText}, {"predicted ms", Align::kNumber}, {"measured ms", Align::kNumber},
                {"measured / predicted", Align::kNumber}},
               rows);
}

std::string memory_summary(const json& memory) {
  return "<div class=\"cards\">" + card("weights", bytes_text(num(memory, "weights"))) +
         card("KV cache", bytes_text(num(memory, "kv_cache"))) +
         card("compute buffer", bytes_text(num(memory, "compute_buffer"))) +
         card("peak RSS", bytes_text(num(memory, "peak_rss"))) + "</div>\n";
}

std::string bench_tests_table(const json& tests) {
  std::vector<Row> rows;
  for (const json& t : tests) {
    const double roof = num(t, "roofline_fraction");
    const std::string calibrated = str(t, "hardware_calibrated");
    rows.push_back({str(t, "model_desc"), str(t, "test"), fixed(num(t, "avg_ts"), 2), fixed(num(t, "stddev_ts"), 2),
                    fixed(num(t, "predicted_ts"), 2),
                    str(t, "hardware") + (calibrated.empty() ? "" : ", calibrated " + calibrated),
                    std::isfinite(roof) ? fixed(100 * roof, 1) : "", bytes_text(num(t, "session_bytes")),
                    bytes_text(num(t, "peak_rss"))});
  }
  return table({{"model", Align::kText}, {"test", Align::kText}, {"t/s", Align::kNumber}, {"± sd", Align::kNumber},
                {"predicted t/s", Align::kNumber}, {"hardware profile", Align::kText}, {"roofline %", Align::kNumber},
                {"session bytes", Align::kNumber}, {"peak RSS", Align::kNumber}},
               rows);
}

std::string sweep_table(const std::string& kind, const json& points) {
  const char* xk = kind == "pp" ? "tokens" : "depth";
  std::vector<Row> rows;
  for (const json& p : points)
    rows.push_back({str(p, "model"), fixed(num(p, xk), 0), fixed(num(p, "t_s"), 2), fixed(num(p, "sd"), 2),
                    bytes_text(num(p, "weights")), bytes_text(num(p, "kv_cache")), bytes_text(num(p, "compute_buffer")),
                    bytes_text(num(p, "session_bytes")), bytes_text(num(p, "peak_rss"))});
  return table({{"model", Align::kText}, {kind == "pp" ? "prompt tokens" : "depth", Align::kNumber},
                {"t/s", Align::kNumber}, {"± sd", Align::kNumber}, {"weights", Align::kNumber},
                {"KV cache", Align::kNumber}, {"compute buffer", Align::kNumber}, {"session", Align::kNumber},
                {"peak RSS", Align::kNumber}},
               rows);
}

}  // namespace cost::html
