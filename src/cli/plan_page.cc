#include "plan_page.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "oomguard/fit/chart.h"
#include "oomguard/plan/error_band.h"
#include "oomguard/svg.h"
#include "oomguard/units.h"

namespace oomguard::cli {
namespace {

using plan::MemoryBreakdown;

// The categories as the page draws them: over time (bottom to top of the
// stack) and at the peak, where the target's fixed costs come on top.
struct Category {
  const char* label;
  const char* color;
  uint64_t MemoryBreakdown::*field;
  bool over_time;
};
constexpr Category kCategories[] = {
    {"weights", "#4e79a7", &MemoryBreakdown::weights, true},
    {"optimizer state", "#e15759", &MemoryBreakdown::optimizer_state, true},
    {"inputs + labels", "#59a14f", &MemoryBreakdown::inputs, true},
    {"gradients", "#f28e2b", &MemoryBreakdown::gradients, true},
    {"activations saved for backward", "#76b7b2", &MemoryBreakdown::activations_saved, true},
    {"temporaries", "#edc948", &MemoryBreakdown::transient, true},
    {"cuBLAS/cuDNN workspace", "#b07aa1", &MemoryBreakdown::workspace, false},
    {"CUDA context", "#ff9da7", &MemoryBreakdown::context, false},
    {"allocator rounding", "#9c755f", &MemoryBreakdown::allocator_slack, false}};

std::string E(const std::string& s) { return svg::Escape(s); }
std::string B(uint64_t bytes) { return FormatBytes(bytes); }
std::string Pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", v);
  return buf;
}
std::string Shape(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "×" : "") + std::to_string(d[i]);
  return s + "]";
}
std::string Margin(double percent) { return svg::Num(percent, 1) + " %"; }

