#include "plan_options.h"

#include <algorithm>
#include <charconv>
#include <thread>

#include "common.h"
#include "oomguard/units.h"
#include "oomguard/doctor/gpus.h"

namespace oomguard::cli {
namespace {

// The local GPU as a catalog entry: its own name and total bytes, and the
// compute capability of the catalog card of that name (80 when unknown).
plan::Gpu LocalGpuAsCatalogEntry(const doctor::LocalGpu& local) {
  static std::string name;  // one detection per process; the entry refers to it
  name = local.name;
  plan::Gpu gpu;
  gpu.key = "auto";
  gpu.name = name;
  gpu.total_bytes = local.total_bytes;
  gpu.compute_capability = 80;
  if (Result<plan::Gpu> known = plan::FindGpu(local.name)) gpu.compute_capability = known->compute_capability;
  return gpu;
}

}  // namespace

void AddPlanOptions(CLI::App& app, PlanCliValues* v, PlanOptionsSpec spec) {
  app.add_option("MODEL", v->model, "an .onnx file or a zoo model name (oomguard models)")->required();
  if (spec.with_batch) {
    AddNumberOption(app, "--batch,-b", &v->batch, 1, int64_t{1} << 40, "batch size (required when the model's batch axis is symbolic)");
  }
  app.add_option("--optimizer", v->optimizer, "sgd, momentum, adam, adamw, rmsprop or adagrad")
      ->capture_default_str();
  ShowDefault(app.add_option("--optimizer-impl", v->optimizer_impl, "loop, foreach or fused"),
              "what PyTorch uses on the target");
  app.add_option("--precision", v->precision, "fp32, amp-fp16, amp-bf16, fp16 or bf16")->capture_default_str();
  app.add_option("--loss", v->loss, "cross_entropy, mse or none")->capture_default_str();
  app.add_option("--target", v->target, "cuda (PyTorch on a CUDA GPU) or cpu (PyTorch eager on CPU)")
      ->capture_default_str();
  // Given empty ('--gpu ""', an unset shell variable) it is an error, not "no GPU".
  app.add_option_function<std::string>(
         "--gpu",
         [v](const std::string& name) {
           if (name.empty()) throw OptionValueError("--gpu must not be empty: name a GPU (oomguard gpus) or auto");
           v->gpu = name;
         },
         "a GPU from the catalog (oomguard gpus), or auto for the local GPU")
      ->type_name("TEXT");
  AddBytesOption(app, "--memory", &v->memory, "device memory to plan against (e.g. 11GiB); overrides --gpu");
  ShowDefault(AddNumberOption(app, "--fraction", &v->fraction, 1e-6, 1, "use only this fraction of the memory, in (0, 1]"),
              "1");
  app.add_option("--input", v->inputs, "per-sample input shape override NAME=DIMS (e.g. input=3x240x320); repeatable")
      ->type_name("NAME=DIMS")
      ->allow_extra_args(false);
  app.add_flag("--json", v->json, "print JSON on stdout");
  app.add_option("--cuda-alloc-conf", v->cuda_alloc_conf,
                 "PYTORCH_CUDA_ALLOC_CONF for the caching-allocator model, e.g. expandable_segments:True")
      ->type_name("CONF");
  app.add_flag("--strict", v->strict,
               "treat warnings (an eval-mode or constant-folded export, operators without a rule) as errors (exit 2)");
  app.add_option("--inplace", v->inplace,
                 "activation nodes that ran in place (inplace=True, which ONNX does not record): NODE[,NODE...], "
                 "all or none; overrides the model's oomguard.inplace metadata")
      ->type_name("NODES")
      ->allow_extra_args(false);
  app.add_option("--frozen", v->frozen,
                 "parameters with requires_grad=False (no gradient, no optimizer state): initializer names or "
                 "globs with *, NAME[,NAME...] (e.g. 'backbone.*'); adds to the model's oomguard.frozen metadata")
      ->type_name("NAMES")
      ->allow_extra_args(false);
  app.add_option("--no-grad", v->no_grad,
                 "nodes run under torch.no_grad() (nothing saved, no gradient; weights read only there get no "
                 "optimizer state): ONNX node names or globs with *, NODE[,NODE...] (e.g. '/teacher/*'); adds to "
                 "the model's oomguard.no_grad metadata")
      ->type_name("NODES")
      ->allow_extra_args(false);
  app.add_option("--detached", v->detached,
                 "nodes of a module whose result is .detach()ed (what they save is freed when the module returns; "
                 "no gradient): ONNX node names or globs with *, NODE[,NODE...] (e.g. '/teacher/*'); adds to the "
                 "model's oomguard.detached metadata")
      ->type_name("NODES")
      ->allow_extra_args(false);
  app.add_option("--checkpointed", v->checkpointed,
                 "nodes run inside one torch.utils.checkpoint call (what they save is dropped after forward and "
                 "recomputed in backward; the segment keeps its inputs): ONNX node names or globs with *, "
                 "NODE[,NODE...], one segment per option, or several separated by ';' (e.g. "
                 "'/layers.0/*;/layers.1/*'); replaces the model's oomguard.checkpointed metadata")
      ->type_name("NODES")
      ->allow_extra_args(false);
  if (spec.with_html) app.add_option("--html", v->html, "also write a self-contained HTML report")->type_name("FILE");
  ShowDefault(AddNumberOption(app, "--threads", &v->threads, 1, 256,
                              "plan what-ifs and searches on up to N threads (the answer is the same for any N)"),
              "the CPUs, at most 4");
}

int PlanThreads(const PlanCliValues& values) {
  if (values.threads > 0) return values.threads;
  const unsigned cpus = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp<unsigned>(cpus, 1, kDefaultMaxThreads));
}

