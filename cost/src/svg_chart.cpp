#include "svg_chart.h"

#include <algorithm>
#include <cmath>

#include "html_text.h"

namespace cost::svg {

namespace {

constexpr double kLegendWidth = 190;  // right margin that holds the legend

std::string px(double v) { return html::fixed(v, 1); }

// 1, 2 or 5 times a power of ten, near a fifth of the span: about five ticks.
double round_step(double span) {
  const double raw = span / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  return (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
}

}  // namespace

Scale Scale::linear(double lo, double hi, std::string label, bool exact) {
  Scale s;
  s.label_ = std::move(label);
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (hi <= lo) hi = lo + (lo == 0 ? 1 : std::fabs(lo));
  s.step_ = round_step(hi - lo);
  s.lo_ = exact ? lo : std::floor(lo / s.step_) * s.step_;
  s.hi_ = exact ? hi : std::ceil(hi / s.step_ - 1e-9) * s.step_;
  return s;
}

Scale Scale::log(double lo, double hi, std::string label, bool exact) {
  Scale s;
  s.kind_ = Kind::kLog;
  s.label_ = std::move(label);
  if (!(hi > 0) || !std::isfinite(hi)) hi = 1;
  if (!(lo > 0) || !std::isfinite(lo) || lo > hi) lo = hi / 1000;
  s.lo_ = exact ? lo : std::pow(10.0, std::floor(std::log10(lo)));
  s.hi_ = exact ? hi : std::pow(10.0, std::ceil(std::log10(hi)));
  if (s.hi_ <= s.lo_) s.hi_ = s.lo_ * 10;
  return s;
}

Scale Scale::bands(std::vector<std::string> names, std::string label) {
  Scale s;
  s.kind_ = Kind::kBands;
  s.names_ = std::move(names);
  if (s.names_.empty()) s.names_.push_back("");
  s.label_ = std::move(label);
  return s;
}

Scale& Scale::ticks_at(std::vector<double> values) {
  fixed_ticks_ = std::move(values);
  return *this;
}

void Scale::set_pixels(double p0, double p1) { p0_ = p0, p1_ = p1; }

double Scale::operator()(double v) const {
  switch (kind_) {
    case Kind::kLinear: return p0_ + (v - lo_) / (hi_ - lo_) * (p1_ - p0_);
    case Kind::kLog: return p0_ + std::log10(v / lo_) / std::log10(hi_ / lo_) * (p1_ - p0_);
    case Kind::kBands: return band_start(static_cast<size_t>(v)) + band_width() / 2;
  }
  return p0_;
}

double Scale::band_start(size_t i) const {
  const double step = std::fabs(p1_ - p0_) / static_cast<double>(names_.size());
  return std::min(p0_, p1_) + static_cast<double>(i) * step + 0.1 * step;
}

double Scale::band_width() const { return 0.8 * std::fabs(p1_ - p0_) / static_cast<double>(names_.size()); }

std::vector<Scale::Tick> Scale::ticks() const {
  std::vector<Tick> out;
  if (kind_ == Kind::kBands) {
    // Label every k-th band when the bands are too narrow for every name.
    const size_t stride = std::max<size_t>(1, static_cast<size_t>(std::ceil(label_room_ / (band_width() / 0.8))));
    for (size_t i = 0; i < names_.size(); i += stride) out.push_back({(*this)(static_cast<double>(i)), names_[i]});
    return out;
  }
  if (!fixed_ticks_.empty()) {
    for (double v : fixed_ticks_)
      if (v >= lo_ && v <= hi_) out.push_back({(*this)(v), v == std::round(v) ? html::fixed(v, 0) : html::si(v)});
    return out;
  }
  if (kind_ == Kind::kLinear) {
    const int n = static_cast<int>(std::lround((hi_ - lo_) / step_));
    for (int i = 0; i <= n; ++i) {
      const double v = lo_ + i * step_;
      out.push_back({(*this)(v), html::si(std::fabs(v) < step_ * 1e-9 ? 0 : v)});
    }
    return out;
  }
  const bool few_decades = hi_ / lo_ <= 100.5;  // then 2 and 5 get labels too
  for (double d = lo_; d <= hi_ * 1.0001; d *= 10) {
    out.push_back({(*this)(d), html::si(d)});
    if (few_decades && d * 10 <= hi_ * 1.0001)
      for (double m : {2.0, 5.0}) out.push_back({(*this)(d * m), html::si(d * m)});
  }
  return out;
}

Plot::Plot(std::string id, std::string title, Scale x, Scale y, int width, int height)
    : id_(std::move(id)), title_(std::move(title)), x_(std::move(x)), y_(std::move(y)), width_(width), height_(height) {
  auto longest = [](const Scale& s) {
    size_t n = 0;
    for (const std::string& name : s.names()) n = std::max(n, name.size());
    return static_cast<double>(n);
  };
  left_ = 36 + 7.2 * std::max(5.0, longest(y_));
  x_.set_label_room(10 + 7.2 * longest(x_));
  right_ = width_ - kLegendWidth;
  top_ = 40;
  bottom_ = height_ - 46;
  x_.set_pixels(left_, right_);
  y_.set_pixels(bottom_, top_);
}

std::string Plot::html() const {
  const double w = right_ - left_, h = bottom_ - top_;
  std::string s = "<figure class=\"chart\" id=\"" + html::escape(id_) + "\">";
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + std::to_string(width_) + " " +
       std::to_string(height_) + "\" role=\"img\" aria-label=\"" + html::escape(title_) + "\">";
  s += "<defs><clipPath id=\"" + html::escape(id_) + "-clip\"><rect x=\"" + px(left_) + "\" y=\"" + px(top_) +
       "\" width=\"" + px(w) + "\" height=\"" + px(h) + "\"/></clipPath></defs>";
  s += text(width_ / 2.0, 22, title_, "middle", "title");
  for (const Scale::Tick& t : x_.ticks()) {
    if (!x_.is_bands()) s += polyline({{t.pixel, top_}, {t.pixel, bottom_}}, "#e3e3e3", 1, "", "grid");
    s += text(t.pixel, bottom_ + 16, t.text, "middle", "tick");
  }
  for (const Scale::Tick& t : y_.ticks()) {
    if (!y_.is_bands()) s += polyline({{left_, t.pixel}, {right_, t.pixel}}, "#e3e3e3", 1, "", "grid");
    s += text(left_ - 6, t.pixel + 4, t.text, "end", "tick");
  }
  s += "<rect class=\"frame\" x=\"" + px(left_) + "\" y=\"" + px(top_) + "\" width=\"" + px(w) + "\" height=\"" +
       px(h) + "\"/>";
  s += "<g clip-path=\"url(#" + html::escape(id_) + "-clip)\">";
  for (const std::string& m : marks_) s += m;
  s += "</g>";
  s += text(left_ + w / 2, height_ - 10, x_.label(), "middle", "axis");
  s += "<text class=\"axis\" text-anchor=\"middle\" transform=\"translate(14 " + px(top_ + h / 2) +
       ") rotate(-90)\">" + html::escape(y_.label()) + "</text>";
  double ly = top_ + 6;
  for (const LegendEntry& e : legend_) {
    const double lx = right_ + 14;
    if (e.dash.empty())
      s += "<rect x=\"" + px(lx) + "\" y=\"" + px(ly - 9) + "\" width=\"12\" height=\"12\" fill=\"" + e.color + "\"/>";
    else
      s += polyline({{lx - 2, ly - 3}, {lx + 14, ly - 3}}, e.color, 2, e.dash == "solid" ? "" : e.dash, "legend");
    // Long names are cut to the legend's width; the full name is the entry's tooltip.
    size_t cut = e.name.size() > 27 ? 26 : e.name.size();
    while (cut < e.name.size() && (static_cast<unsigned char>(e.name[cut]) & 0xC0) == 0x80) --cut;  // whole UTF-8
    const std::string shown = cut < e.name.size() ? e.name.substr(0, cut) + "…" : e.name;
    s += "<g><title>" + html::escape(e.name) + "</title>" + text(lx + 20, ly + 1, shown, "start", "legend") + "</g>";
    ly += 18;
  }
  s += "</svg>";
  if (!caption_.empty()) s += "<figcaption>" + html::escape(caption_) + "</figcaption>";
  return s + "</figure>\n";
}

std::string rect(double x, double y, double w, double h, const std::string& fill, const std::string& tip) {
  return "<rect class=\"mark\" x=\"" + px(x) + "\" y=\"" + px(y) + "\" width=\"" + px(std::max(w, 0.0)) +
         "\" height=\"" + px(std::max(h, 0.0)) + "\" fill=\"" + fill + "\"><title>" + html::escape(tip) +
         "</title></rect>";
}

std::string circle(double cx, double cy, double r, const std::string& fill, const std::string& tip) {
  return "<circle class=\"mark\" cx=\"" + px(cx) + "\" cy=\"" + px(cy) + "\" r=\"" + px(r) + "\" fill=\"" + fill +
         "\" fill-opacity=\"0.75\" stroke=\"#333\" stroke-width=\"0.5\"><title>" + html::escape(tip) +
         "</title></circle>";
}

std::string polyline(const std::vector<std::pair<double, double>>& points, const std::string& stroke, double width,
                     const std::string& dash, const std::string& css_class) {
  std::string pts;
  for (const auto& [x, y] : points) pts += px(x) + "," + px(y) + " ";
  std::string s = "<polyline class=\"" + css_class + "\" fill=\"none\" points=\"" + pts + "\" stroke=\"" + stroke +
                  "\" stroke-width=\"" + px(width) + "\"";
  if (!dash.empty()) s += " stroke-dasharray=\"" + dash + "\"";
  return s + "/>";
}

std::string text(double x, double y, const std::string& s, const std::string& anchor, const std::string& css_class) {
  return "<text class=\"" + css_class + "\" x=\"" + px(x) + "\" y=\"" + px(y) + "\" text-anchor=\"" + anchor + "\">" +
         html::escape(s) + "</text>";
}

std::string palette(size_t i) {
  static const char* const colors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                       "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  return i < 10 ? colors[i] : "#8c8c8c";
}

}  // namespace cost::svg