const plan::LayerMemory* FindLayer(const plan::StepPlan& plan, const std::string& name) {
  for (const plan::LayerMemory& l : plan.layers) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

// "at /layer1/conv2 (Conv, output [64×256×56×56])", or "in the loss" and the like.
std::string Where(const plan::StepPlan& plan, const plan::TimelinePoint& p) {
  if (p.node == "loss") return "in the loss";
  if (p.node == "optimizer.step()") return "in optimizer.step()";
  if (p.node == "start of step") return "at the start of the step";
  std::string s = "at layer " + p.node;
  if (const plan::LayerMemory* l = FindLayer(plan, p.node))
    s += " (" + l->op_type + ", output " + Shape(l->output_shape) + ")";
  return s;
}

// Bytes the device needs beyond live tensors at the peak: what is left of the
// capacity for tensors is capacity minus these.
uint64_t FixedBytes(const plan::StepPlan& plan) {
  return plan.required_bytes > plan.peak_allocated_bytes ? plan.required_bytes - plan.peak_allocated_bytes : 0;
}

const char* kStyle =
    "body{font-family:sans-serif;margin:1.5em auto;max-width:980px;color:#222;padding:0 1em}"
    "h2{margin-top:1.6em;border-bottom:1px solid #ddd}"
    ".verdict{padding:14px 18px;border-left:10px solid;border-radius:4px}"
    ".verdict .headline{font-size:30px;font-weight:bold;margin:0}"
    ".verdict .numbers{font-size:19px;margin:6px 0}"
    ".verdict p{margin:5px 0}"
    ".fits{background:#e8f5e9;border-color:#2e7d32}.fits .headline{color:#1b5e20}"
    ".does-not-fit{background:#fdecea;border-color:#c62828}.does-not-fit .headline{color:#b71c1c}"
    ".unknown{background:#f1f1f1;border-color:#777}"
    ".warnings{background:#fff8e1;border-left:6px solid #f9a825;padding:6px 14px}"
    "table{border-collapse:collapse}td,th{padding:3px 10px;text-align:right;vertical-align:top;white-space:nowrap}"
    "td.text,th.text{text-align:left;white-space:normal}td.name{word-break:break-all}tr.whatif.fits "
    "td.verdict-cell{color:#1b5e20;font-weight:bold}"
    "tr.whatif.still-too-big td.verdict-cell{color:#b71c1c}"
    ".swatch{display:inline-block;width:12px;height:12px;margin-right:6px;vertical-align:middle}"
    ".note{color:#555;font-size:14px}figure{margin:0}"
    "svg text{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}";

// --- The verdict -------------------------------------------------------------

void Verdict(std::ostringstream& h, const plan::StepPlan& plan, const ResolvedPlanOptions& resolved,
             const PlanPage& page) {
  const plan::PlanOptions& o = resolved.options;
  const std::optional<uint64_t> cap = resolved.capacity_bytes;
  const bool fits = cap && plan.required_bytes <= *cap;
  const char* cls = !cap ? "unknown" : fits ? "fits" : "does-not-fit";
  h << "<section id=\"verdict\" class=\"verdict " << cls << "\" data-required-bytes=\"" << plan.required_bytes << '"';
  if (cap) h << " data-capacity-bytes=\"" << *cap << '"';
  h << ">\n";
  const std::string device = resolved.gpu ? std::string(resolved.gpu->name)
                             : cap        ? "a device of " + B(*cap)
                                          : std::string("no device given");
  if (!cap) {
    h << "<p class=\"headline\">NEEDS " << E(B(plan.required_bytes)) << "</p>\n"
      << "<p class=\"numbers\">No device to compare with: add <code>--gpu NAME</code> (see <code>oomguard gpus</code>)"
         " or <code>--memory BYTES</code> for a verdict.</p>\n";
  } else {
    const double c = static_cast<double>(*cap);
    if (fits) {
      const uint64_t spare = *cap - plan.required_bytes;
      h << "<p class=\"headline\">FITS</p>\n<p class=\"numbers\">needs " << E(B(plan.required_bytes)) << " of "
        << E(B(*cap)) << ": <b>" << E(B(spare)) << " to spare</b> (" << Pct(100.0 * static_cast<double>(spare) / c)
        << " of the capacity)</p>\n";
    } else {
      const uint64_t short_by = plan.required_bytes - *cap;
      h << "<p class=\"headline\">DOES NOT FIT</p>\n<p class=\"numbers\">needs " << E(B(plan.required_bytes)) << " of "
        << E(B(*cap)) << ": <b>short by " << E(B(short_by)) << "</b> ("
        << Pct(100.0 * static_cast<double>(short_by) / c) << " more than the device has)</p>\n";
    }
  }
  h << "<p>" << E(plan.model) << " · batch " << plan.batch << " · " << plan::Name(o.optimizer) << " · "
    << plan::Name(o.precision) << " · " << plan::Name(plan.target) << " · " << E(device) << "</p>\n";
  if (plan.frozen_parameter_count > 0) {
    h << "<p class=\"frozen\" data-frozen-parameters=\"" << plan.frozen_parameter_count << "\">"
      << plan.parameter_count << " parameters trained, " << plan.frozen_parameter_count
      << " frozen (no gradient, no optimizer state)</p>\n";
  }
  if (page.max_batch) {
    if (*page.max_batch >= 1) {
      h << "<p>Largest batch that fits: <b>" << *page.max_batch << "</b>";
      if (page.max_batch_with_margin) {
        h << " (<b>" << *page.max_batch_with_margin << "</b> keeping a " << Margin(page.margin_percent)
          << " safety margin, what <code>oomguard fit</code> answers)";
      }
      h << ".</p>\n";
    } else {
      h << "<p>Even batch 1 does not fit as it is.</p>\n";
    }
  }
  if (cap && !page.advice.empty()) {
    const fit::AdviceItem& a = page.advice.front();
    h << "<p>" << (fits ? "To go further" : "Best single change") << ": " << E(a.description) << " → needs "
      << E(B(a.required_bytes)) << (a.fits ? ", fits" : ", still does not fit") << ".</p>\n";
  }
  if (!plan.timeline.empty()) {
    auto peak = std::max_element(plan.timeline.begin(), plan.timeline.end(),
                                 [](const auto& a, const auto& b) { return a.allocated_bytes < b.allocated_bytes; });
    if (cap && !fits) {
      const uint64_t room = *cap > FixedBytes(plan) ? *cap - FixedBytes(plan) : 0;
      auto first = std::find_if(plan.timeline.begin(), plan.timeline.end(),
                                [&](const auto& p) { return p.allocated_bytes > room; });
      if (first != plan.timeline.end()) peak = first;
      h << "<p>It runs out of memory in the <b>" << E(peak->phase) << "</b> pass, " << E(Where(plan, *peak))
        << " (see the timeline below).</p>\n";
    } else {
      h << "<p>The peak comes in the <b>" << E(peak->phase) << "</b> pass, " << E(Where(plan, *peak)) << ".</p>\n";
    }
  }
  h << "</section>\n";
}

// --- The what-ifs ------------------------------------------------------------

void WhatIfs(std::ostringstream& h, const plan::StepPlan& plan, const ResolvedPlanOptions& resolved,
             const PlanPage& page) {
  h << "<h2>What to change</h2>\n";
  if (!resolved.capacity_bytes) {
    h << "<p class=\"note\">What-ifs need a device to fit: add --gpu NAME or --memory BYTES.</p>\n";
    return;
  }
  if (page.advice.empty()) {
    h << "<p class=\"note\">No what-if applies to this step.</p>\n";
    return;
  }
  h << "<p class=\"note\">Each change re-planned at batch " << plan.batch << " against "
    << E(B(*resolved.capacity_bytes)) << ", ranked: what fits first, then by bytes saved.</p>\n"
    << "<table class=\"whatifs\"><tr><th>#</th><th class=\"text\">change</th><th>saves</th><th>then needs</th>"
       "<th class=\"text\">verdict</th><th>largest batch</th></tr>\n";
  int n = 0;
  for (const fit::AdviceItem& a : page.advice) {
    h << "<tr class=\"whatif " << (a.fits ? "fits" : "still-too-big") << "\" data-action=\"" << E(a.action) << "\"><td>"
      << ++n << "</td><td class=\"text\">" << E(a.description) << "</td><td>" << E(B(a.saves_bytes)) << "</td><td>"
      << E(B(a.required_bytes)) << "</td><td class=\"text verdict-cell\">" << (a.fits ? "fits" : "still does not fit")
      << "</td><td>";
    if (a.action == "lower_batch" && a.micro_batch && a.accumulation_steps) {
      h << *a.micro_batch << " × " << *a.accumulation_steps << " steps";
    } else if (a.max_batch) {
      h << *a.max_batch;
    } else {
      h << "—";
    }
    h << "</td></tr>\n";
  }
  h << "</table>\n";
}

// --- Memory vs batch ---------------------------------------------------------

void BatchCurve(std::ostringstream& h, const plan::StepPlan& plan, const ResolvedPlanOptions& resolved,
                const PlanPage& page) {
  if (page.curve.empty()) return;
  const std::optional<uint64_t> cap = resolved.capacity_bytes;
  double max_b = 1, max_y = cap ? static_cast<double>(*cap) : 0;
  for (const auto& [b, y] : page.curve) {
    max_b = std::max(max_b, static_cast<double>(b));
    max_y = std::max(max_y, static_cast<double>(y));
  }
  auto bytes_at = [&](int64_t batch) -> std::optional<double> {
    for (const auto& [b, y] : page.curve) {
      if (b == batch) return static_cast<double>(y);
    }
    return std::nullopt;
  };
  h << "<h2>Memory vs batch size</h2>\n";
  const std::vector<double> xt = svg::NiceTicks(0, max_b, 8);
  const std::vector<double> yt = svg::ByteTicks(0, max_y * 1.08, 6);
  svg::SvgPlot p(svg::Box{940, 440, 90, 24, 40, 52}, 0, xt.back(), 0, yt.back());
  p.Axes(
      xt, [](double b) { return svg::Num(b, 0); }, yt, [](double v) { return FormatBytes(static_cast<uint64_t>(v)); },
      "batch size", "memory the step needs");
  p.LegendEntry("predicted memory per step", "#1f5fa8");
  std::vector<std::pair<double, double>> line;
  for (const auto& [b, y] : page.curve) line.emplace_back(static_cast<double>(b), static_cast<double>(y));
  // The lines' labels go to the side away from the largest-batch marks.
  const int64_t marked = page.max_batch.value_or(0);
  const bool labels_left = marked >= 1 && static_cast<double>(marked) > xt.back() * 0.45;
  const double label_x = labels_left ? p.X(0) + 6 : p.X(xt.back()) - 6;
  const char* label_anchor = labels_left ? "start" : "end";
  if (cap) {
    const double y = static_cast<double>(*cap);
    p.Line(0, y, xt.back(), y, "#c62828", "capacity");
    p.TextAt(label_x, p.Y(y) - 5,
             "capacity " + B(*cap) + (resolved.gpu ? " (" + std::string(resolved.gpu->name) + ")" : ""), label_anchor,
             "#c62828", "capacity-label");
  }
  if (cap && page.margin_budget_bytes) {
    const double y = static_cast<double>(*page.margin_budget_bytes);
    p.Line(0, y, xt.back(), y, "#e07b00", "margin-budget", "6,4");
    p.TextAt(label_x, p.Y(y) + 14,
             "capacity − " + Margin(page.margin_percent) + " margin = " + B(*page.margin_budget_bytes), label_anchor,
             "#b35f00", "margin-budget-label");
  }
  p.Polyline(line, "#1f5fa8", "curve", "predicted memory per step");
  const bool current_fits = !cap || plan.required_bytes <= *cap;
  p.Dot(static_cast<double>(plan.batch), static_cast<double>(plan.required_bytes), current_fits ? "#333" : "#c62828",
        "current", "this plan: batch " + std::to_string(plan.batch) + ", " + B(plan.required_bytes));
  {  // Beside the dot, right of it (below the rising curve) unless at the right edge.
    const double px = p.X(static_cast<double>(plan.batch)), py = p.Y(static_cast<double>(plan.required_bytes));
    const bool at_edge = static_cast<double>(plan.batch) > xt.back() * 0.8;
    p.TextAt(at_edge ? px - 8 : px + 8, at_edge ? py - 8 : py + 4,
             "batch " + std::to_string(plan.batch) + " (this plan)", at_edge ? "end" : "start",
             current_fits ? "#333" : "#c62828", "current-label");
  }
  auto mark = [&](int64_t batch, const char* cls, const std::string& color, const std::string& label, bool above) {
    std::optional<double> y = bytes_at(batch);
    if (!y) return;
    const double b = static_cast<double>(batch);
    p.Line(b, 0, b, *y, color, std::string(cls) + "-drop", "2,3");
    p.Dot(b, *y, color, cls, label + ": " + B(static_cast<uint64_t>(*y)));
    // The largest batch above-left of its dot, the margin's below-right: apart
    // from each other and off the rising curve; flipped near the left edge.
    const bool near_left = b < xt.back() * 0.25;
    p.Text(b, *y, label, above && !near_left ? "end" : "start", color, above ? -10 : 18);
  };
  if (page.max_batch && *page.max_batch >= 1) {
    mark(*page.max_batch, "max-batch", "#2e7d32", "largest batch " + std::to_string(*page.max_batch) + " (no margin)",
         true);
  }
  if (page.max_batch_with_margin && *page.max_batch_with_margin >= 1) {
    mark(*page.max_batch_with_margin, "max-batch-margin", "#b35f00",
         std::to_string(*page.max_batch_with_margin) + " with the " + Margin(page.margin_percent) + " margin (fit)",
         false);
  }
  h << "<figure class=\"curve\">" << p.Finish() << "</figure>\n";
  if (page.max_batch && page.max_batch_with_margin) {
    h << "<p class=\"note\">The verdict compares against the whole capacity, so the largest batch here is "
      << *page.max_batch << ". <code>oomguard fit</code> keeps a " << Margin(page.margin_percent)
      << " safety margin of the capacity free (for prediction error and allocator growth; <code>--margin</code> "
         "changes it), so it answers "
      << *page.max_batch_with_margin << ".</p>\n";
  }
}

// --- Memory over the step ----------------------------------------------------

struct Stage {
  const char* name;
  size_t first = 0, end = 0;  // timeline point indexes [first, end)
  double x0 = 0, x1 = 0;      // display span in [0, 1]
};

int StageOf(const plan::TimelinePoint& p) {
  if (p.node == "loss") return 1;
  if (p.phase == "optimizer") return 3;
  return p.phase == "backward" ? 2 : 0;
}

// Splits the timeline into its stages and gives each a share of the width by
// its events, but at least a readable minimum (the loss and the optimizer step
// are a handful of events among thousands).
std::vector<Stage> Stages(const std::vector<plan::TimelinePoint>& t) {
  static const char* kNames[] = {"forward", "loss", "backward", "optimizer step"};
  std::vector<Stage> stages;
  for (size_t i = 0; i < t.size(); ++i) {
    const int s = StageOf(t[i]);
    if (stages.empty() || kNames[s] != stages.back().name) stages.push_back({kNames[s], i, i + 1});
    stages.back().end = i + 1;
  }
  std::vector<double> events(stages.size()), width(stages.size());
  double total = 0;
  for (size_t k = 0; k < stages.size(); ++k) {
    const uint64_t from = t[stages[k].first].event;
    const uint64_t to = k + 1 < stages.size() ? t[stages[k + 1].first].event : t.back().event + 1;
    events[k] = static_cast<double>(to - from);
    total += events[k];
  }
  const double kMin = 0.07;
  double fixed = 0, rest = 0;
  for (size_t k = 0; k < stages.size(); ++k) {
    width[k] = total > 0 ? events[k] / total : 1.0 / static_cast<double>(stages.size());
    if (width[k] < kMin) {
      width[k] = -kMin;  // marked: pinned to the minimum
      fixed += kMin;
    } else {
      rest += width[k];
    }
  }
  double x = 0;
  for (size_t k = 0; k < stages.size(); ++k) {
    const double w = width[k] < 0 ? kMin : (rest > 0 ? width[k] / rest * (1 - fixed) : 0);
    stages[k].x0 = x;
    stages[k].x1 = x + w;
    x += w;
  }
  if (!stages.empty()) stages.back().x1 = 1;
  return stages;
}

void Timeline(std::ostringstream& h, const plan::StepPlan& plan, const ResolvedPlanOptions& resolved) {
  const std::vector<plan::TimelinePoint>& t = plan.timeline;
  if (t.empty()) return;
  const size_t peak = static_cast<size_t>(
      std::max_element(t.begin(), t.end(),
                       [](const auto& a, const auto& b) { return a.allocated_bytes < b.allocated_bytes; }) -
      t.begin());
  const double peak_bytes = static_cast<double>(t[peak].allocated_bytes);
  const std::optional<uint64_t> cap = resolved.capacity_bytes;
  std::optional<double> room;  // what the capacity leaves for tensors at the peak
  if (cap) room = static_cast<double>(*cap) - static_cast<double>(FixedBytes(plan));
  const bool room_in_view = room && *room > 0 && *room <= peak_bytes * 1.6;
  const double top = std::max(peak_bytes * 1.12, room_in_view ? *room * 1.06 : 0.0);

  // Display positions: each stage over its span, its points spread by event,
  // the last one held to the end of the span.
  std::vector<Stage> stages = Stages(t);
  std::vector<double> xs;
  std::vector<size_t> index;  // timeline point per display position
  std::vector<double> x_of(t.size());
  for (const Stage& s : stages) {
    const double first = static_cast<double>(t[s.first].event);
    const double span = static_cast<double>(t[s.end - 1].event) - first + 1;
    for (size_t i = s.first; i < s.end; ++i) {
      x_of[i] = s.x0 + (s.x1 - s.x0) * (static_cast<double>(t[i].event) - first) / span;
      xs.push_back(x_of[i]);
      index.push_back(i);
    }
    xs.push_back(s.x1);
    index.push_back(s.end - 1);
  }

  h << "<h2>Memory over one training step</h2>\n"
    << "<p class=\"note\">Live tensor bytes while the step runs: forward, the loss, backward (the layers in reverse), "
       "then optimizer.step(), stacked by what they are. This is the picture PyTorch's memory_viz draws after a GPU "
       "run, predicted here before any run. Hover a moment to see the layer.</p>\n";
  const std::vector<double> yt = svg::ByteTicks(0, top, 6);
  svg::SvgPlot p(svg::Box{940, 470, 90, 24, 70, 40}, 0, 1, 0, yt.back());
  for (size_t k = 0; k < stages.size(); ++k) {
    p.Rect(stages[k].x0, 0, stages[k].x1, yt.back(), k % 2 ? "#ffffff" : "#f3f5f8", "stage", stages[k].name);
  }
  if (room_in_view && *room < yt.back()) {
    p.Rect(0, *room, 1, yt.back(), "#fbe3e3", "over-capacity", "more than the device has room for");
  }
  std::vector<double> lower(xs.size(), 0.0), upper(xs.size());
  for (const Category& c : kCategories) {
    if (!c.over_time) continue;
    bool any = false;
    for (size_t j = 0; j < xs.size(); ++j) {
      upper[j] = lower[j] + static_cast<double>(t[index[j]].live.*c.field);
      any = any || upper[j] > lower[j];
    }
    if (!any) continue;
    p.Band(xs, lower, upper, c.color, "layer", c.label);
    p.LegendEntry(c.label, c.color);
    lower = upper;
  }
  for (const Stage& s : stages) {
    p.TextAt(p.X((s.x0 + s.x1) / 2), p.Y(0) + 16, s.name, "middle", "#333", "stage-label");
  }
  // Hover targets: one transparent column per point.
  for (size_t i = 0; i < t.size(); ++i) {
    const double l = i > 0 ? (x_of[i - 1] + x_of[i]) / 2 : x_of[i];
    const double r = i + 1 < t.size() ? (x_of[i] + x_of[i + 1]) / 2 : 1.0;
    p.Rect(l, 0, r, yt.back(), "transparent", "moment",
           t[i].phase + ", " + t[i].node + ": " + B(t[i].allocated_bytes) + " live");
  }
  if (room_in_view) {
    p.HLine(*room, "#c62828", "tensor-room",
            "room for tensors " + B(static_cast<uint64_t>(*room)) + " = capacity − context, workspace, rounding");
  }
  p.VLine(x_of[peak], "#8b0000", "peak", "peak " + B(t[peak].allocated_bytes));
  p.Dot(x_of[peak], peak_bytes, "#8b0000", "peak-marker",
        "peak " + B(t[peak].allocated_bytes) + " (" + std::to_string(t[peak].allocated_bytes) + " bytes) in " +
            t[peak].phase + ", " + Where(plan, t[peak]));
  if (room && *room < peak_bytes) {
    size_t first = peak;
    for (size_t i = 0; i < t.size(); ++i) {
      if (static_cast<double>(t[i].allocated_bytes) > *room) {
        first = i;
        break;
      }
    }
    const double y = static_cast<double>(t[first].allocated_bytes);
    p.Dot(x_of[first], y, "#c62828", "oom-point",
          "runs out of memory here: " + t[first].phase + ", " + Where(plan, t[first]));
    p.Text(x_of[first], y, "runs out here", x_of[first] > 0.5 ? "end" : "start", "#c62828", 18);
  }
  if (room && !room_in_view && *room > 0) {
    p.TextAt(p.X(1) - 4, p.Y(yt.back()) + 30, "room for tensors: " + B(static_cast<uint64_t>(*room)) + " (far above)",
             "end", "#2e7d32", "tensor-room-note");
  }
  p.Axes(
      {}, nullptr, yt, [](double v) { return FormatBytes(static_cast<uint64_t>(v)); },
      "one training step, in time order →", "live tensor bytes");
  h << "<figure class=\"timeline\" data-peak-bytes=\"" << t[peak].allocated_bytes << "\" data-peak-phase=\""
    << E(t[peak].phase) << "\">" << p.Finish() << "</figure>\n";
  h << "<p class=\"note\">Peak: <b>" << E(B(t[peak].allocated_bytes)) << "</b> of live tensors in the "
    << E(t[peak].phase) << " pass, " << E(Where(plan, t[peak])) << ".";
  if (plan.target == plan::Target::kCuda) {
    h << " On top of the tensors the device holds the CUDA context (" << E(B(plan.bytes.context))
      << "), the cuBLAS/cuDNN workspace (" << E(B(plan.bytes.workspace)) << ") and the caching allocator's rounding ("
      << E(B(plan.bytes.allocator_slack)) << "): " << E(B(plan.required_bytes)) << " in all.";
  }
  if (const std::optional<plan::ErrorBand>& band = plan::EmbeddedErrorBand()) {
    const plan::BandBytes range = plan::MeasuredRange(*band, plan.peak_allocated_bytes);
    h << " <span class=\"band\">If this model is new to oomguard, expect the measured peak between "
      << E(B(range.low)) << " and " << E(B(range.high)) << ": " << Pct(100 * band->coverage) << " of "
      << band->models << " models new to it (sets " << E(band->sets)
      << " of the unseen architectures, real PyTorch CPU steps) measured within that band of their blind plan.</span>";
  }
  h << "</p>\n";
}

// --- Where it goes, which layers --------------------------------------------

void AtPeak(std::ostringstream& h, const plan::StepPlan& plan) {
  uint64_t total = 0;
  for (const Category& c : kCategories) total += plan.at_peak.*c.field;
  h << "<h2>Where the memory goes at the peak</h2>\n<table><tr><th class=\"text\">category</th><th>bytes</th>"
       "<th>share</th></tr>\n";
  for (const Category& c : kCategories) {
    const uint64_t v = plan.at_peak.*c.field;
    if (!v && !c.over_time) continue;
    h << "<tr><td class=\"text\"><span class=\"swatch\" style=\"background:" << c.color << "\"></span>" << c.label
      << "</td><td>" << E(B(v)) << "</td><td>"
      << Pct(total ? 100.0 * static_cast<double>(v) / static_cast<double>(total) : 0) << "</td></tr>\n";
  }
  h << "<tr><th class=\"text\">the step needs</th><th>" << E(B(plan.required_bytes)) << "</th><th></th></tr></table>\n";
  if (plan.bytes.activations_saved != plan.at_peak.activations_saved) {
    h << "<p class=\"note\">The forward pass keeps " << E(B(plan.bytes.activations_saved))
      << " for backward in all; backward frees it layer by layer.</p>\n";
  }
}

void TopLayers(std::ostringstream& h, const plan::StepPlan& plan) {
  std::vector<const plan::LayerMemory*> top;
  for (const plan::LayerMemory& l : plan.layers) {
    if (l.saved_bytes) top.push_back(&l);
  }
  if (top.empty()) return;
  std::stable_sort(top.begin(), top.end(), [](auto* a, auto* b) { return a->saved_bytes > b->saved_bytes; });
  if (top.size() > 20) top.resize(20);
  h << "<h2>Layers keeping the most for backward</h2>\n<table><tr><th class=\"text\">layer</th><th class=\"text\">op"
       "</th><th class=\"text\">output</th><th>saved</th><th>parameters</th></tr>\n";
  for (const auto* l : top) {
    h << "<tr><td class=\"text name\">" << E(l->name) << "</td><td class=\"text\">" << E(l->op_type)
      << "</td><td class=\"text\">" << E(Shape(l->output_shape)) << "</td><td>" << E(B(l->saved_bytes)) << "</td><td>"
      << E(B(l->parameter_bytes)) << "</td></tr>\n";
  }
  h << "</table>\n";
}

}  // namespace

