#include "plan_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "oomguard/plan/error_band.h"
#include "oomguard/units.h"

namespace oomguard::cli {
namespace {

struct Category {
  const char* key;
  const char* label;
  const char* color;
  uint64_t bytes;
};

std::vector<Category> Categories(const plan::MemoryBreakdown& b) {
  return {{"weights", "weights", "#4e79a7", b.weights},
          {"gradients", "gradients", "#f28e2b", b.gradients},
          {"optimizer_state", "optimizer state", "#e15759", b.optimizer_state},
          {"activations_saved", "activations saved", "#76b7b2", b.activations_saved},
          {"inputs", "inputs + labels", "#59a14f", b.inputs},
          {"transient", "temporaries", "#edc948", b.transient},
          {"workspace", "cuBLAS/cuDNN workspace", "#b07aa1", b.workspace},
          {"context", "CUDA context", "#ff9da7", b.context},
          {"allocator_slack", "allocator slack", "#9c755f", b.allocator_slack}};
}

nlohmann::json BreakdownJson(const plan::MemoryBreakdown& b) {
  nlohmann::json j;
  for (const Category& c : Categories(b)) j[c.key] = c.bytes;
  return j;
}

std::string Bar(double fraction, int width) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  int eighths = static_cast<int>(fraction * width * 8 + 0.5);
  static const char* kParts[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  std::string s;
  for (int i = 0; i < eighths / 8; ++i) s += "█";
  s += kParts[eighths % 8];
  return s;
}

std::string Shape(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "×" : "") + std::to_string(d[i]);
  return s + "]";
}

std::string Percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", v);
  return buf;
}

// "+10.0 %" / "-2.7 %": how far the measured peak may be from the plan at the band's edge.
std::string SignedPercent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f %%", 100 * fraction);
  return buf;
}

}  // namespace


nlohmann::json UncoveredJson(const std::vector<plan::UncoveredOp>& uncovered) {
  nlohmann::json a = nlohmann::json::array();
  for (const plan::UncoveredOp& u : uncovered) {
    a.push_back({{"op", u.op}, {"nodes", u.nodes}, {"bytes_at_risk", u.bytes_at_risk}});
  }
  return a;
}

nlohmann::json RisksJson(const std::vector<plan::PlanRisk>& risks) {
  nlohmann::json a = nlohmann::json::array();
  for (const plan::PlanRisk& r : risks) {
    a.push_back({{"what", r.what}, {"bytes", r.bytes}, {"direction", r.direction}});
  }
  return a;
}

std::string UncoveredLine(const plan::StepPlan& plan) {
  if (plan.uncovered.empty()) return "";
  uint64_t bytes = 0;
  std::string ops;
  for (size_t i = 0; i < plan.uncovered.size(); ++i) {
    const plan::UncoveredOp& u = plan.uncovered[i];
    bytes += u.bytes_at_risk;
    if (i < 4) ops += (i ? ", " : "") + u.op + " ×" + std::to_string(u.nodes);
  }
  if (plan.uncovered.size() > 4) ops += ", …";
  return "UNCOVERED: " + std::to_string(plan.uncovered.size()) + " operator type" +
         (plan.uncovered.size() == 1 ? "" : "s") + " without a memory rule (" + ops + "); " + FormatBytes(bytes) +
         " of this plan rests on a guess (they are assumed to keep all their inputs and outputs)\n";
}

std::optional<std::string> StrictFailure(const plan::StepPlan& plan) {
  if (plan.warnings.empty()) return std::nullopt;
  std::string more = plan.warnings.size() > 1 ? " (and " + std::to_string(plan.warnings.size() - 1) + " more)" : "";
  return "--strict: " + plan.warnings.front() + more;
}

nlohmann::json InplaceJson(const plan::InplaceSummary& inplace) {
  return {{"hint", inplace.hint},
          {"candidates", inplace.candidates},
          {"nodes", inplace.nodes},
          {"unsure", inplace.Unsure()}};
}

std::string InplaceLine(const plan::InplaceSummary& inplace) {
  if (!inplace.Unsure()) return "";
  const std::string n = std::to_string(inplace.candidates) + " activation node" + (inplace.candidates == 1 ? "" : "s");
  // Under 0.5 % either way (the peak outside the forward, where in-place activations free nothing): a note,
  // not an alarm. The JSON's "unsure" stays true.
  auto small = [](uint64_t low, uint64_t high) { return (high - std::min(low, high)) * 200 < high; };
  if (small(inplace.peak_allocated_low_bytes, inplace.peak_allocated_high_bytes) &&
      small(inplace.required_low_bytes, inplace.required_high_bytes)) {
    return "note: " + n + " may have run in place (inplace=True is not recorded in ONNX); it moves the peak by " +
           "under 0.5 % (" + FormatBytes(inplace.peak_allocated_low_bytes) + " all in place, " +
           FormatBytes(inplace.peak_allocated_high_bytes) + " none, as planned)\n";
  }
  return "UNSURE: " + n + " may have run in place (inplace=True is not recorded in ONNX); planned out of place. " +
         "Peak " + FormatBytes(inplace.peak_allocated_low_bytes) + " (all in place) to " +
         FormatBytes(inplace.peak_allocated_high_bytes) + " (none); needs " + FormatBytes(inplace.required_low_bytes) +
         " to " + FormatBytes(inplace.required_high_bytes) +
         ". Say which with --inplace NODE[,NODE...]|all|none, or export with oomguard.export()\n";
}

