// oomguard split MODEL (--global-batch N | --maximize) (--gpus K --gpu NAME |
// --gpu-memory LIST) [--strategy dp|ddp|zero1|zero2|zero3]: a local batch,
// predicted peak and loss weight per GPU; --emit torchrun FILE writes the
// per-rank settings for a launch script.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

#include "commands.h"
#include "common.h"
#include "fit/advice_json.h"
#include "oomguard/fit/advice.h"
#include "oomguard/fit/chart.h"
#include "oomguard/fit/split.h"
#include "oomguard/units.h"
#include "plan_options.h"
#include "plan_report.h"

namespace oomguard::cli {

namespace {

constexpr const char* kCommand = "split";

std::string Weight(double w) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", w);
  return buf;
}

// Per-rank settings for torchrun/DDP launch scripts: JSON (FILE.json) or an
// env file (anything else) with comma-separated per-rank lists.
std::string EmitTorchrun(const fit::SplitResult& s, bool json) {
  const int world = s.gpus;
  if (json) {
    nlohmann::json j;
    j["strategy"] = std::string(fit::Name(s.strategy));
    j["world_size"] = world;
    j["global_batch"] = s.global_batch;
    j["ranks"] = nlohmann::json::array();
    for (const fit::GpuShare& g : s.per_gpu) {
      j["ranks"].push_back({{"rank", g.index},
                            {"local_batch", g.batch},
                            {"loss_weight", g.loss_weight},
                            {"loss_scale", g.loss_weight * world},
                            {"predicted_peak_bytes", g.peak_bytes}});
    }
    return j.dump(2) + "\n";
  }
  std::string batches, weights, scales;
  for (const fit::GpuShare& g : s.per_gpu) {
    const std::string sep = g.index ? "," : "";
    batches += sep + std::to_string(g.batch);
    weights += sep + Weight(g.loss_weight);
    scales += sep + Weight(g.loss_weight * world);
  }
  return "# oomguard split: per-rank settings; rank r takes field r+1 of each list\n"
         "OOMGUARD_STRATEGY=" + std::string(fit::Name(s.strategy)) + "\n" +
         "OOMGUARD_WORLD_SIZE=" + std::to_string(world) + "\n" +
         "OOMGUARD_GLOBAL_BATCH=" + std::to_string(s.global_batch) + "\n" +
         "OOMGUARD_LOCAL_BATCHES=" + batches + "\n" +
         "OOMGUARD_LOSS_WEIGHTS=" + weights + "\n" +
         "OOMGUARD_LOSS_SCALES=" + scales + "\n";
}

nlohmann::json ToJson(const fit::SplitResult& s, const std::string& model,
                      const std::vector<uint64_t>& capacities) {
  nlohmann::json j;
  j["model"] = model;
  j["strategy"] = std::string(fit::Name(s.strategy));
  j["gpus"] = s.gpus;
  j["possible"] = s.possible;
  j["global_batch"] = s.global_batch;
  j["max_global_batch"] = s.max_global_batch;
  j["reason"] = s.possible ? nlohmann::json(nullptr) : nlohmann::json(s.reason);
  j["per_gpu"] = nlohmann::json::array();
  for (const fit::GpuShare& g : s.per_gpu) {
    j["per_gpu"].push_back({{"index", g.index},
                            {"batch", g.batch},
                            {"peak_bytes", g.peak_bytes},
                            {"loss_weight", g.loss_weight},
                            {"capacity_bytes", capacities[g.index]},
                            {"budget_bytes", g.budget_bytes},
                            {"max_batch", g.max_batch},
                            {"strategy_extra_bytes", g.extra_bytes},
                            {"model_states_bytes", fit::BatchIndependentBytes(g.plan)},
                            {"activations_saved_bytes", g.plan.bytes.activations_saved}});
  }
  if (s.even) {
    nlohmann::json e;
    e["batch"] = s.even->batch;
    e["peak_bytes"] = s.even->peak_bytes;
    e["fits"] = s.even->fits;
    j["even_split"] = e;
  } else {
    j["even_split"] = nullptr;
  }
  j["notes"] = s.notes;
  return j;
}

}  // namespace