Result<PlanPage> PlanPageFor(plan::BatchPlanner& batch_planner, const ResolvedPlanOptions& resolved,
                             const plan::StepPlan& plan, std::vector<fit::AdviceItem> advice) {
  PlanPage page;
  page.advice = std::move(advice);
  fit::PlanFunction planner = fit::PlanWith(batch_planner);
  std::map<int64_t, uint64_t> points{{plan.batch, plan.required_bytes}};
  int64_t last = std::max<int64_t>(2 * plan.batch, 8);
  if (resolved.capacity_bytes) {
    for (double margin : {0.0, page.margin_percent}) {
      Result<uint64_t> budget =
          fit::UsableBytes({.capacity_bytes = *resolved.capacity_bytes, .margin_percent = margin});
      if (!budget) continue;
      fit::FitOptions options;
      options.budget_bytes = *budget;
      Result<fit::FitResult> found = fit::FindMaxBatch(planner, resolved.options, options);
      if (!found) return MakeError(found.error());
      if (found->max_batch >= 1) points[found->max_batch] = found->plan.required_bytes;
      if (found->next_plan) points[found->max_batch + 1] = found->next_plan->required_bytes;
      if (margin == 0) {
        page.max_batch = found->max_batch;
        last = std::max(last, found->max_batch + found->max_batch / 4 + 2);
      } else {
        page.max_batch_with_margin = found->max_batch;
        page.margin_budget_bytes = *budget;
      }
    }
  }
  // Each curve point is a plan: fewer for a large graph (memory is close to affine in the batch).
  const int curve_points =
      static_cast<int>(std::clamp<size_t>(200000 / std::max<size_t>(1, plan.layers.size()), 4, 40));
  Result<std::vector<fit::CurvePoint>> sampled =
      fit::SampleCurve(planner, resolved.options, last, plan.batch, curve_points);
  if (!sampled) return MakeError(sampled.error());
  for (const fit::CurvePoint& c : *sampled) points.emplace(c.batch, c.required_bytes);
  page.curve.assign(points.begin(), points.end());
  return page;
}

