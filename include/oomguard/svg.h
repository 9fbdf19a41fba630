// One writer for every picture oomguard draws (plan and fit pages, split bars,
// watch timelines): escaping, axes with nice ticks, series, reference lines,
// legends. Output is plain SVG text, self-contained (no scripts, no fonts, no
// network), so pages work offline and tests can parse it with any XML parser.
//
// Thread safety: an SvgPlot is a value; use one per thread.
#pragma once

#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace oomguard::svg {

// Escapes &, <, >, " and ' for XML/HTML text and attribute values.
std::string Escape(std::string_view text);

// A number with at most `decimals` decimals and no trailing zeros ("12", "0.25").
std::string Num(double v, int decimals = 1);

// Round tick values covering [lo, hi]: about `target` ticks on 1-2-5 steps,
// the first at or below lo and the last at or above hi. REQUIRES: target >= 2.
// A degenerate or non-finite range gives {lo, lo + 1}.
std::vector<double> NiceTicks(double lo, double hi, int target = 5);

// Round tick values for byte axes on binary steps (1, 2, 4, 5 x 2^(10k) bytes
// where that reads better than decimal steps). Same contract as NiceTicks.
std::vector<double> ByteTicks(double lo, double hi, int target = 5);

struct Box {
  double width = 760, height = 400;
  double left = 80, right = 20, top = 34, bottom = 50;
};

// A 2-D plot with linear axes. Draw calls clip data to the plot area; every
// element carries a class so tests and style sheets can find it.
class SvgPlot {
 public:
  using Label = std::function<std::string(double)>;

  SvgPlot(Box box, double x_lo, double x_hi, double y_lo, double y_hi);

  double X(double x) const;  // data -> pixels, clamped to the plot area
  double Y(double y) const;
  double x_hi() const { return x_hi_; }
  double y_hi() const { return y_hi_; }
  // True when (x, y) lies inside the data ranges.
  bool Inside(double x, double y) const;

  void Title(const std::string& text);
  // Axes with grid lines at `x_ticks`/`y_ticks`, labelled by the formatters.
  void Axes(const std::vector<double>& x_ticks, const Label& x_label, const std::vector<double>& y_ticks,
            const Label& y_label, const std::string& x_caption, const std::string& y_caption);
  void Polyline(const std::vector<std::pair<double, double>>& points, const std::string& color,
                const std::string& css_class, const std::string& tooltip, double width = 2);
  // A straight segment in data coordinates; `dash` like "6,4" or empty.
  void Line(double x0, double y0, double x1, double y1, const std::string& color, const std::string& css_class,
            const std::string& dash = "");
  void HLine(double y, const std::string& color, const std::string& css_class, const std::string& label,
             const std::string& dash = "6,4");
  void VLine(double x, const std::string& color, const std::string& css_class, const std::string& label,
             const std::string& dash = "3,3");
  void Dot(double x, double y, const std::string& color, const std::string& css_class, const std::string& tooltip);
  // Text at data coordinates; anchor is start, middle or end.
  void Text(double x, double y, const std::string& text, const std::string& anchor = "start",
            const std::string& color = "black", double dy = 0);
  // Text at pixel coordinates (for notes outside the plot area).
  void TextAt(double px, double py, const std::string& text, const std::string& anchor = "start",
              const std::string& color = "black", const std::string& css_class = "note");
  // A filled rectangle in data coordinates.
  void Rect(double x0, double y0, double x1, double y1, const std::string& color, const std::string& css_class,
            const std::string& tooltip);
  // A filled band between two series over the same xs (one layer of a stacked
  // area). REQUIRES: xs, lower and upper have the same size.
  void Band(const std::vector<double>& xs, const std::vector<double>& lower, const std::vector<double>& upper,
            const std::string& color, const std::string& css_class, const std::string& tooltip);
  void LegendEntry(const std::string& name, const std::string& color);

  std::string Finish();
  const Box& box() const { return box_; }

 private:
  Box box_;
  double x_lo_, x_hi_, y_lo_, y_hi_;
  int legend_entries_ = 0;
  double legend_x_ = 0;  // where the next legend entry starts, from box_.left
  int legend_row_ = 0;
  bool has_title_ = false;  // legends start lower, under the title
  std::ostringstream out_;
};

// A finished picture and its size, for stacking.
struct Panel {
  std::string svg;
  double width = 0, height = 0;
};

// The pictures one above the other in one SVG document.
std::string Stack(const std::vector<Panel>& panels);

}  // namespace oomguard::svg