Result<std::pair<std::string, std::vector<int64_t>>> ParseInputOverride(const std::string& text) {
  auto bad = [&](const std::string& why) {
    const std::string shown = text.size() > 60 ? text.substr(0, 60) + "..." : text;
    return MakeError("--input '" + shown + "': " + why);
  };
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return bad("expected NAME=DIMS like input=3x224x224");
  std::string name = text.substr(0, eq);
  std::string dims = text.substr(eq + 1);
  if (dims.empty()) return bad("DIMS must be positive integers like 3x224x224");
  const size_t count = 1 + static_cast<size_t>(std::count_if(dims.begin(), dims.end(),
                                                             [](char c) { return c == 'x' || c == ','; }));
  if (count > kMaxInputDims) {
    return bad("at most " + std::to_string(kMaxInputDims) + " dimensions after the batch, got " +
               std::to_string(count));
  }
  std::vector<int64_t> shape;
  size_t pos = 0;
  while (pos <= dims.size()) {
    size_t end = dims.find_first_of("x,", pos);
    if (end == std::string::npos) end = dims.size();
    std::string_view part(dims.data() + pos, end - pos);
    int64_t d = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), d);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || d <= 0 ||
        d > (int64_t{1} << 31)) {
      return bad("DIMS must be positive integers like 3x224x224");
    }
    shape.push_back(d);
    pos = end + 1;
  }
  return std::make_pair(name, shape);
}

namespace {

// The names of a repeatable list option's values (each NAME[,NAME...]), at most kMaxListEntries; an empty
// name is an error: "<flag>: an empty <item> in '<value>'", too many "<flag> must name at most N <items>".
Result<std::vector<std::string>> SplitNames(const std::vector<std::string>& values, const std::string& flag,
                                            const std::string& item, const std::string& items) {
  std::vector<std::string> names;
  for (const std::string& value : values) {
    size_t pos = 0;
    while (pos <= value.size()) {
      size_t end = value.find(',', pos);
      if (end == std::string::npos) end = value.size();
      std::string name = value.substr(pos, end - pos);
      if (name.empty()) return MakeError(flag + ": an empty " + item + " in '" + value + "'");
      names.push_back(std::move(name));
      if (names.size() > kMaxListEntries) {
        return MakeError(flag + " must name at most " + std::to_string(kMaxListEntries) + " " + items);
      }
      pos = end + 1;
    }
  }
  return names;
}

}  // namespace

Status ApplyInplaceHint(const std::vector<std::string>& values, plan::PlanOptions* o) {
  if (values.empty()) return Status::Ok();
  Result<std::vector<std::string>> split = SplitNames(values, "--inplace", "node name", "nodes");
  if (!split) return MakeError(split.error());
  std::vector<std::string> names = std::move(split).value();
  const bool all = std::find(names.begin(), names.end(), "all") != names.end();
  const bool none = std::find(names.begin(), names.end(), "none") != names.end();
  if ((all || none) && names.size() > 1) return MakeError("--inplace all and --inplace none stand alone");
  o->inplace = all ? plan::InplaceHint::kAll : none ? plan::InplaceHint::kNone : plan::InplaceHint::kNodes;
  o->inplace_nodes = all || none ? std::vector<std::string>{} : std::move(names);
  return Status::Ok();
}

Result<std::vector<std::string>> ParseFrozen(const std::vector<std::string>& values) {
  return SplitNames(values, "--frozen", "name", "patterns");
}

Result<std::shared_ptr<const plan::Model>> ModelToPlan(std::shared_ptr<const plan::Model> model,
                                                      const ResolvedPlanOptions& resolved) {
  if (!resolved.frozen.empty()) {
    auto frozen = plan::FreezeParameters(*model, resolved.frozen);
    if (!frozen) return frozen;
    model = std::move(frozen).value();
  }
  if (!resolved.checkpointed.empty()) {
    auto marked = plan::MarkCheckpointed(*model, resolved.checkpointed);
    if (!marked) return marked;
    model = std::move(marked).value();
  }
  if (resolved.no_grad.empty() && resolved.detached.empty()) return model;
  return plan::MarkGradMode(*model, resolved.no_grad, resolved.detached);
}