nlohmann::json GradModeJson(const plan::StepPlan& plan) {
  return {{"hint", plan.grad_mode_hint},
          {"no_grad_nodes", plan.no_grad_nodes},
          {"detached_nodes", plan.detached_nodes},
          {"no_grad_parameters", plan.no_grad_parameter_count}};
}

nlohmann::json CheckpointedJson(const plan::StepPlan& plan) {
  return {{"hint", plan.checkpoint_hint}, {"segments", plan.checkpointed_segments}, {"nodes", plan.checkpointed_nodes}};
}

nlohmann::json LocalsJson(const plan::StepPlan& plan) {
  return {{"hint", plan.locals_hint}, {"held", plan.locals_held}};
}

std::string CheckpointedLine(const plan::StepPlan& plan) {
  if (plan.checkpointed_segments == 0) return "";
  const uint64_t n = plan.checkpointed_segments;
  return "Planned with " + std::to_string(n) + " torch.utils.checkpoint segment" + (n == 1 ? "" : "s") + " (" +
         std::to_string(plan.checkpointed_nodes) + " nodes, from " +
         (plan.checkpoint_hint == "metadata" ? "the model's metadata" : "--checkpointed") +
         "): they keep only their inputs through forward and recompute the rest in backward\n";
}

std::string GradModeLine(const plan::StepPlan& plan) {
  if (plan.no_grad_nodes + plan.detached_nodes == 0) return CheckpointedLine(plan);
  std::string line = std::to_string(plan.no_grad_nodes) + " node" + (plan.no_grad_nodes == 1 ? "" : "s") +
                     " planned under torch.no_grad() and " + std::to_string(plan.detached_nodes) +
                     " as .detach()ed (from " +
                     (plan.grad_mode_hint == "metadata" ? "the model's metadata" : "--no-grad / --detached") + ")";
  if (plan.no_grad_parameter_count > 0) {
    line += "; " + std::to_string(plan.no_grad_parameter_count) +
            " parameters read only there get no gradient and no optimizer state";
  }
  return line + "\n" + CheckpointedLine(plan);
}

nlohmann::json UnseenModelBandJson(const plan::StepPlan& plan) {
  const std::optional<plan::ErrorBand>& band = plan::EmbeddedErrorBand();
  if (!band) return nullptr;
  const plan::BandBytes peak = plan::MeasuredRange(*band, plan.peak_allocated_bytes);
  // The rest of the requirement (allocator blocks, workspace, context) moves with the allocated peak.
  const uint64_t above = plan.required_bytes - std::min(plan.required_bytes, plan.peak_allocated_bytes);
  return {{"coverage", band->coverage},
          {"forward_chained", band->forward_chained},
          {"error_low", band->error_low},
          {"error_high", band->error_high},
          {"rows", band->rows},
          {"models", band->models},
          {"sets", band->sets},
          {"peak_allocated_bytes", {{"low", peak.low}, {"high", peak.high}}},
          {"required_bytes", {{"low", peak.low + above}, {"high", peak.high + above}}}};
}

std::string UnseenModelBandLine(const plan::StepPlan& plan) {
  const std::optional<plan::ErrorBand>& band = plan::EmbeddedErrorBand();
  if (!band) return "";
  const plan::BandBytes peak = plan::MeasuredRange(*band, plan.peak_allocated_bytes);
  char share[32];
  std::snprintf(share, sizeof share, "%.0f %%", 100 * band->coverage);
  return std::string("  if the model is new    ") + FormatBytes(peak.low) + " to " + FormatBytes(peak.high) + "   (" +
         share + " of " + std::to_string(band->models) + " models new to oomguard measured " +
         SignedPercent(1 / (1 + band->error_high) - 1) + " to " + SignedPercent(1 / (1 + band->error_low) - 1) +
         " from their blind plan, PyTorch CPU)\n";
}

PlanVerdict Judge(const plan::StepPlan& plan, const ResolvedPlanOptions& resolved) {
  PlanVerdict v;
  v.capacity_bytes = resolved.capacity_bytes;
  v.device_total_bytes = resolved.device_total_bytes;
  if (v.capacity_bytes) v.fits = plan.required_bytes <= *v.capacity_bytes;
  return v;
}