int RunSplit(int argc, char** argv) {
  CLI::App app{"Split a global batch over several GPUs (possibly with different memory)."};
  PlanCliValues values;
  AddPlanOptions(app, &values, {.with_batch = false, .with_html = true});
  std::optional<int64_t> global_batch;
  bool maximize = false;
  std::optional<int> gpus;
  std::string gpu_memory;
  std::string strategy_name = "ddp";
  std::optional<uint64_t> reserve;
  double margin = fit::kDefaultMarginPercent;
  double bucket_mib = 25;
  std::vector<std::string> emit;
  auto* gb = AddNumberOption(app, "--global-batch", &global_batch, 1, std::numeric_limits<int64_t>::max(),
                            "the global batch to split (above 2^31 per GPU it is clamped, with a note)");
  auto* mx = app.add_flag("--maximize", maximize, "find the largest global batch instead");
  gb->excludes(mx);
  AddNumberOption(app, "--gpus", &gpus, 1, kMaxListEntries, "number of GPUs (with --gpu NAME or --memory BYTES)");
  app.add_option("--gpu-memory", gpu_memory, "memory of each GPU, comma-separated (e.g. 11GiB,11GiB,24GiB)")
      ->type_name("LIST");
  app.add_option("--strategy", strategy_name, "dp, ddp, zero1, zero2 or zero3")->capture_default_str();
  ShowDefault(AddBytesOption(app, "--reserve", &reserve, "memory held by other processes on each GPU"), "0");
  AddNumberOption(app, "--margin", &margin, 0, 100, "safety margin, percent of each GPU's capacity");
  AddNumberOption(app, "--bucket-mib", &bucket_mib, 1.0 / (1 << 20), 1 << 20, "DDP/ZeRO gradient bucket size in MiB (two are alive)");
  app.add_option("--emit", emit, "write per-rank settings: --emit torchrun FILE (.json, else an env file)")
      ->expected(2)
      ->type_name("torchrun FILE");
  if (std::optional<int> rc = Parse(app, kCommand, argc, argv)) return *rc;

  Result<fit::Strategy> strategy = fit::ParseStrategy(strategy_name);
  if (!strategy) return UsageError(kCommand, strategy.error());
  if (!global_batch && !maximize) return UsageError(kCommand, "give --global-batch N or --maximize");
  if (global_batch && *global_batch < 1) {
    return UsageError(kCommand, "--global-batch must be at least 1, got " + std::to_string(*global_batch));
  }
  if (!emit.empty() && emit[0] != "torchrun") {
    return UsageError(kCommand, "--emit: unknown format '" + emit[0] + "' (expected torchrun)");
  }
  if (!(bucket_mib > 0 && bucket_mib <= 1 << 20)) {
    return UsageError(kCommand, "--bucket-mib must be a positive size in MiB");
  }
  Result<ResolvedPlanOptions> resolved = ResolvePlanOptions(values);
  if (!resolved) return UsageError(kCommand, resolved.error());

  // One capacity per GPU.
  std::vector<uint64_t> capacities;
  if (!gpu_memory.empty()) {
    Result<std::vector<uint64_t>> list = ParseByteList(gpu_memory);
    if (!list) return UsageError(kCommand, "--gpu-memory: " + list.error());
    if (list->empty()) return UsageError(kCommand, "--gpu-memory: no sizes given");
    if (gpus && *gpus != static_cast<int>(list->size())) {
      return UsageError(kCommand, "--gpus " + std::to_string(*gpus) + " does not match the " +
                                      std::to_string(list->size()) + " sizes of --gpu-memory");
    }
    for (uint64_t c : *list) {
      if (c == 0) return UsageError(kCommand, "--gpu-memory: a GPU of 0 bytes");
      const double f = values.fraction.value_or(1.0);
      capacities.push_back(static_cast<uint64_t>(static_cast<long double>(c) * f));
    }
  } else {
    if (!gpus) return UsageError(kCommand, "give --gpus K with --gpu NAME or --memory BYTES, or --gpu-memory LIST");
    if (*gpus < 1) return UsageError(kCommand, "--gpus must be at least 1, got " + std::to_string(*gpus));
    if (!resolved->capacity_bytes) {
      return UsageError(kCommand, "no GPU memory: give --gpu NAME (oomguard gpus), --memory BYTES or --gpu-memory LIST");
    }
    capacities.assign(*gpus, *resolved->capacity_bytes);
  }
  const int k = static_cast<int>(capacities.size());
  std::string clamp_note;
  if (global_batch && *global_batch / k > plan::kMaxBatch) {
    const auto& typed = app.get_option("--global-batch")->results();
    const int64_t clamped = plan::kMaxBatch * k;
    clamp_note = "--global-batch " + (typed.empty() ? std::to_string(*global_batch) : typed.back()) +
                 " clamped to " + std::to_string(clamped) + " (" + std::to_string(plan::kMaxBatch) +
                 " per GPU, the largest batch oomguard plans)";
    global_batch = clamped;
  }
  if (global_batch && *global_batch < k) {
    return UsageError(kCommand, "global batch " + std::to_string(*global_batch) +
                                    " is smaller than the number of GPUs (" + std::to_string(k) + ")");
  }
  fit::SplitRequest request;
  request.base = resolved->options;
  request.strategy = *strategy;
  request.global_batch = global_batch;
  request.bucket_bytes = static_cast<uint64_t>(bucket_mib * (1 << 20));
  for (uint64_t c : capacities) {
    Result<uint64_t> b = fit::UsableBytes({.capacity_bytes = c, .reserve_bytes = reserve.value_or(0), .margin_percent = margin});
    if (!b) return UsageError(kCommand, b.error());
    request.budget_bytes.push_back(*b);
  }

  Result<std::shared_ptr<const plan::Model>> loaded = plan::LoadModel(values.model);
  if (!loaded) return UsageError(kCommand, loaded.error());
  Result<std::shared_ptr<const plan::Model>> model = ModelToPlan(*loaded, *resolved);
  if (!model) return UsageError(kCommand, model.error());
  const plan::Model& m = **model;
  plan::BatchPlanner batch_planner(m);
  fit::PlanFunction planner = fit::PlanWith(batch_planner);

  Result<fit::SplitResult> split = fit::PlanSplit(planner, request);
  if (!split) return UsageError(kCommand, split.error());
  const fit::SplitResult& s = *split;
  // Warnings and uncovered operators: from the first GPU's plan, else from batch 1.
  plan::StepPlan shown;
  if (!s.per_gpu.empty()) {
    shown = s.per_gpu[0].plan;
  } else {
    plan::PlanOptions one = request.base;
    one.batch = 1;
    if (Result<plan::StepPlan> p = planner(one)) shown = std::move(p).value();
  }
  if (values.strict) {
    if (auto failure = StrictFailure(shown)) return UsageError(kCommand, *failure);
  }
  // Unsure whether activations ran in place: per GPU, what every candidate in place saves at its batch.
  std::vector<uint64_t> in_place_saves(s.per_gpu.size(), 0);
  if (shown.inplace.Unsure()) {
    for (size_t i = 0; i < s.per_gpu.size(); ++i) {
      plan::PlanOptions at = request.base;
      at.batch = s.per_gpu[i].batch;
      Result<plan::StepPlan> p = batch_planner.Plan(at);
      if (!p) return UsageError(kCommand, p.error());
      if (Status st = plan::AddInplaceRange(batch_planner, at, &*p); !st) return UsageError(kCommand, st.error());
      in_place_saves[i] = p->inplace.required_high_bytes - p->inplace.required_low_bytes;
      if (i == 0) shown.inplace = p->inplace;
    }
  }
  if (!clamp_note.empty()) shown.warnings.push_back(clamp_note);
  std::vector<fit::ModelInput> inputs;
  for (const auto& [name, dims] : plan::Summarize(m).inputs) {
    if (!dims.empty()) inputs.push_back({name, std::vector<int64_t>(dims.begin() + 1, dims.end())});
  }
  const int threads = PlanThreads(values);
  std::vector<fit::AdviceItem> items;
  if (Result<std::vector<fit::AdviceItem>> a = fit::AdviseStrategies(planner, request, s, threads)) items = *a;
  if (Result<std::vector<fit::AdviceItem>> a = fit::AdviseSplitWhatIfs(planner, request, s, inputs, threads)) {
    items.insert(items.end(), a->begin(), a->end());
  }
  fit::RankAdvice(items);

  if (!emit.empty() && s.possible) {
    const std::string& file = emit[1];
    const bool json = file.size() >= 5 && file.compare(file.size() - 5, 5, ".json") == 0;
    std::ofstream out(file, std::ios::binary);
    out << EmitTorchrun(s, json);
    if (!out.good()) return UsageError(kCommand, "cannot write " + file);
  }
  if (!values.html.empty() && s.possible) {
    std::ofstream out(values.html, std::ios::binary);
    out << fit::SplitChartHtml(values.model + ": " + std::string(fit::Name(s.strategy)) + " split of " +
                                   std::to_string(s.global_batch),
                               s);
    if (!out.good()) return UsageError(kCommand, "cannot write " + values.html);
  }

  if (values.json) {
    nlohmann::json j = ToJson(s, values.model, capacities);
    for (size_t i = 0; i < s.per_gpu.size(); ++i) {
      const uint64_t peak = s.per_gpu[i].peak_bytes;
      j["per_gpu"][i]["peak_bytes_range"] = {{"low", peak - std::min(peak, in_place_saves[i])}, {"high", peak}};
    }
    j["inplace"] = InplaceJson(shown.inplace);
    j["frozen_parameters"] = shown.frozen_parameter_count;
    j["grad_mode"] = GradModeJson(shown);
    j["checkpointed"] = CheckpointedJson(shown);
    j["locals"] = LocalsJson(shown);
    j["warnings"] = shown.warnings;
    j["uncovered"] = UncoveredJson(shown.uncovered);
    j["risks"] = RisksJson(shown.risks);
    j["advice"] = fit::ToJson(items);
    PrintJson(j);
    return s.possible ? kExitOk : kExitNo;
  }
  std::ostringstream out;
  out << UncoveredLine(shown);
  for (const std::string& w : shown.warnings) out << "WARNING: " << w << "\n";
  if (shown.inplace.Unsure()) {
    out << "UNSURE: " << shown.inplace.candidates
        << " activation node(s) may have run in place (inplace=True is not recorded in ONNX); planned out of place. ";
    if (!s.per_gpu.empty()) {  // (no split: no GPU's batch to say it at)
      out << "In place, GPU 0 would need "
          << FormatBytes(s.per_gpu[0].peak_bytes - std::min(s.per_gpu[0].peak_bytes, in_place_saves[0])) << ". ";
    }
    out << "Say which with --inplace NODE[,NODE...]|all|none\n";
  }
  out << values.model << ": " << fit::Name(s.strategy) << " over " << k << " GPUs, global batch "
      << s.global_batch << (global_batch ? "" : " (the largest)") << "\n";
  if (shown.frozen_parameter_count > 0) {
    out << shown.parameter_count << " parameters trained, " << shown.frozen_parameter_count
        << " frozen (no gradient, no optimizer state)\n";
  }
  out << GradModeLine(shown);
  if (s.even) {
    out << "an even split of " << s.even->batch << " per GPU ";
    std::string over;
    for (int i = 0; i < k; ++i) {
      if (!s.even->fits[i]) {
        over += (over.empty() ? "" : ", ") + std::string("GPU ") + std::to_string(i) + " (needs " +
                FormatBytes(s.even->peak_bytes[i]) + " of " + FormatBytes(request.budget_bytes[i]) + ")";
      }
    }
    out << (over.empty() ? "fits every GPU" : "overflows " + over) << "\n";
  }
  if (!s.possible) {
    out << "no split possible: " << s.reason << "\n";
  } else {
    out << "\n  GPU  capacity    budget      batch  max  loss weight  predicted peak\n";
    for (const fit::GpuShare& g : s.per_gpu) {
      char line[200];
      std::snprintf(line, sizeof line, "  %-4d %-11s %-11s %5lld %4lld  %-11s  %s\n", g.index,
                    FormatBytes(capacities[g.index]).c_str(), FormatBytes(g.budget_bytes).c_str(),
                    static_cast<long long>(g.batch), static_cast<long long>(g.max_batch),
                    Weight(g.loss_weight).c_str(), FormatBytes(g.peak_bytes).c_str());
      out << line;
    }
    out << "\nthe largest global batch with " << fit::Name(s.strategy) << ": " << s.max_global_batch << "\n";
    for (const std::string& n : s.notes) out << "note: " << n << "\n";
  }
  if (!items.empty()) {
    out << "\nwhat-ifs (each split re-planned):\n";
    int n = 0;
    for (const fit::AdviceItem& i : items) {
      out << "  " << ++n << ". " << i.description << "; worst GPU at an even split "
          << FormatBytes(i.required_bytes) << (i.fits ? "" : " (global batch " + std::to_string(s.global_batch) + " does not fit)")
          << "\n";
    }
  }
  std::cout << out.str();
  return s.possible ? kExitOk : kExitNo;
}

}  // namespace oomguard::cli