Status ApplyCudaAllocConf(const std::string& conf, plan::PlanOptions* o) {
  auto bad = [&](const std::string& why) { return MakeError("--cuda-alloc-conf '" + conf + "': " + why); };
  size_t pos = 0;
  while (pos < conf.size()) {
    size_t end = conf.find(',', pos);
    if (end == std::string::npos) end = conf.size();
    const std::string item = conf.substr(pos, end - pos);
    pos = end + 1;
    const size_t colon = item.find(':');
    if (colon == std::string::npos) return bad("expected KEY:VALUE items separated by commas");
    const std::string key = item.substr(0, colon), value = item.substr(colon + 1);
    if (key == "expandable_segments") {
      if (value != "True" && value != "False") return bad("expandable_segments is True or False");
      o->cuda_expandable_segments = value == "True";
    } else if (key == "max_split_size_mb") {
      uint64_t mb = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), mb);
      // PyTorch requires more than 20 MiB (kLargeBuffer).
      if (ec != std::errc() || ptr != value.data() + value.size() || mb <= 20 || mb > (uint64_t{1} << 30)) {
        return bad("max_split_size_mb must be an integer above 20");
      }
      o->cuda_max_split_size = mb << 20;
    } else if (key == "garbage_collection_threshold" || key == "roundup_power2_divisions" ||
               key == "backend" || key == "release_lock_on_cudamalloc" || key == "pinned_use_cuda_host_register" ||
               key == "pinned_num_register_threads") {
      // Accepted; not modelled (they do not apply to one step on an otherwise idle device, or are host-side).
    } else {
      return bad("unknown key '" + key + "' (expected expandable_segments, max_split_size_mb, ...)");
    }
  }
  return Status::Ok();
}

Result<ResolvedPlanOptions> ResolvePlanOptions(const PlanCliValues& v) {
  ResolvedPlanOptions r;
  plan::PlanOptions& o = r.options;
  if (v.batch) {
    if (*v.batch <= 0) return MakeError("--batch must be at least 1, got " + std::to_string(*v.batch));
    if (*v.batch > plan::kMaxBatch) return MakeError("--batch " + std::to_string(*v.batch) + " is absurdly large");
    o.batch = *v.batch;
  }
  auto optimizer = plan::ParseOptimizer(v.optimizer);
  if (!optimizer) return MakeError(optimizer.error());
  o.optimizer = *optimizer;
  auto impl = plan::ParseOptimizerImpl(v.optimizer_impl);
  if (!impl) return MakeError(impl.error());
  o.optimizer_impl = *impl;
  auto precision = plan::ParsePrecision(v.precision);
  if (!precision) return MakeError(precision.error());
  o.precision = *precision;
  auto loss = plan::ParseLoss(v.loss);
  if (!loss) return MakeError(loss.error());
  o.loss = *loss;
  auto target = plan::ParseTarget(v.target);
  if (!target) return MakeError(target.error());
  o.target = *target;
  if (Status s = ApplyCudaAllocConf(v.cuda_alloc_conf, &o); !s) return MakeError(s.error());
  if (Status s = ApplyInplaceHint(v.inplace, &o); !s) return MakeError(s.error());
  auto frozen = ParseFrozen(v.frozen);
  if (!frozen) return MakeError(frozen.error());
  r.frozen = std::move(frozen).value();
  auto no_grad = SplitNames(v.no_grad, "--no-grad", "node", "patterns");
  if (!no_grad) return MakeError(no_grad.error());
  r.no_grad = std::move(no_grad).value();
  auto detached = SplitNames(v.detached, "--detached", "node", "patterns");
  if (!detached) return MakeError(detached.error());
  r.detached = std::move(detached).value();
  for (const std::string& value : v.checkpointed) {
    size_t pos = 0;
    while (pos <= value.size()) {
      size_t end = value.find(';', pos);
      if (end == std::string::npos) end = value.size();
      auto segment = SplitNames({value.substr(pos, end - pos)}, "--checkpointed", "node", "patterns");
      if (!segment) return MakeError(segment.error());
      r.checkpointed.push_back(std::move(segment).value());
      pos = end + 1;
    }
  }
  for (const std::string& text : v.inputs) {
    auto parsed = ParseInputOverride(text);
    if (!parsed) return MakeError(parsed.error());
    o.input_overrides[parsed->first] = parsed->second;
  }
  if (v.gpu == "auto") {
    Result<doctor::LocalGpu> local = doctor::DetectLocalGpu();
    if (!local) {
      return MakeError("--gpu auto: " + local.error() + "; name a GPU (oomguard gpus) or give --memory");
    }
    r.gpu = LocalGpuAsCatalogEntry(*local);
    o.cuda_compute_capability = r.gpu->compute_capability;
  } else if (!v.gpu.empty()) {
    auto gpu = plan::FindGpu(v.gpu);
    if (!gpu) return MakeError(gpu.error());
    r.gpu = *gpu;
    o.cuda_compute_capability = gpu->compute_capability;
  }
  auto capacity = plan::CapacityBytes(r.gpu, v.memory, v.fraction);
  if (!capacity) return MakeError(capacity.error());
  r.capacity_bytes = *capacity;
  if (v.memory) {
    r.device_total_bytes = *v.memory;
  } else if (r.gpu) {
    r.device_total_bytes = r.gpu->total_bytes;
  }
  return r;
}

}  // namespace oomguard::cli