nlohmann::json PlanToJson(const plan::StepPlan& plan, const ResolvedPlanOptions& resolved) {
  PlanVerdict v = Judge(plan, resolved);
  const plan::PlanOptions& o = resolved.options;
  nlohmann::json j;
  j["model"] = plan.model;
  j["batch"] = plan.batch;
  j["target"] = plan::Name(plan.target);
  j["optimizer"] = plan::Name(o.optimizer);
  j["optimizer_impl"] = plan::Name(o.optimizer_impl);
  j["precision"] = plan::Name(o.precision);
  j["loss"] = plan::Name(o.loss);
  j["gpu"] = resolved.gpu ? nlohmann::json(std::string(resolved.gpu->key)) : nlohmann::json(nullptr);
  j["parameter_count"] = plan.parameter_count;
  j["frozen_parameters"] = plan.frozen_parameter_count;
  j["grad_mode"] = GradModeJson(plan);
  j["checkpointed"] = CheckpointedJson(plan);
  j["locals"] = LocalsJson(plan);
  j["peak_allocated_bytes"] = plan.peak_allocated_bytes;
  j["peak_reserved_bytes"] = plan.peak_reserved_bytes;
  j["required_bytes"] = plan.required_bytes;
  j["peak_allocated_range_bytes"] = {{"low", plan.inplace.peak_allocated_low_bytes},
                                     {"high", plan.inplace.peak_allocated_high_bytes}};
  j["required_range_bytes"] = {{"low", plan.inplace.required_low_bytes}, {"high", plan.inplace.required_high_bytes}};
  j["unseen_model_band"] = UnseenModelBandJson(plan);
  j["inplace"] = InplaceJson(plan.inplace);
  j["peak_phase"] = plan.peak_phase;
  j["device_total_bytes"] = v.device_total_bytes ? nlohmann::json(*v.device_total_bytes) : nlohmann::json(nullptr);
  j["bytes"] = BreakdownJson(plan.bytes);
  j["at_peak"] = BreakdownJson(plan.at_peak);
  j["capacity_bytes"] = v.capacity_bytes ? nlohmann::json(*v.capacity_bytes) : nlohmann::json(nullptr);
  j["fits"] = v.fits ? nlohmann::json(*v.fits) : nlohmann::json(nullptr);
  if (v.capacity_bytes) {
    j["headroom_bytes"] = static_cast<int64_t>(*v.capacity_bytes) - static_cast<int64_t>(plan.required_bytes);
  } else {
    j["headroom_bytes"] = nullptr;
  }
  nlohmann::json layers = nlohmann::json::array();
  for (const plan::LayerMemory& l : plan.layers) {
    layers.push_back({{"name", l.name},
                      {"op_type", l.op_type},
                      {"output_shape", l.output_shape},
                      {"saved_bytes", l.saved_bytes},
                      {"parameter_bytes", l.parameter_bytes},
                      {"output_bytes", l.output_bytes}});
  }
  j["layers"] = layers;
  j["warnings"] = plan.warnings;
  j["uncovered"] = UncoveredJson(plan.uncovered);
  j["risks"] = RisksJson(plan.risks);
  if (const plan::DataDependentShapes& d = plan.data_dependent; !d.nodes.empty() || !d.unplanned.empty()) {
    j["data_dependent"] = {{"nodes", d.nodes},
                           {"unplanned", d.unplanned},
                           {"tensors", d.tensors},
                           {"tensor_names", d.tensor_names},
                           {"least_bytes", d.least_bytes},
                           {"planned_bytes", d.planned_bytes},
                           {"most_bytes", d.most_bytes}};
  }
  j["advice"] = nlohmann::json::array();
  return j;
}

