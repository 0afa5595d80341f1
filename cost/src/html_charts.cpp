#include "html_charts.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "html_text.h"
#include "svg_chart.h"

namespace cost::html {

namespace {

using nlohmann::json;

constexpr size_t kMaxLegendOps = 11;  // more op types than this share one "other" color
const std::string kOther = "other";

std::string color_of(const OpColors& colors, const std::string& op) {
  const auto it = colors.find(op);
  return it != colors.end() ? it->second : svg::palette(kMaxLegendOps);
}

// The op types of `ops` (objects with "op" and a time under `ms_key`), largest total first,
// with those beyond the legend's room folded into "other".
std::vector<std::string> ranked_ops(const json& ops, const char* ms_key, const OpColors& colors) {
  std::map<std::string, double> total;
  for (const json& o : ops) total[str(o, "op")] += std::max(0.0, num(o, ms_key));
  std::vector<std::string> names;
  for (const auto& [op, ms] : total) names.push_back(op);
  std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) { return total[a] > total[b]; });
  std::vector<std::string> shown;
  bool other = false;
  for (const std::string& op : names) {
    if (colors.count(op) && shown.size() < kMaxLegendOps) shown.push_back(op);
    else other = true;
  }
  if (other) shown.push_back(kOther);
  return shown;
}

std::string legend_op(const std::vector<std::string>& shown, const std::string& op) {
  return std::find(shown.begin(), shown.end(), op) != shown.end() ? op : kOther;
}

std::vector<svg::LegendEntry> op_legend(const std::vector<std::string>& shown, const OpColors& colors) {
  std::vector<svg::LegendEntry> entries;
  for (const std::string& op : shown) entries.push_back({op, color_of(colors, op), ""});
  return entries;
}

}  // namespace

OpColors op_colors(const json& profile) {
  std::map<std::string, double> total;
  const json& phases = profile.contains("phases") ? profile["phases"] : json::object();
  for (const auto& [name, phase] : phases.items())
    for (const json& t : list(phase, "op_types")) total[str(t, "op")] += std::max(0.0, num(t, "total_ms"));
  std::vector<std::string> names;
  for (const auto& [op, ms] : total) names.push_back(op);
  std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) { return total[a] > total[b]; });
  OpColors colors;
  for (size_t i = 0; i < names.size() && i < kMaxLegendOps; ++i) colors[names[i]] = svg::palette(i);
  return colors;
}

std::string layer_time_chart(const std::string& id, const std::string& phase_name, const json& phase,
                             const OpColors& colors) {
  const json& ops = list(phase, "ops");
  const std::vector<std::string> shown = ranked_ops(ops, "ms", colors);
  std::map<double, std::map<std::string, double>> by_layer;  // layer -> op -> ms; "rest" (layer < 0) last
  for (const json& o : ops) {
    const double layer = num(o, "layer");
    by_layer[std::isfinite(layer) && layer >= 0 ? layer : 1e18][legend_op(shown, str(o, "op"))] +=
        std::max(0.0, num(o, "ms"));
  }
  std::vector<std::string> names;
  double top = 0;
  for (const auto& [layer, ms] : by_layer) {
    names.push_back(layer_name(layer < 1e18 ? layer : -1));
    double sum = 0;
    for (const auto& [op, v] : ms) sum += v;
    top = std::max(top, sum);
  }
  svg::Plot plot(id, phase_name + ": time per layer by op type", svg::Scale::bands(names, "layer"),
                 svg::Scale::linear(0, top, "time (ms, all steps)"));
  size_t i = 0;
  for (const auto& [layer, ms] : by_layer) {
    double base = 0;
    for (const std::string& op : shown) {
      const auto it = ms.find(op);
      if (it == ms.end() || it->second <= 0) continue;
      const double y0 = plot.y()(base), y1 = plot.y()(base + it->second);
      plot.mark(svg::rect(plot.x().band_start(i), y1, plot.x().band_width(), y0 - y1, color_of(colors, op),
                          names[i] + " " + op + ": " + fixed(it->second, 3) + " ms"));
      base += it->second;
    }
    ++i;
  }
  plot.legend(op_legend(shown, colors));
  plot.caption("Summed over " + fixed(num(phase, "steps"), 0) +
               " step(s); \"rest\" holds the nodes outside the layers (embeddings, final norm, output).");
  return plot.html();
}