std::string PlanToHtml(const plan::StepPlan& plan, const ResolvedPlanOptions& resolved, const PlanPage& page) {
  std::ostringstream h;
  const std::optional<uint64_t> cap = resolved.capacity_bytes;
  const char* answer = !cap ? "needs " : plan.required_bytes <= *cap ? "fits, needs " : "does not fit, needs ";
  h << "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>oomguard plan: " << E(plan.model) << " batch "
    << plan.batch << " " << answer << E(B(plan.required_bytes)) << "</title>\n<style>" << kStyle
    << "</style></head><body>\n";
  Verdict(h, plan, resolved, page);
  if (!plan.warnings.empty()) {
    h << "<div class=\"warnings\"><p><b>The planner is unsure about part of this model:</b></p><ul>\n";
    for (const std::string& w : plan.warnings) h << "<li>" << E(w) << "</li>\n";
    h << "</ul></div>\n";
  }
  WhatIfs(h, plan, resolved, page);
  BatchCurve(h, plan, resolved, page);
  Timeline(h, plan, resolved);
  AtPeak(h, plan);
  h << page.host_html;
  TopLayers(h, plan);
  h << "<p class=\"note\">Generated by oomguard plan. The prediction models PyTorch's training step and its CUDA "
       "caching allocator; measure a real step with <code>oomguard watch</code>.</p>\n</body></html>\n";
  return h.str();
}

}  // namespace oomguard::cli
