#include "oomguard/fit/chart.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "oomguard/svg.h"
#include "oomguard/units.h"

namespace oomguard::fit {

namespace {

std::string Page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + svg::Escape(title) +
         "</title>\n<style>body{font-family:sans-serif;margin:2em}svg text{font-size:12px;paint-order:stroke;"
         "stroke:#fff;stroke-width:3px;stroke-linejoin:round}"
         "table{border-collapse:collapse}td,th{padding:2px 8px;text-align:right}</style>"
         "</head>\n<body>\n<h1>" + svg::Escape(title) + "</h1>\n" + body + "</body></html>\n";
}

}  // namespace

Result<std::vector<CurvePoint>> SampleCurve(const PlanFunction& plan, const plan::PlanOptions& base,
                                            int64_t last, int64_t chosen, int points) {
  std::set<int64_t> batches;
  last = std::max<int64_t>(1, last);
  for (int i = 0; i < points; ++i) {
    batches.insert(1 + (last - 1) * i / std::max(1, points - 1));
  }
  if (chosen >= 1 && chosen <= last) batches.insert(chosen);
  if (chosen + 1 >= 1 && chosen + 1 <= last) batches.insert(chosen + 1);
  // The two ends first, then the points between: a BatchPlanner records the
  // step through the ends and replays the rest instead of planning each.
  std::vector<int64_t> order(batches.begin(), batches.end());
  if (order.size() > 2) std::rotate(order.begin() + 1, order.end() - 1, order.end());
  std::map<int64_t, uint64_t> required;
  plan::PlanOptions o = base;
  for (int64_t b : order) {
    o.batch = b;
    Result<uint64_t> r = plan.RequiredBytes(o, last);
    if (!r) return MakeError(r.error());
    required[b] = *r;
  }
  std::vector<CurvePoint> out;
  for (const auto& [b, r] : required) out.push_back({b, r});
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
  svg::SvgPlot plot(svg::Box{760, 420, 92, 20, 44, 50}, 0, xt.back(), 0, yt.back());
  plot.Axes(
      xt, [](double b) { return svg::Num(b, 0); }, yt,
      [](double v) { return FormatBytes(static_cast<uint64_t>(v)); }, "batch", "memory per step");
  plot.HLine(static_cast<double>(capacity_bytes), "#c00", "capacity", "capacity " + FormatBytes(capacity_bytes), "");
  // The budget's label under its line at the left, where the curve is low: the
  // two lines are only the margin apart.
  const double budget = static_cast<double>(budget_bytes);
  plot.Line(0, budget, xt.back(), budget, "#c60", "budget", "6,4");
  plot.TextAt(plot.X(0) + 5, plot.Y(budget) + 14,
              "budget " + FormatBytes(budget_bytes) + " (capacity − reserve − margin)", "start", "#c60",
              "budget-label");
  std::vector<std::pair<double, double>> points;
  for (const CurvePoint& p : curve) {
    points.emplace_back(static_cast<double>(p.batch), static_cast<double>(p.required_bytes));
  }
  plot.Polyline(points, "#06c", "curve", "predicted memory");
  plot.LegendEntry("predicted memory per step", "#06c");
  for (const CurvePoint& p : curve) {
    if (p.batch != chosen_batch) continue;
    const double bx = static_cast<double>(p.batch), by = static_cast<double>(p.required_bytes);
    // A drop line to the batch axis, labelled at its foot: under the rising
    // curve, away from the capacity and budget labels.
    plot.Line(bx, 0, bx, by, "#090", "chosen-drop", "2,3");
    plot.Dot(bx, by, "#090", "chosen", "largest batch " + std::to_string(p.batch));
    const bool right_edge = bx > xt.back() * 0.75;
    plot.TextAt(plot.X(bx) + (right_edge ? -5 : 5), plot.Y(0) - 8,
                "largest batch " + std::to_string(p.batch) + ": " + FormatBytes(p.required_bytes),
                right_edge ? "end" : "start", "#090", "chosen-label");
  }
  std::ostringstream answer;
  answer << "<p style=\"font-size:20px\">";
  const CurvePoint* at = nullptr;
  for (const CurvePoint& p : curve) {
    if (p.batch == chosen_batch) at = &p;
  }
  if (chosen_batch >= 1 && at) {
    answer << "Largest batch that fits: <b>" << chosen_batch << "</b> (needs "
           << svg::Escape(FormatBytes(at->required_bytes)) << " of the " << svg::Escape(FormatBytes(budget_bytes))
           << " budget)";
  } else {
    answer << "<b style=\"color:#c00\">Nothing fits</b>: even batch 1 needs more than the "
           << svg::Escape(FormatBytes(budget_bytes)) << " budget";
  }
  answer << "</p>\n";
  std::ostringstream table;
  table << "<h2>Predicted memory by batch</h2>\n<table><tr><th>batch</th><th>required bytes</th><th>"
           "</th></tr>\n";
  for (const CurvePoint& p : curve) {
    table << "<tr><td>" << p.batch << "</td><td>" << p.required_bytes << "</td><td>"
          << svg::Escape(FormatBytes(p.required_bytes)) << "</td></tr>\n";
  }
  table << "</table>\n";
  return Page(title, answer.str() + plot.Finish() + table.str());
}

std::string SplitChartHtml(const std::string& title, const SplitResult& split) {
  double max_y = 1;
  for (const GpuShare& g : split.per_gpu) {
    max_y = std::max({max_y, static_cast<double>(g.peak_bytes), static_cast<double>(g.budget_bytes)});
  }
  const double n = static_cast<double>(std::max<size_t>(1, split.per_gpu.size()));
  const std::vector<double> yt = svg::ByteTicks(0, max_y * 1.05, 6);
  svg::SvgPlot plot(svg::Box{760, 440, 92, 20, 44, 64}, 0, n, 0, yt.back());
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
    plot.TextAt(plot.X(static_cast<double>(i) + 0.5), plot.Y(static_cast<double>(g.budget_bytes)) - 5,
                "budget " + FormatBytes(g.budget_bytes), "middle", "#c00", "budget-label");
    plot.TextAt(plot.X(static_cast<double>(i) + 0.5), plot.Y(acc) - 5, "needs " + FormatBytes(g.peak_bytes), "middle",
                "black", "needs-label");
    const double cx = plot.X(static_cast<double>(i) + 0.5), base = plot.Y(0);
    plot.TextAt(cx, base + 16, "GPU " + std::to_string(g.index), "middle");
    plot.TextAt(cx, base + 30, "batch " + std::to_string(g.batch), "middle");
  }
  std::ostringstream answer;
  answer << "<p style=\"font-size:20px\">";
  if (split.possible) {
    answer << "<b style=\"color:#1b5e20\">Fits</b>: global batch " << split.global_batch << " as ";
    std::string gpus;
    for (size_t i = 0; i < split.per_gpu.size(); ++i) {
      answer << (i ? " + " : "") << split.per_gpu[i].batch;
      gpus += (i ? ", " : "") + std::to_string(split.per_gpu[i].index);
    }
    answer << " on GPUs " << gpus << "; each GPU stays under its budget (capacity − reserve − margin)";
  } else {
    answer << "<b style=\"color:#c00\">Does not split</b>: " << svg::Escape(split.reason);
  }
  answer << "</p>\n";
  return Page(title, answer.str() + plot.Finish());
}

}  // namespace oomguard::fit
