#include "oomguard/doctor/watch_report.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <optional>
#include <sstream>

#include "oomguard/svg.h"
#include "oomguard/units.h"

namespace oomguard::doctor {

std::string SamplesCsv(const WatchSummary& summary) {
  std::ostringstream out;
  out << "seconds,rss_bytes,swap_bytes,locked_bytes,pinned_bytes,host_bytes,host_limit_bytes,gpu_bytes,"
         "gpu_limit_bytes,processes\n";
  for (const Sample& s : summary.samples) {
    char t[32];
    std::snprintf(t, sizeof t, "%.3f", s.seconds);
    out << t << ',' << s.host.rss << ',' << s.host.swap << ',' << s.host.locked << ',' << s.host.pinned << ','
        << s.host_bytes << ',' << s.host_limit << ',' << s.gpu_bytes << ',' << s.gpu_limit << ',' << s.processes
        << '\n';
  }
  return out.str();
}

namespace {

struct Series {
  const char* name;
  const char* color;
  uint64_t (*get)(const Sample&);
};

constexpr Series kSeries[] = {
    {"host (rss+swap)", "#1f77b4", [](const Sample& s) { return s.host_bytes; }},
    {"rss", "#aec7e8", [](const Sample& s) { return s.host.rss; }},
    {"swap", "#ff7f0e", [](const Sample& s) { return s.host.swap; }},
    {"locked", "#9467bd", [](const Sample& s) { return s.host.locked; }},
    {"pinned", "#8c564b", [](const Sample& s) { return s.host.pinned; }},
    {"gpu", "#2ca02c", [](const Sample& s) { return s.gpu_bytes; }},
};

std::string Seconds(double t) { return svg::Num(t, t < 10 ? 1 : 0) + " s"; }
std::string Bytes(double b) { return FormatBytes(static_cast<uint64_t>(std::max(0.0, b))); }

std::vector<std::pair<double, double>> Points(const std::vector<Sample>& samples, const Series& x) {
  std::vector<std::pair<double, double>> points;
  points.reserve(samples.size());
  for (const Sample& s : samples) points.emplace_back(s.seconds, double(x.get(s)));
  return points;
}

bool AllZero(const std::vector<Sample>& samples, const Series& x) {
  return std::all_of(samples.begin(), samples.end(), [&](const Sample& s) { return x.get(s) == 0; });
}

// How the run ended, for the marker at its last sample.
std::string EndLabel(const WatchSummary& summary) {
  if (summary.exit.signal) return "killed by signal " + std::to_string(*summary.exit.signal);
  if (summary.exit.code) return "exit " + std::to_string(*summary.exit.code);
  return "";
}

// The prediction: from the sample where it was made to the limit it reaches.
struct Projection {
  double from_t = 0, from_bytes = 0, at_t = 0, limit = 0;
  bool gpu = false;
};

std::optional<Projection> Predict(const WatchSummary& summary) {
  const std::vector<Sample>& samples = summary.samples;
  if (!summary.predicted_seconds_to_limit || samples.empty()) return std::nullopt;
  const Sample* from = &samples.back();
  if (summary.stopped_at_seconds) {
    for (const Sample& s : samples) {
      if (s.seconds <= *summary.stopped_at_seconds) from = &s;
    }
  }
  auto seconds_left = [](uint64_t limit, uint64_t used, double rate) {
    return rate > 0 && limit > 0 ? double(limit - std::min(limit, used)) / rate : HUGE_VAL;
  };
  double gpu_left = seconds_left(from->gpu_limit, from->gpu_bytes, summary.gpu_growth_bytes_per_second);
  double host_left = seconds_left(from->host_limit, from->host_bytes, summary.host_growth_bytes_per_second);
  Projection p;
  p.gpu = gpu_left < host_left;
  p.from_t = from->seconds;
  p.from_bytes = double(p.gpu ? from->gpu_bytes : from->host_bytes);
  p.limit = double(p.gpu ? from->gpu_limit : from->host_limit);
  p.at_t = from->seconds + *summary.predicted_seconds_to_limit;
  if (p.limit <= 0) return std::nullopt;
  return p;
}

// The measured series, y scaled to the data; limits drawn when within reach, named otherwise.
svg::Panel MeasuredPanel(const WatchSummary& summary) {
  const std::vector<Sample>& samples = summary.samples;
  double t_end = samples.empty() ? 1 : std::max(samples.back().seconds, 1e-3);
  double data_max = 1;
  for (const Series& x : kSeries) {
    for (const Sample& s : samples) data_max = std::max(data_max, double(x.get(s)));
  }
  uint64_t host_limit = samples.empty() ? 0 : samples.back().host_limit;
  uint64_t gpu_limit = samples.empty() ? 0 : samples.back().gpu_limit;
  // A limit within 1.5x of the data is drawn; a farther one would flatten every series to the floor.
  bool draw_host = host_limit > 0 && host_limit <= 1.5 * data_max;
  bool draw_gpu = gpu_limit > 0 && gpu_limit <= 1.5 * data_max;
  double y_top = data_max;
  if (draw_host) y_top = std::max(y_top, double(host_limit));
  if (draw_gpu) y_top = std::max(y_top, double(gpu_limit));
  std::vector<double> yt = svg::ByteTicks(0, y_top * 1.05);
  std::vector<double> xt = svg::NiceTicks(0, t_end, 8);
  svg::Box box{900, 400, 92, 20, 58, 50};
  svg::SvgPlot plot(box, 0, xt.back(), 0, yt.back());
  plot.Title("oomguard watch: " + summary.verdict + " (measured)");
  plot.Axes(xt, Seconds, yt, Bytes, "seconds since the watch started", "memory");
  for (const Series& x : kSeries) {
    if (AllZero(samples, x)) continue;  // a series that never moved only hides the others
    plot.Polyline(Points(samples, x), x.color, "series", x.name);
    plot.LegendEntry(x.name, x.color);
  }
  if (draw_host) plot.HLine(double(host_limit), "#d62728", "limit", "host limit " + FormatBytes(host_limit));
  if (draw_gpu) plot.HLine(double(gpu_limit), "#17becf", "limit", "GPU limit " + FormatBytes(gpu_limit));
  std::string off_scale;
  if (host_limit > 0 && !draw_host) off_scale += "host limit " + FormatBytes(host_limit);
  if (gpu_limit > 0 && !draw_gpu) off_scale += std::string(off_scale.empty() ? "" : ", ") + "GPU limit " + FormatBytes(gpu_limit);
  if (!off_scale.empty()) {
    plot.TextAt(box.width - box.right - 4, box.top - 6, off_scale + " (above this scale)", "end", "#d62728",
                "limit-note");
  }
  if (summary.stopped_at_seconds) {
    plot.VLine(*summary.stopped_at_seconds, "black", "stop", "stopped (SIGINT) at " + Seconds(*summary.stopped_at_seconds));
  } else if (!samples.empty() && !EndLabel(summary).empty()) {
    plot.VLine(samples.back().seconds, "#555", "exit", EndLabel(summary) + " at " + Seconds(samples.back().seconds));
  }
  return {plot.Finish(), box.width, box.height};
}

// The prediction at true scale: the time axis runs to the predicted time, the y axis to the limit.
svg::Panel ProjectionPanel(const WatchSummary& summary, const Projection& p) {
  const Series& x = p.gpu ? kSeries[5] : kSeries[0];
  std::vector<double> yt = svg::ByteTicks(0, p.limit * 1.05);
  std::vector<double> xt = svg::NiceTicks(0, std::max(p.at_t, p.from_t) * 1.02, 8);
  svg::Box box{900, 300, 92, 20, 40, 50};
  svg::SvgPlot plot(box, 0, xt.back(), 0, yt.back());
  plot.Title(std::string("prediction at true scale: ") + (p.gpu ? "GPU" : "host") + " memory reaches its limit at " +
             Seconds(p.at_t));
  plot.Axes(xt, Seconds, yt, Bytes, "seconds since the watch started", "memory");
  plot.Polyline(Points(summary.samples, x), x.color, "series", x.name);
  plot.HLine(p.limit, "#d62728", "limit", std::string(p.gpu ? "GPU" : "host") + " limit " + Bytes(p.limit));
  plot.Line(p.from_t, p.from_bytes, p.at_t, p.limit, "#d62728", "prediction", "4,3");
  plot.Dot(p.at_t, p.limit, "#d62728", "prediction-end", "predicted limit at " + Seconds(p.at_t));
  plot.Text(p.at_t, p.limit, "limit at " + Seconds(p.at_t), "end", "#d62728", 16);
  if (summary.stopped_at_seconds) plot.VLine(*summary.stopped_at_seconds, "black", "stop", "stopped");
  return {plot.Finish(), box.width, box.height};
}

}  // namespace

std::string TimelineSvg(const WatchSummary& summary) {
  std::vector<svg::Panel> panels = {MeasuredPanel(summary)};
  if (std::optional<Projection> p = Predict(summary)) panels.push_back(ProjectionPanel(summary, *p));
  return svg::Stack(panels);
}

}  // namespace oomguard::doctor