std::string PlanToText(const plan::StepPlan& plan, const ResolvedPlanOptions& resolved) {
  PlanVerdict v = Judge(plan, resolved);
  const plan::PlanOptions& o = resolved.options;
  std::ostringstream out;
  out << UncoveredLine(plan);
  out << plan.model << "  ·  batch " << plan.batch << "  ·  " << plan::Name(o.optimizer) << "  ·  "
      << plan::Name(o.precision) << "  ·  " << plan::Name(plan.target);
  if (resolved.gpu) out << " (" << resolved.gpu->name << ")";
  out << "\n" << plan.parameter_count << " parameters";
  if (plan.frozen_parameter_count > 0) {
    out << " trained, " << plan.frozen_parameter_count << " frozen (no gradient, no optimizer state)";
  }
  out << "\n" << GradModeLine(plan);
  for (const std::string& w : plan.warnings) out << "WARNING: " << w << "\n";
  out << InplaceLine(plan.inplace);
  if (!plan.inplace.nodes.empty()) {
    out << plan.inplace.nodes.size() << " activation node" << (plan.inplace.nodes.size() == 1 ? "" : "s")
        << " planned in place (from " << (plan.inplace.hint == "metadata" ? "the model's metadata" : "--inplace")
        << ")\n";
  }
  out << "\n";

  const bool cuda = plan.target == plan::Target::kCuda;
  auto line = [&](const std::string& label, uint64_t bytes, const std::string& note = "") {
    char buf[160];
    std::snprintf(buf, sizeof buf, "  %-18s %12s", label.c_str(), FormatBytes(bytes).c_str());
    out << buf << (note.empty() ? "" : "   " + note) << "\n";
  };
  line("peak allocated", plan.peak_allocated_bytes, "(during " + plan.peak_phase + ")");
  out << UnseenModelBandLine(plan);
  if (cuda) {
    line("peak reserved", plan.peak_reserved_bytes, "(caching allocator blocks)");
    line("+ workspace", plan.bytes.workspace);
    line("+ CUDA context", plan.bytes.context);
    line("= needs", plan.required_bytes);
  }
  out << "\nWhere the memory goes at the peak:\n";
  plan::MemoryBreakdown shown = plan.at_peak;
  uint64_t total = 0;
  for (const Category& c : Categories(shown)) total += c.bytes;
  for (const Category& c : Categories(shown)) {
    if (!cuda && (std::string(c.key) == "workspace" || std::string(c.key) == "context" ||
                  std::string(c.key) == "allocator_slack")) {
      continue;
    }
    double f = total ? static_cast<double>(c.bytes) / static_cast<double>(total) : 0;
    char buf[200];
    std::snprintf(buf, sizeof buf, "  %-24s %12s %7s  ", c.label, FormatBytes(c.bytes).c_str(),
                  Percent(100 * f).c_str());
    out << buf << Bar(f, 30) << "\n";
  }
  if (plan.bytes.activations_saved != plan.at_peak.activations_saved) {
    out << "  (the forward pass keeps " << FormatBytes(plan.bytes.activations_saved)
        << " for backward in all; the peak is in the " << plan.peak_phase << " step)\n";
  }

  std::vector<const plan::LayerMemory*> top;
  for (const plan::LayerMemory& l : plan.layers) {
    if (l.saved_bytes > 0) top.push_back(&l);
  }
  std::stable_sort(top.begin(), top.end(),
                   [](const auto* a, const auto* b) { return a->saved_bytes > b->saved_bytes; });
  if (top.size() > 10) top.resize(10);
  if (!top.empty()) {
    out << "\nTop " << top.size() << " layers by memory kept for backward:\n";
    size_t name_width = 5;
    for (const auto* l : top) name_width = std::max(name_width, std::min<size_t>(l->name.size(), 44));
    for (const auto* l : top) {
      std::string name = l->name.size() > 44 ? "…" + l->name.substr(l->name.size() - 43) : l->name;
      char buf[320];
      std::snprintf(buf, sizeof buf, "  %-*s %-18s %-22s %12s", static_cast<int>(name_width), name.c_str(),
                    l->op_type.c_str(), Shape(l->output_shape).c_str(), FormatBytes(l->saved_bytes).c_str());
      out << buf << "\n";
    }
  }

  out << "\n";
  if (!v.capacity_bytes) {
    out << "Verdict: needs " << FormatBytes(plan.required_bytes)
        << " (give --gpu NAME or --memory BYTES to check it fits)\n";
  } else {
    int64_t headroom = static_cast<int64_t>(*v.capacity_bytes) - static_cast<int64_t>(plan.required_bytes);
    double pct = 100.0 * static_cast<double>(headroom) / static_cast<double>(*v.capacity_bytes);
    if (*v.fits) {
      out << "Verdict: FITS — needs " << FormatBytes(plan.required_bytes) << " of "
          << FormatBytes(*v.capacity_bytes) << ", headroom " << FormatBytes(static_cast<uint64_t>(headroom)) << " ("
          << Percent(pct) << ")\n";
    } else {
      out << "Verdict: DOES NOT FIT — needs " << FormatBytes(plan.required_bytes) << " of "
          << FormatBytes(*v.capacity_bytes) << ", short by " << FormatBytes(static_cast<uint64_t>(-headroom))
          << "\n";
    }
    if (plan.inplace.Unsure() && plan.inplace.required_low_bytes <= *v.capacity_bytes &&
        *v.capacity_bytes < plan.inplace.required_high_bytes) {
      out << "  (with the candidate activations in place it needs " << FormatBytes(plan.inplace.required_low_bytes)
          << ": the verdict depends on inplace=True)\n";
    }
  }
  return out.str();
}

}  // namespace oomguard::cli
