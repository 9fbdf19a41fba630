#include "oomguard/doctor/watch_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

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

constexpr double kWidth = 900, kHeight = 420, kLeft = 80, kRight = 170, kTop = 30, kBottom = 50;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

}  // namespace

std::string TimelineSvg(const WatchSummary& summary) {
  const std::vector<Sample>& samples = summary.samples;
  double t_end = samples.empty() ? 1 : std::max(samples.back().seconds, 1e-3);
  double prediction_t = -1;
  uint64_t host_limit = samples.empty() ? 0 : samples.back().host_limit;
  uint64_t gpu_limit = samples.empty() ? 0 : samples.back().gpu_limit;
  if (summary.predicted_seconds_to_limit && !samples.empty()) {
    double at = summary.stopped_at_seconds ? *summary.stopped_at_seconds : samples.back().seconds;
    prediction_t = at + *summary.predicted_seconds_to_limit;
    t_end = std::max(t_end, std::min(prediction_t, 3 * t_end));
  }
  double y_max = 1;
  for (const Sample& s : samples) {
    y_max = std::max({y_max, double(s.host_bytes), double(s.gpu_bytes), double(s.host.locked), double(s.host.pinned)});
  }
  // Show a limit when it is within reach of the plot (a far-away one would flatten every series)
  // or when a prediction points at it.
  bool predicted = prediction_t >= 0;
  bool show_host_limit = host_limit > 0 && (host_limit <= 4 * y_max || predicted);
  bool show_gpu_limit = gpu_limit > 0 && (gpu_limit <= 4 * y_max || (predicted && summary.gpu_growth_bytes_per_second > 0));
  if (show_host_limit) y_max = std::max(y_max, double(host_limit));
  if (show_gpu_limit) y_max = std::max(y_max, double(gpu_limit));
  y_max *= 1.08;
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto X = [&](double t) { return kLeft + pw * std::clamp(t / t_end, 0.0, 1.0); };
  auto Y = [&](double b) { return kTop + ph * (1 - std::clamp(b / y_max, 0.0, 1.0)); };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"" << kLeft << "\" y=\"18\" font-size=\"14\">oomguard watch: " << Escape(summary.verdict)
      << "</text>\n";
  // Axes and grid.
  svg << "<line x1=\"" << kLeft << "\" y1=\"" << kTop + ph << "\" x2=\"" << kLeft + pw << "\" y2=\"" << kTop + ph
      << "\" stroke=\"black\"/>\n";
  svg << "<line x1=\"" << kLeft << "\" y1=\"" << kTop << "\" x2=\"" << kLeft << "\" y2=\"" << kTop + ph
      << "\" stroke=\"black\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    double b = y_max * i / 4, t = t_end * i / 4;
    svg << "<text x=\"" << kLeft - 6 << "\" y=\"" << Num(Y(b) + 4) << "\" text-anchor=\"end\">"
        << Escape(FormatBytes(static_cast<uint64_t>(b))) << "</text>\n";
    svg << "<line x1=\"" << kLeft << "\" y1=\"" << Num(Y(b)) << "\" x2=\"" << kLeft + pw << "\" y2=\"" << Num(Y(b))
        << "\" stroke=\"#eee\"/>\n";
    svg << "<text x=\"" << Num(X(t)) << "\" y=\"" << kTop + ph + 18 << "\" text-anchor=\"middle\">" << Num(t)
        << " s</text>\n";
  }
  svg << "<text x=\"" << kLeft + pw / 2 << "\" y=\"" << kHeight - 10 << "\" text-anchor=\"middle\">seconds</text>\n";

  struct Series {
    const char* name;
    const char* color;
    uint64_t (*get)(const Sample&);
  };
  const Series series[] = {
      {"host (rss+swap)", "#1f77b4", [](const Sample& s) { return s.host_bytes; }},
      {"rss", "#aec7e8", [](const Sample& s) { return s.host.rss; }},
      {"swap", "#ff7f0e", [](const Sample& s) { return s.host.swap; }},
      {"locked", "#9467bd", [](const Sample& s) { return s.host.locked; }},
      {"pinned", "#8c564b", [](const Sample& s) { return s.host.pinned; }},
      {"gpu", "#2ca02c", [](const Sample& s) { return s.gpu_bytes; }},
  };
  double legend_y = kTop + 10;
  for (const Series& x : series) {
    svg << "<polyline fill=\"none\" stroke=\"" << x.color << "\" stroke-width=\"2\" points=\"";
    for (const Sample& s : samples) svg << Num(X(s.seconds)) << ',' << Num(Y(double(x.get(s)))) << ' ';
    svg << "\"><title>" << x.name << "</title></polyline>\n";
    svg << "<line x1=\"" << kLeft + pw + 12 << "\" y1=\"" << legend_y << "\" x2=\"" << kLeft + pw + 32 << "\" y2=\""
        << legend_y << "\" stroke=\"" << x.color << "\" stroke-width=\"2\"/><text x=\"" << kLeft + pw + 38
        << "\" y=\"" << legend_y + 4 << "\">" << x.name << "</text>\n";
    legend_y += 18;
  }
  auto limit_line = [&](uint64_t limit, const char* label, const char* color) {
    svg << "<line class=\"limit\" x1=\"" << kLeft << "\" y1=\"" << Num(Y(double(limit))) << "\" x2=\"" << kLeft + pw
        << "\" y2=\"" << Num(Y(double(limit))) << "\" stroke=\"" << color << "\" stroke-dasharray=\"6,4\"/>\n";
    svg << "<text x=\"" << kLeft + pw - 4 << "\" y=\"" << Num(Y(double(limit)) - 4) << "\" text-anchor=\"end\" fill=\""
        << color << "\">" << label << " " << Escape(FormatBytes(limit)) << "</text>\n";
  };
  if (show_host_limit) limit_line(host_limit, "host limit", "#d62728");
  if (show_gpu_limit) limit_line(gpu_limit, "GPU limit", "#17becf");
  if (prediction_t >= 0 && !samples.empty()) {
    const Sample* from = &samples.back();
    if (summary.stopped_at_seconds) {
      for (const Sample& s : samples) {
        if (s.seconds <= *summary.stopped_at_seconds) from = &s;
      }
    }
    bool gpu_first = summary.gpu_growth_bytes_per_second > 0 && from->gpu_limit > 0 &&
                     (from->host_limit == 0 ||
                      (from->gpu_limit - std::min(from->gpu_limit, from->gpu_bytes)) / summary.gpu_growth_bytes_per_second <
                          (from->host_limit - std::min(from->host_limit, from->host_bytes)) /
                              std::max(summary.host_growth_bytes_per_second, 1e-9));
    double y0 = gpu_first ? from->gpu_bytes : from->host_bytes;
    double y1 = gpu_first ? from->gpu_limit : from->host_limit;
    svg << "<line class=\"prediction\" x1=\"" << Num(X(from->seconds)) << "\" y1=\"" << Num(Y(y0)) << "\" x2=\""
        << Num(X(prediction_t)) << "\" y2=\"" << Num(Y(y1)) << "\" stroke=\"#d62728\" stroke-dasharray=\"2,3\"/>\n";
    svg << "<circle cx=\"" << Num(X(prediction_t)) << "\" cy=\"" << Num(Y(y1)) << "\" r=\"4\" fill=\"#d62728\"/>\n";
    svg << "<text x=\"" << Num(X(prediction_t) - 6) << "\" y=\"" << Num(Y(y1) + 16) << "\" text-anchor=\"end\" "
        << "fill=\"#d62728\">predicted limit at " << Num(prediction_t) << " s</text>\n";
  }
  if (summary.stopped_at_seconds) {
    double x = X(*summary.stopped_at_seconds);
    svg << "<line class=\"stop\" x1=\"" << Num(x) << "\" y1=\"" << kTop << "\" x2=\"" << Num(x) << "\" y2=\""
        << kTop + ph << "\" stroke=\"black\" stroke-dasharray=\"3,3\"/>\n";
    svg << "<text x=\"" << Num(x + 4) << "\" y=\"" << kTop + 12 << "\">SIGINT</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace oomguard::doctor
