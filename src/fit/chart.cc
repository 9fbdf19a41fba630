#include "oomguard/fit/chart.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "oomguard/svg.h"
#include "oomguard/units.h"

namespace oomguard::fit {

namespace {

std::string Page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + EscapeHtml(title) +
         "</title>\n<style>body{font-family:sans-serif;margin:2em}svg text{font-size:12px}"
         "table{border-collapse:collapse}td,th{padding:2px 8px;text-align:right}</style>"
         "</head>\n<body>\n<h1>" + EscapeHtml(title) + "</h1>\n" + body + "</body></html>\n";
}

}  // namespace

std::string EscapeHtml(const std::string& text) { return svg::Escape(text); }

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
  double max_y = static_cast<double>(capacity_bytes);
  for (const CurvePoint& p : curve) {
    max_b = std::max(max_b, p.batch);
    max_y = std::max(max_y, static_cast<double>(p.required_bytes));
  }
  const std::vector<double> xt = svg::NiceTicks(0, static_cast<double>(max_b), 8);
  const std::vector<double> yt = svg::ByteTicks(0, max_y * 1.05, 6);
  svg::SvgPlot plot(svg::Box{760, 420, 80, 20, 44, 50}, 0, xt.back(), 0, yt.back());
  plot.Axes(
      xt, [](double b) { return svg::Num(b, 0); }, yt,
      [](double v) { return FormatBytes(static_cast<uint64_t>(v)); }, "batch", "memory per step");
  plot.HLine(static_cast<double>(capacity_bytes), "#c00", "capacity", "capacity " + FormatBytes(capacity_bytes), "");
  plot.HLine(static_cast<double>(budget_bytes), "#c60", "budget",
             "budget " + FormatBytes(budget_bytes) + " (after reserve and margin)");
  std::vector<std::pair<double, double>> points;
  for (const CurvePoint& p : curve) {
    points.emplace_back(static_cast<double>(p.batch), static_cast<double>(p.required_bytes));
  }
  plot.Polyline(points, "#06c", "curve", "predicted memory");
  plot.LegendEntry("predicted memory per step", "#06c");
  for (const CurvePoint& p : curve) {
    if (p.batch != chosen_batch) continue;
    const double bx = static_cast<double>(p.batch), by = static_cast<double>(p.required_bytes);
    plot.Dot(bx, by, "#090", "chosen", "largest batch " + std::to_string(p.batch));
    plot.Text(bx, by, "largest batch " + std::to_string(p.batch) + ": " + FormatBytes(p.required_bytes),
              bx > xt.back() / 2 ? "end" : "start", "#090", 18);
  }
  std::ostringstream table;
  table << "<h2>Predicted memory by batch</h2>\n<table><tr><th>batch</th><th>required bytes</th><th>"
           "</th></tr>\n";
  for (const CurvePoint& p : curve) {
    table << "<tr><td>" << p.batch << "</td><td>" << p.required_bytes << "</td><td>"
          << svg::Escape(FormatBytes(p.required_bytes)) << "</td></tr>\n";
  }
  table << "</table>\n";
  return Page(title, plot.Finish() + table.str());
}

std::string SplitChartHtml(const std::string& title, const SplitResult& split) {
  double max_y = 1;
  for (const GpuShare& g : split.per_gpu) {
    max_y = std::max({max_y, static_cast<double>(g.peak_bytes), static_cast<double>(g.budget_bytes)});
  }
  const double n = static_cast<double>(std::max<size_t>(1, split.per_gpu.size()));
  const std::vector<double> yt = svg::ByteTicks(0, max_y * 1.05, 6);
  svg::SvgPlot plot(svg::Box{760, 440, 80, 20, 44, 64}, 0, n, 0, yt.back());
  plot.Axes({}, nullptr, yt, [](double v) { return FormatBytes(static_cast<uint64_t>(v)); }, "", "memory per GPU");
  struct Part { const char* name; const char* color; };
  const Part parts[] = {{"model states", "#36c"}, {"activations", "#f90"}, {"inputs", "#6a6"},
                        {"strategy extras", "#c3c"}, {"other", "#999"}};
  for (const Part& p : parts) plot.LegendEntry(p.name, p.color);
  plot.LegendEntry("budget", "#c00");
  for (size_t i = 0; i < split.per_gpu.size(); ++i) {
    const GpuShare& g = split.per_gpu[i];
    const plan::MemoryBreakdown& b = g.plan.bytes;
    const uint64_t states = BatchIndependentBytes(g.plan);
    const uint64_t counted = states + b.activations_saved + b.inputs + g.extra_bytes;
    const uint64_t values[] = {states, b.activations_saved, b.inputs, g.extra_bytes,
                               g.peak_bytes > counted ? g.peak_bytes - counted : 0};
    const double x0 = static_cast<double>(i) + 0.2, x1 = static_cast<double>(i) + 0.8;
    double acc = 0;
    for (int k = 0; k < 5; ++k) {
      const double top = acc + static_cast<double>(values[k]);
      plot.Rect(x0, acc, x1, top, parts[k].color, "part",
                "GPU " + std::to_string(g.index) + " " + parts[k].name + ": " + FormatBytes(values[k]));
      acc = top;
    }
    plot.Line(x0 - 0.05, static_cast<double>(g.budget_bytes), x1 + 0.05, static_cast<double>(g.budget_bytes), "#c00",
              "budget");
    const double cx = plot.X(static_cast<double>(i) + 0.5), base = plot.Y(0);
    plot.TextAt(cx, base + 16, "GPU " + std::to_string(g.index), "middle");
    plot.TextAt(cx, base + 30, "batch " + std::to_string(g.batch), "middle");
  }
  return Page(title, plot.Finish());
}

}  // namespace oomguard::fit