std::string roofline_chart(const std::string& id, const std::string& phase_name, const json& phase,
                           const json& hardware, const OpColors& colors) {
  const double bw = num(hardware, "mem_bw_gbs");  // GB/s x flop/byte = GFLOP/s
  struct Ceiling {
    std::string name;
    double gflops;
  };
  std::vector<Ceiling> ceilings;
  const json& peaks = hardware.contains("peak_tflops") ? hardware["peak_tflops"] : json::object();
  for (const char* c : {"f32", "f16", "bf16", "int8"}) {
    const double g = num(peaks, c) * 1000;
    if (!(g > 0)) continue;
    const auto same = std::find_if(ceilings.begin(), ceilings.end(), [&](const Ceiling& e) { return e.gflops == g; });
    if (same != ceilings.end()) same->name += "/" + std::string(c);
    else ceilings.push_back({c, g});
  }
  const double roof_top = ceilings.empty() ? NAN : std::max_element(ceilings.begin(), ceilings.end(), [](auto& a, auto& b) {
                                                     return a.gflops < b.gflops;
                                                   })->gflops;
  const json& nodes = list(phase, "nodes");
  std::vector<const json*> placed;
  double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
  for (const json& n : nodes) {
    const double x = num(n, "intensity"), y = num(n, "achieved_gflops_s");
    if (!(x > 0) || !(y > 0) || !std::isfinite(x) || !std::isfinite(y)) continue;
    placed.push_back(&n);
    xlo = std::min(xlo, x), xhi = std::max(xhi, x), ylo = std::min(ylo, y), yhi = std::max(yhi, y);
  }
  if (bw > 0 && roof_top > 0) xhi = std::max(xhi, 4 * roof_top / bw), yhi = std::max(yhi, roof_top);
  svg::Plot plot(id, phase_name + ": roofline, every node", svg::Scale::log(xlo, xhi, "arithmetic intensity (flop/byte)"),
                 svg::Scale::log(ylo, yhi * 1.5, "achieved throughput (GFLOP/s)"), 720, 400);
  const double x0 = plot.x().lo(), x1 = plot.x().hi();
  std::vector<svg::LegendEntry> legend;
  if (bw > 0) {
    const double ridge = roof_top > 0 ? roof_top / bw : x1;
    plot.mark(svg::polyline({{plot.x()(x0), plot.y()(bw * x0)}, {plot.x()(ridge), plot.y()(bw * ridge)}}, "#222", 2));
    legend.push_back({"memory roof " + fixed(bw, 1) + " GB/s", "#222", "solid"});
  }
  // Highest ceiling first, each with its own dash pattern, named in the legend.
  std::sort(ceilings.begin(), ceilings.end(), [](const Ceiling& a, const Ceiling& b) { return a.gflops > b.gflops; });
  static const char* const dashes[] = {"7 3", "3 3", "9 3 2 3", "1 3"};
  for (size_t i = 0; i < ceilings.size(); ++i) {
    const Ceiling& c = ceilings[i];
    const double from = bw > 0 ? c.gflops / bw : x0;
    plot.mark(svg::polyline({{plot.x()(from), plot.y()(c.gflops)}, {plot.x()(x1), plot.y()(c.gflops)}}, "#222", 1.5,
                            dashes[i % 4]));
    legend.push_back({c.name + " peak " + si(c.gflops) + " GFLOP/s", "#222", dashes[i % 4]});
  }
  std::vector<std::string> shown = ranked_ops(nodes, "ms", colors);
  for (const json* n : placed) {
    const std::string op = str(*n, "op");
    plot.mark(svg::circle(plot.x()(num(*n, "intensity")), plot.y()(num(*n, "achieved_gflops_s")), 4,
                          color_of(colors, legend_op(shown, op)),
                          str(*n, "name") + " (" + op + ", " + layer_name(num(*n, "layer")) + "): " +
                              si(num(*n, "intensity")) + " flop/B, " + si(num(*n, "achieved_gflops_s")) + " GFLOP/s, " +
                              fixed(num(*n, "ms"), 3) + " ms"));
  }
  for (const svg::LegendEntry& e : op_legend(shown, colors)) legend.push_back(e);
  plot.legend(legend);
  plot.caption(std::to_string(placed.size()) + " of " + std::to_string(nodes.size()) +
               " nodes placed; nodes without arithmetic (views, copies) or without measured time have no point. "
               "Hardware: " + str(hardware, "name") + ".");
  return plot.html();
}

