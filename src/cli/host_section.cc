#include "host_section.h"

#include <cstdio>
#include <sstream>

#include "common.h"
#include "oomguard/doctor/system_view.h"
#include "oomguard/svg.h"
#include "oomguard/units.h"
#include "plan_report.h"

namespace oomguard::cli {
namespace {

struct Part {
  const char* label;
  const char* color;
  uint64_t bytes;
};

std::vector<Part> Parts(const host::HostPlan& p) {
  return {{"process baseline (python, torch)", "#4e79a7", p.baseline_bytes},
          {"CUDA runtime (host side)", "#ff9da7", p.cuda_runtime_bytes},
          {"loader workers / batch assembly", "#f28e2b", p.workers_bytes},
          {"batches in flight", "#76b7b2", p.in_flight_bytes},
          {"held items (queue, preloaded)", "#e15759", p.held_bytes},
          {"preload leftovers (give or take all)", "#edc948", p.preload_slack_bytes},
          {"pinned (page-locked)", "#b07aa1", p.pinned_bytes},
          {"training step (target cpu)", "#59a14f", p.step_bytes}};
  // REQUIRES: the order above; HostToText annotates parts 2 (workers) and 3 (in flight) by index.
}

// needs / capacity, or nullopt without a capacity.
std::optional<double> Pressure(uint64_t needs, std::optional<uint64_t> capacity) {
  if (!capacity || *capacity == 0) return std::nullopt;
  return static_cast<double>(needs) / static_cast<double>(*capacity);
}

std::string VerdictLine(const HostSection& h, const plan::StepPlan& step, std::optional<uint64_t> device_capacity) {
  std::optional<double> host = Pressure(h.plan.peak_bytes, h.limits.memory_bytes);
  std::optional<double> device = Pressure(step.required_bytes, device_capacity);
  auto side = [](const char* name, uint64_t needs, std::optional<uint64_t> cap) {
    std::string s = std::string(name) + " needs " + FormatBytes(needs);
    if (!cap) return s + " (no capacity given)";
    s += " of " + FormatBytes(*cap);
    if (needs > *cap) return s + ", short by " + FormatBytes(needs - *cap);
    return s + ", headroom " + FormatBytes(*cap - needs);
  };
  std::string host_text = side("the host", h.plan.peak_bytes, h.limits.memory_bytes);
  std::string device_text = side("the device", step.required_bytes, device_capacity);
  std::optional<bool> fits = CombinedFits(device ? std::optional<bool>(*device <= 1.0) : std::nullopt, h);
  std::string head = !fits ? "Verdict (host and device): unknown for the device — "
                     : *fits ? "Verdict (host and device): FITS — "
                             : "Verdict (host and device): DOES NOT FIT — ";
  if (host && device) {
    bool host_first = *host >= *device;
    return head + (host_first ? "the host runs out first: " + host_text + "; " + device_text
                              : "the device runs out first: " + device_text + "; " + host_text) + "\n";
  }
  return head + host_text + "; " + device_text + "\n";
}

}  // namespace

bool HostCliValues::Any() const {
  return !sample.empty() || loader_workers || prefetch_factor || pin_memory || persistent_workers || queue ||
         dataset_in_memory || host_memory || memlock;
}

void AddHostOptions(CLI::App& app, HostCliValues* v) {
  const char* group = "Host side (docs/host.md)";
  app.add_option("--sample", v->sample, "one item as the input pipeline holds it, DIMS:DTYPE (e.g. 3x480x640:uint8)")
      ->group(group);
  ShowDefault(app.add_option("--loader-workers", v->loader_workers, "DataLoader num_workers (0: the main process loads)"),
              "0")
      ->group(group);
  ShowDefault(app.add_option("--prefetch-factor", v->prefetch_factor, "batches each worker keeps ready, as in PyTorch"),
              "2")
      ->group(group);
  app.add_flag("--pin-memory", v->pin_memory, "DataLoader pin_memory=True")->group(group);
  app.add_flag("--persistent-workers", v->persistent_workers, "DataLoader persistent_workers=True")->group(group);
  ShowDefault(app.add_option("--queue", v->queue, "items held in a queue or shuffle buffer"), "0")->group(group);
  ShowDefault(app.add_option("--dataset-in-memory", v->dataset_in_memory, "items preloaded (decoded) in memory"), "0")
      ->group(group);
  ShowDefault(AddBytesOption(app, "--host-memory", &v->host_memory, "host RAM to plan against"),
              "this machine's MemTotal")
      ->group(group);
  ShowDefault(AddBytesOption(app, "--memlock", &v->memlock, "locked-memory limit"), "this process's ulimit -l")
      ->group(group);
}

Result<std::optional<HostSection>> ResolveHostSection(const HostCliValues& v, const plan::Model& model,
                                                      const plan::PlanOptions& options, const plan::StepPlan& step,
                                                      const doctor::SystemView& system) {
  if (!v.Any()) return std::optional<HostSection>();
  HostSection h;
  host::PipelineOptions& o = h.options;
  if (!v.sample.empty()) {
    Result<host::Sample> s = host::ParseSample(v.sample);
    if (!s) return MakeError(s.error());
    o.sample = *s;
  } else {
    plan::ModelSummary summary = plan::Summarize(model);
    if (summary.inputs.empty() || summary.inputs[0].second.size() < 2) {
      return MakeError("the model's first input has no per-sample shape; give --sample DIMS:DTYPE");
    }
    const auto& [name, dims] = summary.inputs[0];
    std::vector<int64_t> per_sample(dims.begin() + 1, dims.end());
    if (auto it = options.input_overrides.find(name); it != options.input_overrides.end()) per_sample = it->second;
    for (int64_t d : per_sample) {
      if (d <= 0) return MakeError("input '" + name + "' has a symbolic dimension; give --sample DIMS:DTYPE");
    }
    o.sample.dims = per_sample;
    o.sample.dtype = host::DType::kFloat32;
  }
  o.batch = step.batch;
  o.loader_workers = v.loader_workers.value_or(0);
  o.prefetch_factor = v.prefetch_factor.value_or(2);
  o.pin_memory = v.pin_memory;
  o.persistent_workers = v.persistent_workers;
  o.queue_items = v.queue.value_or(0);
  o.dataset_in_memory = v.dataset_in_memory.value_or(0);
  o.cuda = step.target == plan::Target::kCuda;
  if (!o.cuda) o.step_bytes = step.required_bytes;
  if (v.prefetch_factor && o.loader_workers == 0) {
    return MakeError("--prefetch-factor needs --loader-workers 1 or more (PyTorch refuses it with 0 workers)");
  }
  if (Status s = host::ValidatePipeline(o); !s.ok()) return MakeError(s.error());
  h.limits = host::HostLimitsFromSystem(system);
  if (v.host_memory) {
    if (*v.host_memory == 0) return MakeError("--host-memory must be more than 0 bytes");
    h.limits.memory_bytes = *v.host_memory;
  }
  if (v.memlock) h.limits.memlock_bytes = *v.memlock;
  h.plan = host::PlanHost(o);
  h.verdict = host::JudgeHost(h.plan, h.limits);
  if (h.limits.memory_bytes) h.advice = host::AdviseHost(o, *h.limits.memory_bytes);
  return std::optional<HostSection>(std::move(h));
}

std::optional<bool> CombinedFits(std::optional<bool> device_fits, const HostSection& host) {
  if ((device_fits && !*device_fits) || (host.verdict.fits && !*host.verdict.fits)) return false;
  if (!device_fits || !host.verdict.fits) return std::nullopt;
  return true;
}

nlohmann::json HostToJson(const HostSection& h) {
  const host::HostPlan& p = h.plan;
  auto opt = [](const std::optional<uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json advice = nlohmann::json::array();
  for (const host::HostAdvice& a : h.advice) {
    advice.push_back({{"action", a.action},
                      {"saves_bytes", a.saves_bytes},
                      {"peak_bytes", a.peak_bytes},
                      {"pinned_bytes", a.pinned_bytes},
                      {"fits", a.fits}});
  }
  nlohmann::json j = {
      {"sample", h.options.sample.ToString()},
      {"loader_workers", h.options.loader_workers},
      {"prefetch_factor", h.options.prefetch_factor},
      {"pin_memory", h.options.pin_memory},
      {"persistent_workers", h.options.persistent_workers},
      {"queue_items", h.options.queue_items},
      {"dataset_in_memory", h.options.dataset_in_memory},
      {"item_bytes", p.item_bytes},
      {"batch_bytes", p.batch_bytes},
      {"peak_bytes", p.peak_bytes},
      {"pinned_bytes", p.pinned_bytes},
      {"baseline_bytes", p.baseline_bytes},
      {"cuda_runtime_bytes", p.cuda_runtime_bytes},
      {"per_worker_bytes", p.per_worker_bytes},
      {"workers_bytes", p.workers_bytes},
      {"in_flight_batches", p.in_flight_batches},
      {"in_flight_bytes", p.in_flight_bytes},
      {"held_bytes", p.held_bytes},
      {"preload_slack_bytes", p.preload_slack_bytes},
      {"step_bytes", p.step_bytes},
      {"capacity_bytes", opt(h.limits.memory_bytes)},
      {"memlock_bytes", opt(h.limits.memlock_bytes)},
      {"fits", h.verdict.fits ? nlohmann::json(*h.verdict.fits) : nlohmann::json(nullptr)},
      {"headroom_bytes", h.limits.memory_bytes ? nlohmann::json(h.verdict.headroom_bytes) : nlohmann::json(nullptr)},
      {"notes", p.notes},
      {"warnings", h.verdict.warnings},
      {"advice", advice}};
  return j;
}

std::string HostToText(const HostSection& h, const plan::StepPlan& step, std::optional<uint64_t> device_capacity) {
  const host::HostPlan& p = h.plan;
  std::ostringstream out;
  char buf[240];
  auto cap = [](std::optional<uint64_t> c) { return c ? FormatBytes(*c) : std::string("-"); };
  auto verdict = [](uint64_t needs, std::optional<uint64_t> c) {
    return !c ? std::string("-") : needs <= *c ? std::string("fits") : std::string("DOES NOT FIT");
  };
  out << "\nHost and device, side by side (host: " << h.options.sample.ToString() << ", batch " << h.options.batch
      << ", " << h.options.loader_workers << " workers";
  if (h.options.loader_workers > 0) out << " x prefetch " << h.options.prefetch_factor;
  out << (h.options.pin_memory ? ", pin_memory" : "") << "):\n";
  std::snprintf(buf, sizeof buf, "  %-12s %16s %16s\n", "", "host RAM", "device");
  out << buf;
  std::snprintf(buf, sizeof buf, "  %-12s %16s %16s\n", "needs", FormatBytes(p.peak_bytes).c_str(),
                FormatBytes(step.required_bytes).c_str());
  out << buf;
  std::snprintf(buf, sizeof buf, "  %-12s %16s %16s\n", "capacity", cap(h.limits.memory_bytes).c_str(),
                cap(device_capacity).c_str());
  out << buf;
  std::snprintf(buf, sizeof buf, "  %-12s %16s %16s\n", "verdict", verdict(p.peak_bytes, h.limits.memory_bytes).c_str(),
                verdict(step.required_bytes, device_capacity).c_str());
  out << buf;
  out << "\nWhere the host memory goes at the peak:\n";
  const std::vector<Part> parts = Parts(p);
  for (size_t i = 0; i < parts.size(); ++i) {
    const Part& part = parts[i];
    if (part.bytes == 0) continue;
    std::snprintf(buf, sizeof buf, "  %-36s %12s", part.label, FormatBytes(part.bytes).c_str());
    out << buf;
    if (i == 2 && h.options.loader_workers > 0) {
      out << "   (" << h.options.loader_workers << " x " << FormatBytes(p.per_worker_bytes) << ")";
    } else if (i == 3 && !h.options.pin_memory) {
      out << "   (" << p.in_flight_batches << " batches of " << FormatBytes(p.batch_bytes) << ")";
    }
    out << "\n";
  }
  if (h.limits.memlock_bytes) out << "  memlock limit " << FormatBytes(*h.limits.memlock_bytes) << "\n";
  for (const std::string& n : p.notes) out << "  note: " << n << "\n";
  for (const std::string& w : h.verdict.warnings) out << "warning: " << w << "\n";
  if (!h.advice.empty()) {
    out << "\nWhat if, on the host (each re-planned at batch " << h.options.batch << "):\n";
    int n = 0;
    for (const host::HostAdvice& a : h.advice) {
      out << "  " << ++n << ". " << a.action << "\n     saves " << FormatBytes(a.saves_bytes) << " -> "
          << FormatBytes(a.peak_bytes);
      if (h.options.pin_memory) out << " (pinned " << FormatBytes(a.pinned_bytes) << ")";
      out << (a.fits ? ", fits" : ", still does not fit") << "\n";
    }
  }
  out << "\n" << VerdictLine(h, step, device_capacity);
  return out.str();
}

std::string HostToHtml(const HostSection& h, const plan::StepPlan& step, std::optional<uint64_t> device_capacity) {
  const host::HostPlan& p = h.plan;
  std::ostringstream o;
  auto cap = [](std::optional<uint64_t> c) { return c ? FormatBytes(*c) : std::string("-"); };
  o << "<h2>Host and device</h2>\n<table><tr><th></th><th>host RAM</th><th>device</th></tr>\n"
    << "<tr><td>needs</td><td>" << FormatBytes(p.peak_bytes) << "</td><td>" << FormatBytes(step.required_bytes)
    << "</td></tr>\n<tr><td>capacity</td><td>" << cap(h.limits.memory_bytes) << "</td><td>" << cap(device_capacity)
    << "</td></tr>\n</table>\n<p><b>" << svg::Escape(VerdictLine(h, step, device_capacity)) << "</b></p>\n";
  const int width = 800;
  o << "<svg width=\"" << width << "\" height=\"40\" xmlns=\"http://www.w3.org/2000/svg\">";
  double x = 0;
  for (const Part& part : Parts(p)) {
    if (!part.bytes || !p.peak_bytes) continue;
    double w = width * static_cast<double>(part.bytes) / static_cast<double>(p.peak_bytes);
    o << "<rect x=\"" << x << "\" y=\"0\" width=\"" << w << "\" height=\"40\" fill=\"" << part.color << "\"><title>"
      << part.label << ": " << svg::Escape(FormatBytes(part.bytes)) << "</title></rect>";
    x += w;
  }
  o << "</svg>\n<table><tr><th>host part</th><th>bytes</th></tr>\n";
  for (const Part& part : Parts(p)) {
    o << "<tr><td class=\"legend\"><span style=\"background:" << part.color << "\"></span>" << part.label
      << "</td><td>" << svg::Escape(FormatBytes(part.bytes)) << "</td></tr>\n";
  }
  o << "</table>\n";
  if (!h.advice.empty()) {
    o << "<h3>What if, on the host</h3>\n<ol>\n";
    for (const host::HostAdvice& a : h.advice) {
      o << "<li>" << svg::Escape(a.action) << ": saves " << svg::Escape(FormatBytes(a.saves_bytes)) << " &rarr; "
        << svg::Escape(FormatBytes(a.peak_bytes)) << (a.fits ? ", fits" : ", still does not fit") << "</li>\n";
    }
    o << "</ol>\n";
  }
  for (const std::string& w : h.verdict.warnings) o << "<p>warning: " << svg::Escape(w) << "</p>\n";
  return o.str();
}

}  // namespace oomguard::cli
