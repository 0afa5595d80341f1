#pragma once
// Inline SVG charts for the HTML report: scales with ticks, a framed plot area with a
// title, axis labels and a legend; the chart functions draw marks into it in pixels.
#include <string>
#include <utility>
#include <vector>

namespace cost::svg {

// Maps data values to pixels along one axis: linear, log10, or bands of named categories.
class Scale {
 public:
  // Widened to round tick values (powers of ten for log) unless `exact`.
  static Scale linear(double lo, double hi, std::string label, bool exact = false);
  static Scale log(double lo, double hi, std::string label, bool exact = false);
  static Scale bands(std::vector<std::string> names, std::string label);
  // Ticks at exactly these values (e.g. the measured points of a sweep).
  Scale& ticks_at(std::vector<double> values);

  void set_pixels(double p0, double p1);  // where lo and hi land
  double operator()(double v) const;
  double band_start(size_t i) const;
  double band_width() const;
  bool is_bands() const { return !names_.empty(); }
  const std::vector<std::string>& names() const { return names_; }
  // Bands: pixels a label needs along the axis; narrower bands label every k-th band.
  void set_label_room(double pixels) { label_room_ = pixels; }
  const std::string& label() const { return label_; }
  double lo() const { return lo_; }
  double hi() const { return hi_; }

  struct Tick {
    double pixel;
    std::string text;
  };
  std::vector<Tick> ticks() const;

 private:
  enum class Kind { kLinear, kLog, kBands };
  Kind kind_ = Kind::kLinear;
  double lo_ = 0, hi_ = 1, step_ = 0.2;
  double p0_ = 0, p1_ = 1;
  std::vector<std::string> names_;
  std::vector<double> fixed_ticks_;
  double label_room_ = 14;
  std::string label_;
};

struct LegendEntry {
  std::string name;
  std::string color;
  std::string dash;  // stroke-dasharray of a line entry; "" draws a filled swatch
};

// One chart. Marks are SVG elements in pixel coordinates (use x() and y()), clipped to the
// plot area and tagged for the page's self-test.
class Plot {
 public:
  Plot(std::string id, std::string title, Scale x, Scale y, int width = 720, int height = 360);
  const Scale& x() const { return x_; }
  const Scale& y() const { return y_; }
  double left() const { return left_; }
  double right() const { return right_; }
  double top() const { return top_; }
  double bottom() const { return bottom_; }

  void mark(std::string element) { marks_.push_back(std::move(element)); }
  void legend(std::vector<LegendEntry> entries) { legend_ = std::move(entries); }
  void caption(std::string text) { caption_ = std::move(text); }
  std::string html() const;  // <figure class="chart"> with the <svg> and the caption

 private:
  std::string id_, title_;
  Scale x_, y_;
  int width_, height_;
  double left_, right_, top_, bottom_;
  std::vector<std::string> marks_;
  std::vector<LegendEntry> legend_;
  std::string caption_;
};

// Mark elements; `tip` becomes a hover tooltip.
std::string rect(double x, double y, double w, double h, const std::string& fill, const std::string& tip);
std::string circle(double cx, double cy, double r, const std::string& fill, const std::string& tip);
std::string polyline(const std::vector<std::pair<double, double>>& points, const std::string& stroke, double width,
                     const std::string& dash = "", const std::string& css_class = "mark");
std::string text(double x, double y, const std::string& s, const std::string& anchor, const std::string& css_class);

// A distinct color per index (Tableau 10), grey after the tenth.
std::string palette(size_t i);

}  // namespace cost::svg