std::string op_type_chart(const std::string& id, const std::string& phase_name, const json& phase,
                          const OpColors& colors) {
  const json& types = list(phase, "op_types");
  std::vector<std::string> names;
  double top = 0;
  for (const json& t : types) {
    names.push_back(str(t, "op"));
    for (const char* k : {"total_ms", "predicted_ms"})
      if (std::isfinite(num(t, k))) top = std::max(top, num(t, k));
  }
  svg::Plot plot(id, phase_name + ": time by op type", svg::Scale::linear(0, top, "time (ms, all steps)"),
                 svg::Scale::bands(names, "op type"), 720, std::max(240, 90 + 22 * static_cast<int>(names.size())));
  for (size_t i = 0; i < names.size(); ++i) {
    const json& t = types[i];
    const double y = plot.y().band_start(i), h = plot.y().band_width(), x0 = plot.x()(0);
    plot.mark(svg::rect(x0, y, plot.x()(std::max(0.0, num(t, "total_ms"))) - x0, 0.6 * h, color_of(colors, names[i]),
                        names[i] + " measured: " + fixed(num(t, "total_ms"), 3) + " ms over " +
                            fixed(num(t, "count"), 0) + " runs"));
    if (num(t, "predicted_ms") >= 0)
      plot.mark(svg::rect(x0, y + 0.62 * h, plot.x()(num(t, "predicted_ms")) - x0, 0.3 * h, "#555",
                          names[i] + " predicted: " + fixed(num(t, "predicted_ms"), 3) + " ms"));
  }
  plot.legend({{"measured", svg::palette(0), ""}, {"predicted (roofline)", "#555", ""}});
  plot.caption("Measured bars take the op type's color; the thin grey bar under each is the cost model's roofline "
               "prediction.");
  return plot.html();
}

namespace {

struct Series {
  std::string model;
  std::vector<const json*> points;
};

// The sweep's points grouped by model, each sorted along x.
std::vector<Series> by_model(const json& points, const char* x_key) {
  std::vector<Series> out;
  for (const json& p : points) {
    const std::string m = str(p, "model");
    auto it = std::find_if(out.begin(), out.end(), [&](const Series& s) { return s.model == m; });
    if (it == out.end()) it = out.insert(out.end(), Series{m, {}});
    it->points.push_back(&p);
  }
  for (Series& s : out)
    std::stable_sort(s.points.begin(), s.points.end(),
                     [&](const json* a, const json* b) { return num(*a, x_key) < num(*b, x_key); });
  return out;
}

// x of a sweep: log when every x is positive and they span 4x or more, ticks at the measured values.
svg::Scale sweep_x(const json& points, const char* x_key, const std::string& label) {
  std::set<double> xs;
  for (const json& p : points)
    if (std::isfinite(num(p, x_key))) xs.insert(num(p, x_key));
  const double lo = xs.empty() ? 0 : *xs.begin(), hi = xs.empty() ? 1 : *xs.rbegin();
  // Bounds just beyond the points, so no space goes to lengths that were not measured.
  svg::Scale s = lo > 0 && hi >= 4 * lo
                     ? svg::Scale::log(lo / 1.25, hi * 1.25, label + ", log scale", true)
                     : svg::Scale::linear(lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo), label, hi > lo);
  s.ticks_at({xs.begin(), xs.end()});
  return s;
}

const char* sweep_x_key(const std::string& kind) { return kind == "pp" ? "tokens" : "depth"; }
std::string sweep_x_label(const std::string& kind) { return kind == "pp" ? "prompt tokens" : "context depth (tokens)"; }

}  // namespace

