#include "oomguard/fit/chart.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "oomguard/units.h"

namespace oomguard::fit {

namespace {

constexpr double kWidth = 760, kHeight = 420, kLeft = 80, kRight = 20, kTop = 30, kBottom = 50;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string Page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + EscapeHtml(title) +
         "</title>\n<style>body{font-family:sans-serif;margin:2em}svg text{font-size:12px}"
         "table{border-collapse:collapse}td,th{padding:2px 8px;text-align:right}</style>"
         "</head>\n<body>\n<h1>" + EscapeHtml(title) + "</h1>\n" + body + "</body></html>\n";
}

}  // namespace

std::string EscapeHtml(const std::string& text) {
  std::string out;
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

Result<std::vector<CurvePoint>> SampleCurve(const PlanFunction& plan, const plan::PlanOptions& base,
                                            int64_t last, int64_t chosen, int points) {
  std::set<int64_t> batches;
  last = std::max<int64_t>(1, last);
  for (int i = 0; i < points; ++i) {
    batches.insert(1 + (last - 1) * i / std::max(1, points - 1));
  }
  if (chosen >= 1 && chosen <= last) batches.insert(chosen);
  if (chosen + 1 >= 1 && chosen + 1 <= last) batches.insert(chosen + 1);
  std::vector<CurvePoint> out;
  plan::PlanOptions o = base;
  for (int64_t b : batches) {
    o.batch = b;
    Result<plan::StepPlan> p = plan(o);
    if (!p) return MakeError(p.error());
    out.push_back({b, p->required_bytes});
  }
  return out;
}

std::string FitChartHtml(const std::string& title, const std::vector<CurvePoint>& curve,
                         uint64_t capacity_bytes, uint64_t budget_bytes, int64_t chosen_batch) {
  int64_t max_b = 1;
  uint64_t max_y = capacity_bytes;
  for (const CurvePoint& p : curve) {
    max_b = std::max(max_b, p.batch);
    max_y = std::max(max_y, p.required_bytes);
  }
  const double ymax = static_cast<double>(max_y) * 1.05;
  auto x = [&](double b) { return kLeft + (kWidth - kLeft - kRight) * (b - 1) / std::max<double>(1, max_b - 1); };
  auto y = [&](double v) { return kHeight - kBottom - (kHeight - kTop - kBottom) * v / ymax; };
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
    << "\">\n";
  // Axes and ticks.
  s << "<line x1=\"" << kLeft << "\" y1=\"" << y(0) << "\" x2=\"" << kWidth - kRight << "\" y2=\""
    << y(0) << "\" stroke=\"black\"/>\n";
  s << "<line x1=\"" << kLeft << "\" y1=\"" << kTop << "\" x2=\"" << kLeft << "\" y2=\"" << y(0)
    << "\" stroke=\"black\"/>\n";
  for (int i = 0; i <= 5; ++i) {
    const double v = ymax * i / 5;
    s << "<text x=\"" << kLeft - 6 << "\" y=\"" << Num(y(v) + 4) << "\" text-anchor=\"end\">"
      << EscapeHtml(FormatBytes(static_cast<uint64_t>(v))) << "</text>\n";
    const double b = 1 + (max_b - 1) * i / 5.0;
    s << "<text x=\"" << Num(x(b)) << "\" y=\"" << Num(y(0) + 18) << "\" text-anchor=\"middle\">"
      << static_cast<int64_t>(b) << "</text>\n";
  }
  s << "<text x=\"" << Num((kLeft + kWidth) / 2) << "\" y=\"" << kHeight - 8
    << "\" text-anchor=\"middle\">batch</text>\n";
  // Capacity and budget lines.
  s << "<line class=\"capacity\" x1=\"" << kLeft << "\" y1=\"" << Num(y(capacity_bytes)) << "\" x2=\""
    << kWidth - kRight << "\" y2=\"" << Num(y(capacity_bytes))
    << "\" stroke=\"#c00\" stroke-width=\"2\"/>\n";
  s << "<text x=\"" << kWidth - kRight << "\" y=\"" << Num(y(capacity_bytes) - 4)
    << "\" text-anchor=\"end\" fill=\"#c00\">capacity " << EscapeHtml(FormatBytes(capacity_bytes))
    << "</text>\n";
  s << "<line class=\"budget\" x1=\"" << kLeft << "\" y1=\"" << Num(y(budget_bytes)) << "\" x2=\""
    << kWidth - kRight << "\" y2=\"" << Num(y(budget_bytes))
    << "\" stroke=\"#c60\" stroke-dasharray=\"6,4\"/>\n";
  s << "<text x=\"" << kLeft + 4 << "\" y=\"" << Num(y(budget_bytes) + 14) << "\" fill=\"#c60\">budget "
    << EscapeHtml(FormatBytes(budget_bytes)) << " (after reserve and margin)</text>\n";
  // The curve.
  s << "<polyline class=\"curve\" fill=\"none\" stroke=\"#06c\" stroke-width=\"2\" points=\"";
  for (const CurvePoint& p : curve) {
    s << Num(x(static_cast<double>(p.batch))) << "," << Num(y(static_cast<double>(p.required_bytes)))
      << " ";
  }
  s << "\"/>\n";
  for (const CurvePoint& p : curve) {
    if (p.batch != chosen_batch) continue;
    s << "<circle class=\"chosen\" cx=\"" << Num(x(static_cast<double>(p.batch))) << "\" cy=\""
      << Num(y(static_cast<double>(p.required_bytes))) << "\" r=\"5\" fill=\"#090\"/>\n";
    s << "<text x=\"" << Num(x(static_cast<double>(p.batch)) + 8) << "\" y=\""
      << Num(y(static_cast<double>(p.required_bytes)) + 16) << "\" fill=\"#090\">max batch "
      << p.batch << ": " << EscapeHtml(FormatBytes(p.required_bytes)) << "</text>\n";
  }
  s << "</svg>\n";
  std::ostringstream table;
  table << "<h2>Predicted memory by batch</h2>\n<table><tr><th>batch</th><th>required bytes</th><th>"
           "</th></tr>\n";
  for (const CurvePoint& p : curve) {
    table << "<tr><td>" << p.batch << "</td><td>" << p.required_bytes << "</td><td>"
          << EscapeHtml(FormatBytes(p.required_bytes)) << "</td></tr>\n";
  }
  table << "</table>\n";
  return Page(title, s.str() + table.str());
}

std::string SplitChartHtml(const std::string& title, const SplitResult& split) {
  uint64_t max_y = 1;
  for (const GpuShare& g : split.per_gpu) max_y = std::max({max_y, g.peak_bytes, g.budget_bytes});
  const double ymax = static_cast<double>(max_y) * 1.05;
  const size_t n = std::max<size_t>(1, split.per_gpu.size());
  const double slot = (kWidth - kLeft - kRight) / static_cast<double>(n);
  auto y = [&](double v) { return kHeight - kBottom - (kHeight - kTop - kBottom) * v / ymax; };
  struct Part { const char* name; const char* color; };
  const Part parts[] = {{"model states", "#36c"}, {"activations", "#f90"}, {"inputs", "#6a6"},
                        {"strategy extras", "#c3c"}, {"other", "#999"}};
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
    << "\">\n";
  s << "<line x1=\"" << kLeft << "\" y1=\"" << y(0) << "\" x2=\"" << kWidth - kRight << "\" y2=\""
    << y(0) << "\" stroke=\"black\"/>\n";
  for (int i = 0; i <= 5; ++i) {
    const double v = ymax * i / 5;
    s << "<text x=\"" << kLeft - 6 << "\" y=\"" << Num(y(v) + 4) << "\" text-anchor=\"end\">"
      << EscapeHtml(FormatBytes(static_cast<uint64_t>(v))) << "</text>\n";
  }
  for (size_t i = 0; i < split.per_gpu.size(); ++i) {
    const GpuShare& g = split.per_gpu[i];
    const plan::MemoryBreakdown& b = g.plan.bytes;
    const uint64_t states = BatchIndependentBytes(g.plan);
    const uint64_t counted = states + b.activations_saved + b.inputs + g.extra_bytes;
    const uint64_t values[] = {states, b.activations_saved, b.inputs, g.extra_bytes,
                               g.peak_bytes > counted ? g.peak_bytes - counted : 0};
    const double x0 = kLeft + slot * static_cast<double>(i) + slot * 0.2;
    const double w = slot * 0.6;
    double acc = 0;
    for (int k = 0; k < 5; ++k) {
      const double h = y(acc) - y(acc + static_cast<double>(values[k]));
      s << "<rect class=\"part\" x=\"" << Num(x0) << "\" y=\"" << Num(y(acc + static_cast<double>(values[k])))
        << "\" width=\"" << Num(w) << "\" height=\"" << Num(h) << "\" fill=\"" << parts[k].color
        << "\"><title>GPU " << g.index << " " << parts[k].name << ": "
        << EscapeHtml(FormatBytes(values[k])) << "</title></rect>\n";
      acc += static_cast<double>(values[k]);
    }
    s << "<line class=\"budget\" x1=\"" << Num(x0 - 4) << "\" y1=\"" << Num(y(static_cast<double>(g.budget_bytes)))
      << "\" x2=\"" << Num(x0 + w + 4) << "\" y2=\"" << Num(y(static_cast<double>(g.budget_bytes)))
      << "\" stroke=\"#c00\" stroke-width=\"2\"/>\n";
    s << "<text x=\"" << Num(x0 + w / 2) << "\" y=\"" << Num(y(0) + 16)
      << "\" text-anchor=\"middle\">GPU " << g.index << "</text>\n";
    s << "<text x=\"" << Num(x0 + w / 2) << "\" y=\"" << Num(y(0) + 30)
      << "\" text-anchor=\"middle\">batch " << g.batch << "</text>\n";
  }
  s << "</svg>\n<p>";
  for (const Part& p : parts) {
    s << "<span style=\"color:" << p.color << "\">&#9632;</span> " << p.name << " &nbsp; ";
  }
  s << "<span style=\"color:#c00\">&#8212;</span> budget</p>\n";
  return Page(title, s.str());
}

}  // namespace oomguard::fit
