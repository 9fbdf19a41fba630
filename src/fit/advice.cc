#include "oomguard/fit/advice.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "advice_json.h"
#include "oomguard/units.h"

namespace oomguard::fit {

namespace {

std::string Dims(const std::vector<int64_t>& dims, char sep) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += sep;
    s += std::to_string(dims[i]);
  }
  return s;
}

}  // namespace

void ForEachOnThreads(size_t count, int threads, const std::function<void(size_t)>& work) {
  const size_t workers = std::min(count, static_cast<size_t>(std::max(1, threads)));
  if (workers <= 1) {
    for (size_t i = 0; i < count; ++i) work(i);
    return;
  }
  std::atomic<size_t> next{0};
  auto run = [&] {
    for (size_t i = next++; i < count; i = next++) work(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (size_t t = 1; t < workers; ++t) pool.emplace_back(run);
  run();
  for (std::thread& t : pool) t.join();
}

std::vector<WhatIf> WhatIfs(const plan::PlanOptions& base, const std::vector<ModelInput>& inputs,
                            const plan::StepPlan& baseline) {
  std::vector<WhatIf> out;
  if (base.precision == plan::Precision::kFp32) {
    WhatIf w{"amp", "", base, "", 0};
    const bool cpu = base.target == plan::Target::kCpu;
    w.options.precision = cpu ? plan::Precision::kAmpBf16 : plan::Precision::kAmpFp16;
    w.description = std::string("train with automatic mixed precision (torch.autocast") +
                    (cpu ? ", bfloat16" : " + GradScaler") + "; --precision " +
                    (cpu ? "amp-bf16" : "amp-fp16") + ")";
    out.push_back(std::move(w));
  }
  if (!base.activation_checkpointing) {
    WhatIf w{"activation_checkpointing",
             "recompute activations in backward with activation checkpointing "
             "(torch.utils.checkpoint around each block; about 30% more compute)",
             base, "", 0};
    w.options.activation_checkpointing = true;
    out.push_back(std::move(w));
  }
  if (base.optimizer == plan::Optimizer::kAdam || base.optimizer == plan::Optimizer::kAdamW) {
    WhatIf w{"lighter_optimizer",
             std::string("use SGD with momentum instead of ") +
                 (base.optimizer == plan::Optimizer::kAdam ? "Adam" : "AdamW") +
                 " (one state tensor per parameter instead of two; --optimizer momentum)",
             base, "", 0};
    w.options.optimizer = plan::Optimizer::kMomentum;
    out.push_back(std::move(w));
  }
  {
    WhatIf w{"halve_resolution", "", base, "", 0};
    std::string changes, flags;
    for (const ModelInput& in : inputs) {
      if (in.per_sample_dims.size() < 3) continue;  // not an image-like input
      std::vector<int64_t> dims = in.per_sample_dims;
      auto current = base.input_overrides.find(in.name);
      if (current != base.input_overrides.end()) dims = current->second;
      if (dims.size() < 3) continue;
      const size_t n = dims.size();
      if (dims[n - 1] < 2 || dims[n - 2] < 2) continue;
      std::vector<int64_t> halved = dims;
      halved[n - 1] /= 2;
      halved[n - 2] /= 2;
      w.options.input_overrides[in.name] = halved;
      if (!changes.empty()) changes += ", ";
      changes += in.name + " " + Dims(dims, 'x') + " -> " + Dims(halved, 'x');
      flags += " --input " + in.name + "=" + Dims(halved, ',');
    }
    if (!changes.empty()) {
      w.description = "halve the input resolution (downsample the images): " + changes + " (" +
                      flags.substr(1) + ")";
      out.push_back(std::move(w));
    }
  }
  if (base.replace_layer_with_pooling.empty()) {
    if (const plan::LayerMemory* fc = LargestFullyConnectedLayer(baseline)) {
      WhatIf w{"replace_fc_with_pooling", "", base, "", 0};
      w.options.replace_layer_with_pooling = fc->name;
      w.layer = fc->name;
      w.layer_parameter_bytes = fc->parameter_bytes;
      w.description = "replace the largest fully connected layer '" + fc->name + "' (" +
                      FormatBytes(fc->parameter_bytes) +
                      " of parameters) with global average pooling";
      out.push_back(std::move(w));
    }
  }
  return out;
}

int64_t AccumulationSteps(int64_t batch, int64_t max_batch) {
  for (int64_t s = 1; s <= batch; ++s) {
    if (batch % s == 0 && batch / s <= max_batch) return s;
  }
  return batch;
}

const plan::LayerMemory* LargestFullyConnectedLayer(const plan::StepPlan& plan) {
  const plan::LayerMemory* best = nullptr;
  for (const plan::LayerMemory& l : plan.layers) {
    if (l.op_type != "Gemm" && l.op_type != "MatMul") continue;
    if (l.parameter_bytes == 0) continue;
    if (best == nullptr || l.parameter_bytes > best->parameter_bytes) best = &l;
  }
  return best;
}

void RankAdvice(std::vector<AdviceItem>& items) {
  std::stable_sort(items.begin(), items.end(), [](const AdviceItem& a, const AdviceItem& b) {
    if (a.fits != b.fits) return a.fits;
    if (a.saves_bytes != b.saves_bytes) return a.saves_bytes > b.saves_bytes;
    return a.action < b.action;
  });
}

Result<AdviceList> Advise(const PlanFunction& plan, const AdviceRequest& request,
                          const plan::StepPlan& baseline) {
  if (!request.base.batch || *request.base.batch < 1) {
    return MakeError("advice needs the batch size of the step");
  }
  const int64_t batch = *request.base.batch;
  const uint64_t budget = request.budget_bytes;
  AdviceList list;

  auto max_batch_for = [&](const plan::PlanOptions& o) -> std::optional<int64_t> {
    if (!request.search_max_batch) return std::nullopt;
    FitOptions fo;
    fo.budget_bytes = budget;
    fo.max_batch_limit = request.max_batch_limit;
    fo.exhaustive_limit = 0;  // a what-if's largest batch is a hint: the bracket's answer, never every batch
    fo.answer_only = true;
    // A what-if is advised where it needs less than the step at this batch: where the step fits, so does it.
    if (baseline.required_bytes <= budget) fo.likely_fits = batch;
    Result<FitResult> r = FindMaxBatch(plan, o, fo);
    if (!r) return std::nullopt;
    return r->max_batch;
  };

  // The batch itself: only when the step does not fit.
  if (baseline.required_bytes > budget) {
    FitOptions fo;
    fo.budget_bytes = budget;
    fo.max_batch_limit = request.max_batch_limit;
    fo.answer_only = true;
    Result<FitResult> fit = FindMaxBatch(plan, request.base, fo);
    if (!fit) {
      list.skipped.push_back("lower_batch: " + fit.error());
    } else if (fit->max_batch >= 1) {
      AdviceItem item;
      item.action = "lower_batch";
      const int64_t steps = AccumulationSteps(batch, std::min(fit->max_batch, batch));
      const int64_t micro = batch / steps;
      plan::PlanOptions o = request.base;
      o.batch = micro;
      Result<uint64_t> p = plan.RequiredBytes(o);
      if (!p) {
        list.skipped.push_back("lower_batch: " + p.error());
      } else {
        item.required_bytes = *p;
        item.fits = item.required_bytes <= budget;
        item.max_batch = fit->max_batch;
        item.micro_batch = micro;
        item.accumulation_steps = steps;
        item.description = "lower the batch to " + std::to_string(micro) + " and accumulate " +
                           "gradients over " + std::to_string(steps) +
                           " steps to keep the effective batch of " + std::to_string(batch) +
                           " (the largest batch that fits is " + std::to_string(fit->max_batch) +
                           ")";
        item.saves_bytes = baseline.required_bytes > item.required_bytes
                               ? baseline.required_bytes - item.required_bytes
                               : 0;
        list.items.push_back(std::move(item));
      }
    }
  }

  // Each what-if is its own option set: planned on up to request.threads threads, collected in order.
  std::vector<WhatIf> what_ifs = WhatIfs(request.base, request.inputs, baseline);
  struct Outcome {
    std::optional<AdviceItem> item;
    std::string skipped;
  };
  std::vector<Outcome> outcomes(what_ifs.size());
  auto evaluate = [&](size_t i) {
    WhatIf& w = what_ifs[i];
    // The largest-batch search follows at these options: the hint lets one check cover both.
    Result<uint64_t> p = plan.RequiredBytes(w.options, request.search_max_batch ? request.max_batch_limit : 0);
    if (!p) {
      outcomes[i].skipped = w.action + ": " + p.error();
      return;
    }
    if (*p >= baseline.required_bytes) return;  // saves nothing here
    AdviceItem item;
    item.action = w.action;
    item.description = std::move(w.description);
    item.required_bytes = *p;
    item.saves_bytes = baseline.required_bytes - *p;
    item.fits = item.required_bytes <= budget;
    item.max_batch = max_batch_for(w.options);
    item.layer = std::move(w.layer);
    item.layer_parameter_bytes = w.layer_parameter_bytes;
    outcomes[i].item = std::move(item);
  };
  ForEachOnThreads(what_ifs.size(), request.threads, evaluate);
  for (Outcome& o : outcomes) {
    if (!o.skipped.empty()) list.skipped.push_back(std::move(o.skipped));
    if (o.item) list.items.push_back(*std::move(o.item));
  }
  RankAdvice(list.items);
  return list;
}

nlohmann::json ToJson(const std::vector<AdviceItem>& items) {
  nlohmann::json out = nlohmann::json::array();
  for (const AdviceItem& i : items) {
    nlohmann::json j;
    j["action"] = i.action;
    j["description"] = i.description;
    j["saves_bytes"] = i.saves_bytes;
    j["required_bytes"] = i.required_bytes;
    j["fits"] = i.fits;
    j["max_batch"] = i.max_batch ? nlohmann::json(*i.max_batch) : nlohmann::json(nullptr);
    if (i.micro_batch) j["micro_batch"] = *i.micro_batch;
    if (i.accumulation_steps) j["accumulation_steps"] = *i.accumulation_steps;
    if (!i.layer.empty()) {
      j["layer"] = i.layer;
      j["layer_parameter_bytes"] = i.layer_parameter_bytes;
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace oomguard::fit