std::string sweep_throughput_chart(const std::string& id, const std::string& kind, const json& points) {
  const char* xk = sweep_x_key(kind);
  double top = 0;
  for (const json& p : points) top = std::max(top, num(p, "t_s") + std::max(0.0, std::isfinite(num(p, "sd")) ? num(p, "sd") : 0));
  const std::string title = kind == "pp" ? "prompt processing throughput against prompt length"
                                         : "generation throughput against context depth";
  svg::Plot plot(id, title, sweep_x(points, xk, sweep_x_label(kind)), svg::Scale::linear(0, top, "throughput (tokens/s)"));
  std::vector<svg::LegendEntry> legend;
  const std::vector<Series> series = by_model(points, xk);
  for (size_t s = 0; s < series.size(); ++s) {
    const std::string color = svg::palette(s);
    std::vector<std::pair<double, double>> line;
    for (const json* p : series[s].points) {
      const double x = plot.x()(num(*p, xk)), ts = num(*p, "t_s"), sd = std::isfinite(num(*p, "sd")) ? num(*p, "sd") : 0;
      line.emplace_back(x, plot.y()(ts));
      // An error bar shorter than a pixel would be an invisible, sizeless mark: drawn only when seen.
      const double lo = plot.y()(ts - sd), hi = plot.y()(ts + sd);
      if (std::abs(lo - hi) >= 1) plot.mark(svg::polyline({{x, lo}, {x, hi}}, color, 1.5));
    }
    plot.mark(svg::polyline(line, color, 2));
    for (const json* p : series[s].points)
      plot.mark(svg::circle(plot.x()(num(*p, xk)), plot.y()(num(*p, "t_s")), 4, color,
                            series[s].model + " " + kind + " @ " + fixed(num(*p, xk), 0) + ": " + fixed(num(*p, "t_s"), 2) +
                                " ± " + fixed(num(*p, "sd"), 2) + " t/s"));
    legend.push_back({series[s].model.empty() ? kind : series[s].model, color, "solid"});
  }
  plot.legend(legend);
  plot.caption("Mean of the repetitions; bars show ± one standard deviation.");
  return plot.html();
}

std::string sweep_memory_chart(const std::string& id, const std::string& kind, const json& points) {
  const char* xk = sweep_x_key(kind);
  constexpr double kMiB = 1024.0 * 1024.0;
  struct Line {
    const char* key;
    const char* name;
    const char* dash;
  };
  const Line lines[] = {{"session_bytes", "session total", "solid"},
                        {"kv_cache", "KV cache", "2 3"},
                        {"peak_rss", "peak RSS (process)", "7 4"}};
  double top = 0;
  for (const json& p : points)
    for (const Line& l : lines)
      if (std::isfinite(num(p, l.key))) top = std::max(top, num(p, l.key) / kMiB);
  const std::string title = kind == "pp" ? "memory against prompt length" : "memory against context depth";
  svg::Plot plot(id, title, sweep_x(points, xk, sweep_x_label(kind)), svg::Scale::linear(0, top, "memory (MiB)"));
  // Color tells the model, the dash pattern the quantity.
  std::vector<svg::LegendEntry> legend;
  const std::vector<Series> series = by_model(points, xk);
  for (size_t s = 0; s < series.size(); ++s) {
    const std::string color = svg::palette(s);
    legend.push_back({series[s].model.empty() ? kind : series[s].model, color, ""});
    for (const Line& l : lines) {
      std::vector<std::pair<double, double>> line;
      for (const json* p : series[s].points) {
        const double v = num(*p, l.key) / kMiB;
        if (!std::isfinite(v)) continue;
        line.emplace_back(plot.x()(num(*p, xk)), plot.y()(v));
        plot.mark(svg::circle(line.back().first, line.back().second, 3, color,
                              series[s].model + " " + l.name + " @ " + fixed(num(*p, xk), 0) + ": " + fixed(v, 2) + " MiB"));
      }
      if (!line.empty()) plot.mark(svg::polyline(line, color, 2, std::string(l.dash) == "solid" ? "" : l.dash));
    }
  }
  for (const Line& l : lines) legend.push_back({l.name, "#555", l.dash});
  plot.legend(legend);
  plot.caption("Session total = weights + KV cache + compute buffer, as the engine allocates them for the point "
               "(its context sized to the point); peak RSS is the process high-water mark while the point ran.");
  return plot.html();
}

}  // namespace cost::html
