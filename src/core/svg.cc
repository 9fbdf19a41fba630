#include "oomguard/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace oomguard::svg {

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Num(double v, int decimals) {
  if (!std::isfinite(v)) return "0";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", std::clamp(decimals, 0, 6), v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

namespace {

std::vector<double> TicksWithStep(double lo, double hi, double step) {
  std::vector<double> ticks;
  double first = std::floor(lo / step) * step;
  for (int i = 0; i < 64; ++i) {
    double t = first + i * step;
    ticks.push_back(t);
    if (t >= hi - step * 1e-9) break;
  }
  return ticks;
}

bool Degenerate(double lo, double hi) { return !std::isfinite(lo) || !std::isfinite(hi) || hi <= lo; }

}  // namespace

std::vector<double> NiceTicks(double lo, double hi, int target) {
  if (Degenerate(lo, hi)) {
    double base = std::isfinite(lo) ? lo : 0;
    return {base, base + 1};
  }
  target = std::max(target, 2);
  double raw = (hi - lo) / (target - 1);
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  return TicksWithStep(lo, hi, step);
}

std::vector<double> ByteTicks(double lo, double hi, int target) {
  if (Degenerate(lo, hi)) return NiceTicks(lo, hi, target);
  target = std::max(target, 2);
  double raw = (hi - lo) / (target - 1);
  // The binary unit that keeps step counts small: KiB, MiB, GiB, TiB.
  double unit = 1;
  while (unit * 1024 <= raw && unit < std::pow(1024.0, 5)) unit *= 1024;
  double step = unit;
  for (double m : {1.0, 2.0, 4.0, 5.0, 8.0, 10.0, 16.0, 20.0, 25.0, 32.0, 50.0, 64.0, 100.0, 128.0, 200.0, 256.0,
                   500.0, 512.0, 1024.0}) {
    step = m * unit;
    if (step >= raw) break;
  }
  return TicksWithStep(lo, hi, step);
}

SvgPlot::SvgPlot(Box box, double x_lo, double x_hi, double y_lo, double y_hi)
    : box_(box), x_lo_(x_lo), x_hi_(x_hi), y_lo_(y_lo), y_hi_(y_hi) {
  if (Degenerate(x_lo_, x_hi_)) x_hi_ = x_lo_ + 1;
  if (Degenerate(y_lo_, y_hi_)) y_hi_ = y_lo_ + 1;
  out_ << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << Num(box_.width) << "\" height=\""
       << Num(box_.height) << "\" viewBox=\"0 0 " << Num(box_.width) << ' ' << Num(box_.height)
       << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
       << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
       << "<rect class=\"plot-area\" x=\"" << Num(box_.left) << "\" y=\"" << Num(box_.top) << "\" width=\""
       << Num(box_.width - box_.left - box_.right) << "\" height=\"" << Num(box_.height - box_.top - box_.bottom)
       << "\" fill=\"none\" stroke=\"none\"/>\n";
}

double SvgPlot::X(double x) const {
  double w = box_.width - box_.left - box_.right;
  double f = std::isfinite(x) ? (x - x_lo_) / (x_hi_ - x_lo_) : 0;
  return box_.left + w * std::clamp(f, 0.0, 1.0);
}

double SvgPlot::Y(double y) const {
  double h = box_.height - box_.top - box_.bottom;
  double f = std::isfinite(y) ? (y - y_lo_) / (y_hi_ - y_lo_) : 0;
  return box_.top + h * (1 - std::clamp(f, 0.0, 1.0));
}

bool SvgPlot::Inside(double x, double y) const {
  return x >= x_lo_ && x <= x_hi_ && y >= y_lo_ && y <= y_hi_;
}

void SvgPlot::Title(const std::string& text) {
  has_title_ = true;
  out_ << "<text class=\"title\" x=\"" << Num(box_.left) << "\" y=\"16\" font-size=\"14\" font-weight=\"bold\">"
       << Escape(text) << "</text>\n";
}

void SvgPlot::Axes(const std::vector<double>& x_ticks, const Label& x_label, const std::vector<double>& y_ticks,
                   const Label& y_label, const std::string& x_caption, const std::string& y_caption) {
  const double x0 = box_.left, x1 = box_.width - box_.right, y0 = box_.top, y1 = box_.height - box_.bottom;
  out_ << "<g class=\"axes\">\n";
  for (double t : y_ticks) {
    if (t < y_lo_ - 1e-9 * (y_hi_ - y_lo_) || t > y_hi_ + 1e-9 * (y_hi_ - y_lo_)) continue;
    out_ << "<line class=\"grid\" x1=\"" << Num(x0) << "\" y1=\"" << Num(Y(t)) << "\" x2=\"" << Num(x1)
         << "\" y2=\"" << Num(Y(t)) << "\" stroke=\"#e6e6e6\"/>"
         << "<text class=\"ytick\" x=\"" << Num(x0 - 6) << "\" y=\"" << Num(Y(t) + 4) << "\" text-anchor=\"end\">"
         << Escape(y_label(t)) << "</text>\n";
  }
  for (double t : x_ticks) {
    if (t < x_lo_ - 1e-9 * (x_hi_ - x_lo_) || t > x_hi_ + 1e-9 * (x_hi_ - x_lo_)) continue;
    out_ << "<line class=\"xgrid\" x1=\"" << Num(X(t)) << "\" y1=\"" << Num(y1) << "\" x2=\"" << Num(X(t))
         << "\" y2=\"" << Num(y1 + 4) << "\" stroke=\"black\"/>"
         << "<text class=\"xtick\" x=\"" << Num(X(t)) << "\" y=\"" << Num(y1 + 18) << "\" text-anchor=\"middle\">"
         << Escape(x_label(t)) << "</text>\n";
  }
  out_ << "<line x1=\"" << Num(x0) << "\" y1=\"" << Num(y1) << "\" x2=\"" << Num(x1) << "\" y2=\"" << Num(y1)
       << "\" stroke=\"black\"/><line x1=\"" << Num(x0) << "\" y1=\"" << Num(y0) << "\" x2=\"" << Num(x0)
       << "\" y2=\"" << Num(y1) << "\" stroke=\"black\"/>\n";
  out_ << "<text class=\"xcaption\" x=\"" << Num((x0 + x1) / 2) << "\" y=\"" << Num(box_.height - 8)
       << "\" text-anchor=\"middle\">" << Escape(x_caption) << "</text>\n";
  out_ << "<text class=\"ycaption\" transform=\"translate(14," << Num((y0 + y1) / 2)
       << ") rotate(-90)\" text-anchor=\"middle\">" << Escape(y_caption) << "</text>\n";
  out_ << "</g>\n";
}

void SvgPlot::Polyline(const std::vector<std::pair<double, double>>& points, const std::string& color,
                       const std::string& css_class, const std::string& tooltip, double width) {
  out_ << "<polyline class=\"" << Escape(css_class) << "\" fill=\"none\" stroke=\"" << Escape(color)
       << "\" stroke-width=\"" << Num(width) << "\" points=\"";
  for (const auto& [x, y] : points) out_ << Num(X(x)) << ',' << Num(Y(y)) << ' ';
  out_ << "\"><title>" << Escape(tooltip) << "</title></polyline>\n";
}

void SvgPlot::Line(double x0, double y0, double x1, double y1, const std::string& color,
                   const std::string& css_class, const std::string& dash) {
  out_ << "<line class=\"" << Escape(css_class) << "\" x1=\"" << Num(X(x0)) << "\" y1=\"" << Num(Y(y0))
       << "\" x2=\"" << Num(X(x1)) << "\" y2=\"" << Num(Y(y1)) << "\" stroke=\"" << Escape(color)
       << "\" stroke-width=\"1.5\"";
  if (!dash.empty()) out_ << " stroke-dasharray=\"" << Escape(dash) << '"';
  out_ << "/>\n";
}

void SvgPlot::HLine(double y, const std::string& color, const std::string& css_class, const std::string& label,
                    const std::string& dash) {
  Line(x_lo_, y, x_hi_, y, color, css_class, dash);
  if (!label.empty()) {
    out_ << "<text class=\"" << Escape(css_class) << "-label\" x=\"" << Num(box_.width - box_.right - 4)
         << "\" y=\"" << Num(Y(y) - 4) << "\" text-anchor=\"end\" fill=\"" << Escape(color) << "\">"
         << Escape(label) << "</text>\n";
  }
}

void SvgPlot::VLine(double x, const std::string& color, const std::string& css_class, const std::string& label,
                    const std::string& dash) {
  Line(x, y_lo_, x, y_hi_, color, css_class, dash);
  if (!label.empty()) {
    bool right_half = X(x) > (box_.left + box_.width - box_.right) / 2;
    out_ << "<text class=\"" << Escape(css_class) << "-label\" x=\"" << Num(X(x) + (right_half ? -4 : 4))
         << "\" y=\"" << Num(box_.top + 12) << "\" text-anchor=\"" << (right_half ? "end" : "start") << "\" fill=\""
         << Escape(color) << "\">" << Escape(label) << "</text>\n";
  }
}

void SvgPlot::Dot(double x, double y, const std::string& color, const std::string& css_class,
                  const std::string& tooltip) {
  out_ << "<circle class=\"" << Escape(css_class) << "\" cx=\"" << Num(X(x)) << "\" cy=\"" << Num(Y(y))
       << "\" r=\"4\" fill=\"" << Escape(color) << "\"><title>" << Escape(tooltip) << "</title></circle>\n";
}

void SvgPlot::Text(double x, double y, const std::string& text, const std::string& anchor, const std::string& color,
                   double dy) {
  TextAt(X(x), Y(y) + dy, text, anchor, color);
}

void SvgPlot::TextAt(double px, double py, const std::string& text, const std::string& anchor,
                     const std::string& color, const std::string& css_class) {
  out_ << "<text class=\"" << Escape(css_class) << "\" x=\"" << Num(px) << "\" y=\"" << Num(py)
       << "\" text-anchor=\"" << Escape(anchor) << "\" fill=\"" << Escape(color) << "\">" << Escape(text)
       << "</text>\n";
}

void SvgPlot::Rect(double x0, double y0, double x1, double y1, const std::string& color, const std::string& css_class,
                   const std::string& tooltip) {
  double px0 = std::min(X(x0), X(x1)), px1 = std::max(X(x0), X(x1));
  double py0 = std::min(Y(y0), Y(y1)), py1 = std::max(Y(y0), Y(y1));
  out_ << "<rect class=\"" << Escape(css_class) << "\" x=\"" << Num(px0) << "\" y=\"" << Num(py0) << "\" width=\""
       << Num(px1 - px0) << "\" height=\"" << Num(py1 - py0) << "\" fill=\"" << Escape(color) << "\"><title>"
       << Escape(tooltip) << "</title></rect>\n";
}

void SvgPlot::Band(const std::vector<double>& xs, const std::vector<double>& lower, const std::vector<double>& upper,
                   const std::string& color, const std::string& css_class, const std::string& tooltip) {
  const size_t n = std::min({xs.size(), lower.size(), upper.size()});
  out_ << "<polygon class=\"" << Escape(css_class) << "\" fill=\"" << Escape(color) << "\" stroke=\"none\" points=\"";
  for (size_t i = 0; i < n; ++i) out_ << Num(X(xs[i])) << ',' << Num(Y(upper[i])) << ' ';
  for (size_t i = n; i-- > 0;) out_ << Num(X(xs[i])) << ',' << Num(Y(lower[i])) << ' ';
  out_ << "\"><title>" << Escape(tooltip) << "</title></polygon>\n";
}

void SvgPlot::LegendEntry(const std::string& name, const std::string& color) {
  // Entries run in rows across the top margin, under the title, each as wide as
  // its text needs (about 7 px a character at 12 px) and at least 170 px.
  const double need = 34.0 + 7.0 * static_cast<double>(name.size()), step = std::max(170.0, need);
  if (legend_entries_ > 0 && box_.left + legend_x_ + need > box_.width - box_.right) {
    legend_x_ = 0;
    ++legend_row_;
  }
  const double x = box_.left + legend_x_, y = (has_title_ ? 36 : 26) + legend_row_ * 14;
  legend_x_ += step;
  out_ << "<g class=\"legend\"><line x1=\"" << Num(x) << "\" y1=\"" << Num(y - 4) << "\" x2=\"" << Num(x + 18)
       << "\" y2=\"" << Num(y - 4) << "\" stroke=\"" << Escape(color) << "\" stroke-width=\"3\"/><text x=\""
       << Num(x + 22) << "\" y=\"" << Num(y) << "\">" << Escape(name) << "</text></g>\n";
  ++legend_entries_;
}

std::string SvgPlot::Finish() {
  out_ << "</svg>\n";
  return out_.str();
}

std::string Stack(const std::vector<Panel>& panels) {
  if (panels.size() == 1) return panels[0].svg;
  double width = 0, height = 0;
  for (const Panel& p : panels) {
    width = std::max(width, p.width);
    height += p.height;
  }
  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << Num(width) << "\" height=\"" << Num(height)
      << "\" viewBox=\"0 0 " << Num(width) << ' ' << Num(height) << "\">\n";
  double y = 0;
  for (const Panel& p : panels) {
    out << "<g class=\"panel\" transform=\"translate(0," << Num(y) << ")\">\n" << p.svg << "</g>\n";
    y += p.height;
  }
  out << "</svg>\n";
  return out.str();
}

}  // namespace oomguard::svg
