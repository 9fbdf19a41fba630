// BatchPlanner: the step recorded once per option set with each byte count
// affine in the batch, checked against a full plan, then replayed per batch.
#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "coverage.h"
#include "model.h"
#include "oomguard/plan/planner.h"
#include "oomguard/thread_annotations.h"
#include "shapes.h"
#include "simulation_share.h"
#include "training_step.h"

namespace oomguard::plan {
namespace {

// Counts beyond this are planned in full (the shape pass refuses far less).
constexpr __int128 kByteLimit = __int128{1} << 62;

// value = a * batch + b
struct Affine {
  int64_t a = 0, b = 0;
  __int128 At(int64_t batch) const { return __int128{a} * batch + b; }
};
// The line through (x1, v1) and (x2, v2); false when its slope is not whole
// or a coefficient leaves int64.
bool Fit(int64_t x1, __int128 v1, int64_t x2, __int128 v2, Affine* f) {
  const __int128 dv = v2 - v1, dx = x2 - x1;
  if (dx == 0 || dv % dx != 0) return false;
  const __int128 a = dv / dx, b = v1 - a * x1;
  constexpr __int128 kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  if (a > kMax || a < kMin || b > kMax || b < kMin) return false;
  f->a = static_cast<int64_t>(a);
  f->b = static_cast<int64_t>(b);
  return true;
}

struct LayerFit {
  Affine output_bytes, parameter_bytes;
  std::vector<Affine> output_shape;
};

// One option set's recording: the simulation at two batches, each count fitted.
struct Recording {
  StepPlan base;  // the plan at the first batch: names, op types, warnings
  StepTrace trace;
  std::vector<Affine> event_bytes;  // per trace event
  std::vector<LayerFit> layers;
  std::vector<Affine> uncovered;  // per base.uncovered entry
  Affine parameter_count;
  int inplace_warning = -1;  // index in base.warnings
  // The risks but the locals one (FindRisks), and their bytes.
  std::vector<RiskPlace> risks;
  std::vector<Affine> risk_bytes;
  // What the required bytes alone need, compiled once (CompileRequired).
  struct Line {
    __int128 a = 0, b = 0;
    __int128 At(int64_t batch) const { return a * batch + b; }
  };
  int64_t valid_lo = 1, valid_hi = 0;  // the batches where every count Replay checks is in range
  std::vector<int> alloc_event;        // per buffer of the trace: the event that allocates it
  std::vector<int> varying;            // the allocations and scratch whose bytes change with the batch
  Line inplace_bytes;                  // the in-place warning's bytes, unrounded
  std::vector<Line> observed;          // cpu: live bytes + scratch at each observation, one per slope (the highest)
};

bool SameEvents(const StepTrace& x, const StepTrace& y) {
  if (x.events.size() != y.events.size()) return false;
  for (size_t i = 0; i < x.events.size(); ++i) {
    const StepTrace::Event& e = x.events[i];
    const StepTrace::Event& f = y.events[i];
    if (e.kind != f.kind || e.category != f.category || e.buffer != f.buffer) return false;
    if ((e.phase == nullptr) != (f.phase == nullptr) || (e.phase && std::strcmp(e.phase, f.phase) != 0)) return false;
  }
  return x.layer_saved == y.layer_saved && x.total_saved == y.total_saved && x.inplace_buffers == y.inplace_buffers &&
         x.forward_end_event == y.forward_end_event && x.locals_holds == y.locals_holds &&
         x.inplace_kinds == y.inplace_kinds && x.inplace_warning == y.inplace_warning &&
         x.has_matmul == y.has_matmul && x.has_conv == y.has_conv;
}

// Fits a recording through the plans and traces at two batches; nullopt when
// they differ in anything but byte counts and dims, or a count is not affine.
// The caller moves the first plan and trace in (base, trace), then compiles
// what the required bytes need (CompileRequired).
std::optional<Recording> MakeRecording(const Model& model, const StepPlan& p1, const StepTrace& t1,
                                       const StepPlan& p2, const StepTrace& t2) {
  // The locals risk comes and goes with the batch (Replay recomputes it): compare the rest.
  auto notes = [](const StepPlan& p) {
    StepPlan n;
    n.warnings = p.warnings;
    n.risks = p.risks;
    StripLocalsRisk(&n);
    return n;
  };
  StepPlan n1 = notes(p1), n2 = notes(p2);
  // So may every other risk's bytes (an amax's backward, a dropout input held over a recurrent layer):
  // compared without them, fitted, replayed in their places.
  const auto risks1 = FindRisks(n1), risks2 = FindRisks(n2);
  if (!risks1 || !risks2 || *risks1 != *risks2) return std::nullopt;
  std::vector<std::pair<uint64_t, uint64_t>> risk_bytes;
  for (const RiskPlace& at : *risks1) {
    risk_bytes.emplace_back(n1.risks[at.risk].bytes, n2.risks[at.risk].bytes);
    for (StepPlan* n : {&n1, &n2}) {
      n->risks[at.risk].bytes = 0;
      n->warnings[at.warning].clear();
    }
  }
  const int64_t x1 = p1.batch, x2 = p2.batch;
  bool affine = true;
  auto fit = [&](__int128 v1, __int128 v2) {
    Affine f;
    affine = Fit(x1, v1, x2, v2, &f) && affine;
    return f;
  };
  if (!SameEvents(t1, t2) || !p1.timeline.empty() || p1.model != p2.model || p1.target != p2.target ||
      p1.layers.size() != p2.layers.size() || p1.layers.size() != t1.layer_saved.size() ||
      n1.warnings.size() != n2.warnings.size() || p1.uncovered.size() != p2.uncovered.size() ||
      n1.risks != n2.risks) {
    return std::nullopt;
  }
  Recording r;
  r.inplace_warning = t1.inplace_warning < 0 ? -1 : static_cast<int>(model.warnings.size()) + t1.inplace_warning;
  for (size_t i = 0; i < n1.warnings.size(); ++i) {
    if (static_cast<int>(i) != r.inplace_warning && n1.warnings[i] != n2.warnings[i]) return std::nullopt;
  }
  r.event_bytes.reserve(t1.events.size());
  for (size_t i = 0; i < t1.events.size(); ++i) r.event_bytes.push_back(fit(t1.events[i].bytes, t2.events[i].bytes));
  r.layers.resize(p1.layers.size());
  for (size_t i = 0; i < p1.layers.size(); ++i) {
    const LayerMemory& a = p1.layers[i];
    const LayerMemory& b = p2.layers[i];
    if (a.name != b.name || a.op_type != b.op_type || a.output_shape.size() != b.output_shape.size()) {
      return std::nullopt;
    }
    LayerFit& f = r.layers[i];
    f.output_bytes = fit(a.output_bytes, b.output_bytes);
    f.parameter_bytes = fit(a.parameter_bytes, b.parameter_bytes);
    for (size_t k = 0; k < a.output_shape.size(); ++k) f.output_shape.push_back(fit(a.output_shape[k], b.output_shape[k]));
  }
  for (const UncoveredOp& u : p1.uncovered) {
    auto other = std::find_if(p2.uncovered.begin(), p2.uncovered.end(), [&](const UncoveredOp& v) { return v.op == u.op; });
    if (other == p2.uncovered.end() || other->nodes != u.nodes) return std::nullopt;
    r.uncovered.push_back(fit(u.bytes_at_risk, other->bytes_at_risk));
  }
  r.parameter_count = fit(p1.parameter_count, p2.parameter_count);
  r.risks = *risks1;
  for (const auto& [b1, b2] : risk_bytes) r.risk_bytes.push_back(fit(b1, b2));
  if (!affine) return std::nullopt;
  return r;
}

// floor(p / q) and ceil(p / q) for q > 0.
__int128 FloorDiv(__int128 p, __int128 q) { return p >= 0 ? p / q : -((-p + q - 1) / q); }
__int128 CeilDiv(__int128 p, __int128 q) { return -FloorDiv(-p, q); }

// Narrows [lo, hi] to the batches where 0 <= f(batch) <= kByteLimit.
void KeepInRange(const Affine& f, int64_t* lo, int64_t* hi) {
  __int128 l = *lo, h = *hi;
  if (f.a == 0) {
    if (f.b < 0 || f.b > kByteLimit) h = l - 1;
  } else if (f.a > 0) {
    l = std::max(l, CeilDiv(-__int128{f.b}, f.a));
    h = std::min(h, FloorDiv(kByteLimit - f.b, f.a));
  } else {
    l = std::max(l, CeilDiv(f.b - kByteLimit, -__int128{f.a}));
    h = std::min(h, FloorDiv(f.b, -__int128{f.a}));
  }
  if (h < l) h = l - 1;
  *lo = static_cast<int64_t>(std::min<__int128>(l, kMaxBatch + 1));
  *hi = static_cast<int64_t>(std::max<__int128>(std::min<__int128>(h, kMaxBatch), 0));
}

// Fills the recording's RequiredModel: the batches where Replay answers, and
// on the CPU target the live total at each observation as a line in the batch
// (allocations add their line, frees subtract it), one per slope.
void CompileRequired(Recording* r) {
  int64_t lo = 1, hi = kMaxBatch;
  const std::vector<StepTrace::Event>& events = r->trace.events;
  std::vector<int>& alloc_event = r->alloc_event;
  for (size_t i = 0; i < events.size(); ++i) {
    const StepTrace::Event& e = events[i];
    if (e.kind == StepTrace::kAlloc || e.kind == StepTrace::kObserve) {
      KeepInRange(r->event_bytes[i], &lo, &hi);
      if (r->event_bytes[i].a != 0) r->varying.push_back(static_cast<int>(i));
    }
    if (e.kind == StepTrace::kAlloc) {
      if (static_cast<size_t>(e.buffer) >= alloc_event.size()) alloc_event.resize(e.buffer + 1, -1);
      alloc_event[e.buffer] = static_cast<int>(i);
    }
  }
  for (const LayerFit& f : r->layers) {
    KeepInRange(f.output_bytes, &lo, &hi);
    KeepInRange(f.parameter_bytes, &lo, &hi);
  }
  for (const Affine& f : r->uncovered) KeepInRange(f, &lo, &hi);
  KeepInRange(r->parameter_count, &lo, &hi);
  r->valid_lo = lo;
  r->valid_hi = hi;
  auto line = [&](int buffer) {
    const Affine& f = r->event_bytes[alloc_event[buffer]];
    return Recording::Line{f.a, f.b};
  };
  for (int b : r->trace.inplace_buffers) {
    r->inplace_bytes.a += line(b).a;
    r->inplace_bytes.b += line(b).b;
  }
  if (r->base.target != Target::kCpu) return;
  Recording::Line total;
  std::vector<Recording::Line> observed;
  for (size_t i = 0; i < events.size(); ++i) {
    const StepTrace::Event& e = events[i];
    if (e.kind == StepTrace::kAlloc || e.kind == StepTrace::kFree) {
      const Recording::Line f = line(e.buffer);
      const int sign = e.kind == StepTrace::kAlloc ? 1 : -1;
      total.a += sign * f.a;
      total.b += sign * f.b;
    } else if (e.kind == StepTrace::kObserve) {
      observed.push_back({total.a + r->event_bytes[i].a, total.b + r->event_bytes[i].b});
    }
  }
  std::sort(observed.begin(), observed.end(), [](const Recording::Line& x, const Recording::Line& y) {
    return x.a != y.a ? x.a < y.a : x.b > y.b;
  });
  for (const Recording::Line& l : observed) {
    if (r->observed.empty() || r->observed.back().a != l.a) r->observed.push_back(l);
  }
}

// The plan at `batch` from a recording; nullopt when a count leaves its range. `replayed`: the
// caching allocator's result at this batch where ReplayRequired found it (the same events).
std::optional<StepPlan> Replay(const Recording& r, const PlanOptions& options, int64_t batch,
                               const ReplayResult* replayed = nullptr) {
  if (batch < 1) return std::nullopt;
  auto value = [&](const Affine& f) -> std::optional<uint64_t> {
    __int128 v = f.At(batch);
    if (v < 0 || v > kByteLimit) return std::nullopt;
    return static_cast<uint64_t>(v);
  };
  StepLedger ledger(options.target, nullptr);
  ledger.buffers.reserve(r.trace.events.size());
  uint64_t forward_peak = 0;
  // The locals risk: the buffers a frame may hold past their free, and the forward's peak with them.
  std::unordered_map<int, size_t> held_until(r.trace.locals_holds.begin(), r.trace.locals_holds.end());
  std::priority_queue<std::pair<size_t, int>, std::vector<std::pair<size_t, int>>, std::greater<>> held;
  uint64_t locals_bytes = 0, forward_peak_with_locals = 0;
  for (size_t i = 0; i < r.trace.events.size(); ++i) {
    if (i == r.trace.forward_end_event) forward_peak = ledger.peak;
    for (; !held.empty() && held.top().first <= i; held.pop()) locals_bytes -= ledger.buffers[held.top().second].bytes;
    const StepTrace::Event& e = r.trace.events[i];
    if (e.kind == StepTrace::kFree && i < r.trace.forward_end_event) {
      if (auto h = held_until.find(e.buffer); h != held_until.end()) {
        locals_bytes += ledger.buffers[e.buffer].bytes;
        held.emplace(h->second, e.buffer);
      }
    }
    switch (e.kind) {
      case StepTrace::kAlloc: {
        std::optional<uint64_t> bytes = value(r.event_bytes[i]);
        if (!bytes) return std::nullopt;
        ledger.Alloc(*bytes, static_cast<Category>(e.category));
        break;
      }
      case StepTrace::kFree: ledger.Free(e.buffer); break;
      case StepTrace::kRecategorize: ledger.Recategorize(e.buffer, static_cast<Category>(e.category)); break;
      case StepTrace::kObserve: {
        std::optional<uint64_t> bytes = value(r.event_bytes[i]);
        if (!bytes) return std::nullopt;
        const uint64_t total = ledger.total + ledger.Observe(e.phase, *bytes);
        if (i < r.trace.forward_end_event) forward_peak_with_locals = std::max(forward_peak_with_locals, total + locals_bytes);
        break;
      }
      case StepTrace::kStepBegin: ledger.MarkStepBegin(); break;
    }
  }
  auto sum = [&](const std::vector<int>& buffers) {
    uint64_t s = 0;
    for (int b : buffers) s += ledger.buffers[b].bytes;
    return s;
  };
  StepPlan p = r.base;
  p.batch = batch;
  for (size_t i = 0; i < p.layers.size(); ++i) {
    LayerMemory& l = p.layers[i];
    const LayerFit& f = r.layers[i];
    std::optional<uint64_t> out = value(f.output_bytes), params = value(f.parameter_bytes);
    if (!out || !params) return std::nullopt;
    l.output_bytes = *out;
    l.parameter_bytes = *params;
    for (size_t k = 0; k < l.output_shape.size(); ++k) l.output_shape[k] = static_cast<int64_t>(f.output_shape[k].At(batch));
    l.saved_bytes = sum(r.trace.layer_saved[i]);
  }
  if (r.inplace_warning >= 0) {
    uint64_t at_risk = sum(r.trace.inplace_buffers);
    if (at_risk == 0) return std::nullopt;  // the simulation would not have warned
    p.warnings[r.inplace_warning] = InplaceWarning(r.trace.inplace_kinds, at_risk);
  }
  for (size_t i = 0; i < p.uncovered.size(); ++i) {
    std::optional<uint64_t> bytes = value(r.uncovered[i]);
    if (!bytes) return std::nullopt;
    p.uncovered[i].bytes_at_risk = *bytes;
  }
  SortUncovered(&p.uncovered);
  for (size_t i = 0; i < r.risks.size(); ++i) {
    std::optional<uint64_t> bytes = value(r.risk_bytes[i]);
    if (!bytes || *bytes == 0) return std::nullopt;  // the simulation would not have warned
    SetRiskBytes(*bytes, r.risks[i], &p);
  }
  std::optional<uint64_t> params = value(r.parameter_count);
  if (!params) return std::nullopt;
  p.parameter_count = *params;
  FinishStepPlan(ledger, options, r.trace.has_matmul, r.trace.has_conv, sum(r.trace.total_saved), &p, replayed);
  AddLocalsRisk(std::max(forward_peak, forward_peak_with_locals), ledger.peak, &p);
  return p;
}

// Whether the caching allocator sees the same events at batches x and y: every allocation and scratch
// rounded as it rounds them (the frees and the order are the recording's own). Then its result at one
// is its result at the other (a chain of 64-float activations rounds each odd batch up to the next).
bool SameAllocatorEvents(const Recording& r, int64_t x, int64_t y) {
  if (x == y) return true;
  for (int i : r.varying) {
    const Affine& f = r.event_bytes[i];
    if (CudaRoundSize(static_cast<uint64_t>(f.At(x))) != CudaRoundSize(static_cast<uint64_t>(f.At(y)))) return false;
  }
  return true;
}

// Whether the allocator's small pool gets the same requests at batches x and y: each allocation and
// scratch goes to the same pool at both (none for 0 bytes), and those of the small pool have the same
// size. (At large batches a step's small requests are its parameters, gradients and optimizer state.)
bool SameSmallPool(const Recording& r, int64_t x, int64_t y) {
  if (x == y) return true;
  auto pool = [](uint64_t rounded) { return rounded == 0 ? 0 : rounded <= kSmallSize ? 1 : 2; };
  for (int i : r.varying) {
    const Affine& f = r.event_bytes[i];
    const uint64_t a = CudaRoundSize(static_cast<uint64_t>(f.At(x))), b = CudaRoundSize(static_cast<uint64_t>(f.At(y)));
    if (pool(a) != pool(b) || (pool(a) == 1 && a != b)) return false;
  }
  return true;
}

// Whether `trace` (of a plan at `batch`) is the recording's at that batch, event for event and byte for byte.
bool SameTrace(const Recording& r, int64_t batch, const StepTrace& trace) {
  if (!SameEvents(r.trace, trace)) return false;
  for (size_t i = 0; i < trace.events.size(); ++i) {
    if (r.event_bytes[i].At(batch) != __int128{trace.events[i].bytes}) return false;
  }
  return true;
}

// The caching allocator's results at earlier batches of one recording (the last few of each kind).
struct KnownReplays {
  std::vector<std::pair<int64_t, ReplayResult>> whole;       // by batch
  std::vector<std::pair<int64_t, uint64_t>> reserved;        // the reserved peak alone, by batch
  std::vector<std::pair<int64_t, uint64_t>> small_reserved;  // the small pool's reserved bytes, by batch
  static constexpr size_t kKept = 8;
  template <typename T>
  static void Keep(std::vector<std::pair<int64_t, T>>& kept, int64_t batch, const T& value) {
    if (kept.size() == kKept) kept.erase(kept.begin());
    kept.emplace_back(batch, value);
  }
};

// Replay(r, options, batch)->required_bytes without the plan; nullopt where Replay gives none (or the
// CPU peak leaves what uint64 sums hold exactly). On cuda, takes what `known` shows and adds to it: a
// batch whose events the allocator saw already takes that result; one whose small-pool requests it saw
// replays the large pool's alone (the required bytes read the reserved bytes alone, and each pool's
// part of them is its own); any other is replayed whole, and its result kept in `known->whole` (the
// events it replays are those Replay's ledger gives at this batch, event for event, so Replay may take
// it instead of replaying).
std::optional<uint64_t> ReplayRequired(const Recording& r, const PlanOptions& options, int64_t batch,
                                       KnownReplays* known = nullptr) {
  if (batch < r.valid_lo || batch > r.valid_hi) return std::nullopt;
  if (r.inplace_warning >= 0 && r.inplace_bytes.At(batch) == 0) return std::nullopt;
  if (options.target == Target::kCpu) {
    __int128 peak = 0;
    for (const Recording::Line& l : r.observed) peak = std::max(peak, l.At(batch));
    if (peak > std::numeric_limits<int64_t>::max()) return std::nullopt;
    return static_cast<uint64_t>(peak);
  }
  const ReplayResult* same = nullptr;
  const uint64_t* same_reserved = nullptr;  // the same events' reserved peak, from a replay of the large pool
  const uint64_t* small_reserved = nullptr;
  if (known) {
    for (auto it = known->whole.rbegin(); it != known->whole.rend() && !same; ++it) {
      if (SameAllocatorEvents(r, batch, it->first)) same = &it->second;
    }
    for (auto it = known->reserved.rbegin(); it != known->reserved.rend() && !same && !same_reserved; ++it) {
      if (SameAllocatorEvents(r, batch, it->first)) same_reserved = &it->second;
    }
    for (auto it = known->small_reserved.rbegin();
         it != known->small_reserved.rend() && !same && !same_reserved && !small_reserved; ++it) {
      if (SameSmallPool(r, batch, it->first)) small_reserved = &it->second;
    }
  }
  // The ledger's own peak from the trace, then the caching allocator over the same events: the trace
  // at this batch as the allocator sees it, as the ledger would give it (each buffer rounded as the
  // allocator rounds it, scratch as a temporary), written once into storage the thread keeps (the
  // replay reads each event up to three times; computing it each time was about a sixth of a replay);
  // with the small pool's part known, only the large pool's requests.
  thread_local std::vector<AllocationEvent> events;
  thread_local std::vector<uint64_t> buffer_bytes;
  events.clear();
  events.reserve(r.trace.events.size());
  buffer_bytes.assign(r.alloc_event.size(), 0);
  auto rounded = [&](size_t i) { return CudaRoundSize(static_cast<uint64_t>(r.event_bytes[i].At(batch))); };
  const bool large_only = small_reserved != nullptr;
  auto replayed_here = [&](uint64_t bytes) { return !same && !same_reserved && !(large_only && bytes <= kSmallSize); };
  uint64_t total = 0, peak = 0;
  size_t step_begin = 0;
  for (size_t i = 0; i < r.trace.events.size(); ++i) {
    const StepTrace::Event& e = r.trace.events[i];
    switch (e.kind) {
      case StepTrace::kAlloc: {
        const uint64_t bytes = rounded(i);
        buffer_bytes[e.buffer] = bytes;
        total += bytes;
        if (replayed_here(bytes)) events.push_back({AllocationEvent::kAlloc, e.buffer, bytes});
        break;
      }
      case StepTrace::kFree:
        total -= buffer_bytes[e.buffer];
        if (replayed_here(buffer_bytes[e.buffer])) {
          events.push_back({AllocationEvent::kFree, e.buffer, buffer_bytes[e.buffer]});
        }
        break;
      case StepTrace::kObserve: {
        const uint64_t bytes = rounded(i);  // 0 bytes: nothing
        peak = std::max(peak, total + bytes);
        if (bytes > 0 && replayed_here(bytes)) events.push_back({AllocationEvent::kTemporary, -1, bytes});
        break;
      }
      case StepTrace::kStepBegin: step_begin = events.size(); break;
      case StepTrace::kRecategorize: break;
    }
  }
  const CudaAllocatorConfig config{options.cuda_max_split_size, options.cuda_expandable_segments};
  ReplayResult replay;
  // (Every allocated block lies in a reserved segment, so the allocated peak is at most the reserved
  // one: the required bytes, CudaStepPeaks' reserved, need the reserved peak alone.)
  if (same) {
    replay = *same;
    if (known) KnownReplays::Keep(known->whole, batch, replay);
  } else if (same_reserved) {
    replay.peak_reserved_bytes = *same_reserved;
  } else if (large_only) {
    const ReplayResult large = ReplayTrainingStep(events, step_begin, r.alloc_event.size(), config);
    replay.peak_reserved_bytes = large.peak_reserved_bytes + *small_reserved;
    if (known) KnownReplays::Keep(known->reserved, batch, replay.peak_reserved_bytes);
  } else {
    replay = ReplayTrainingStep(events, step_begin, r.alloc_event.size(), config);
    if (known) {
      KnownReplays::Keep(known->whole, batch, replay);
      KnownReplays::Keep(known->small_reserved, batch, replay.small_reserved_bytes);
    }
  }
  const CudaPeaks peaks = CudaStepPeaks(peak, replay);
  return CudaRequiredBytes(peaks, CudaOverheads(options, r.trace.has_matmul, r.trace.has_conv));
}

// Everything in the options but the batch. (A new PlanOptions field must be
// added here; step_template_test.cc checks PlanOptions' size as a tripwire.)
std::string OptionSetKey(const PlanOptions& o) {
  std::string k;
  auto add = [&](auto v) { k += std::to_string(v) + ","; };
  add(static_cast<int>(o.optimizer));
  add(static_cast<int>(o.optimizer_impl));
  add(static_cast<int>(o.precision));
  add(static_cast<int>(o.loss));
  add(static_cast<int>(o.target));
  add(o.cuda_compute_capability);
  add(o.cuda_expandable_segments);
  add(o.cuda_max_split_size);
  add(o.activation_checkpointing);
  add(o.parameter_shards);
  add(o.gradient_shards);
  add(o.optimizer_state_shards);
  add(o.extra_persistent_bytes);
  add(o.record_timeline);
  add(static_cast<int>(o.inplace));
  for (const std::string& n : o.inplace_nodes) k += std::to_string(n.size()) + ":" + n + ";";
  k += "|";
  k += std::to_string(o.replace_layer_with_pooling.size()) + ":" + o.replace_layer_with_pooling + ";";
  for (const auto& [name, dims] : o.input_overrides) {
    k += std::to_string(name.size()) + ":" + name + "=";
    for (int64_t d : dims) add(d);
    k += ";";
  }
  return k;
}

std::string ShapeKey(const PlanOptions& o, int64_t batch) {
  PlanOptions shape_only;
  shape_only.input_overrides = o.input_overrides;
  return OptionSetKey(shape_only) + "batch=" + std::to_string(batch);
}

}  // namespace

struct BatchPlanner::Impl {
  explicit Impl(const Model& m) : model(m) {}

  // A traced full plan.
  struct Point {
    StepPlan plan;
    StepTrace trace;
  };
  // A recording and the batches where it equalled the full plan. Once it has
  // been checked at a batch besides the two it was fitted through, it answers
  // every batch in [lo, hi]; a batch outside is planned in full and compared.
  struct Segment {
    Recording recording;
    int64_t lo = 0, hi = 0;
    bool checked = false;
    // The caching allocator's results RequiredFrom found (the last few): a whole plan at one of
    // those batches (a search's answer and the batch above it) takes it instead of replaying.
    mutable KnownReplays replays;
  };

  // ReplayRequired through a checked segment, keeping the allocator's results.
  static std::optional<uint64_t> RequiredFrom(const Segment& s, const PlanOptions& o, int64_t n) {
    return ReplayRequired(s.recording, o, n, &s.replays);
  }
  // One option set's state. Option sets are planned concurrently (fit's what-ifs on several threads),
  // each under its own lock; the planner's lock (mu) guards only the maps and caches they share and
  // is taken after an entry's lock, never before.
  struct Entry {
    Mutex mu;
    std::vector<Segment> segments GUARDED_BY(mu);
    std::vector<Point> loose GUARDED_BY(mu);  // traced plans no segment explains (the last two)
    int recordings GUARDED_BY(mu) = 0;
    std::map<int64_t, uint64_t> required GUARDED_BY(mu);  // what RequiredBytes answered, per batch
  };
  // Recordings made per option set at most (one per stretch of batches where
  // the rules choose the same kernels; a batch threshold starts another).
  static constexpr int kMaxRecordings = 6;

  // The shapes at a batch (they depend on the input overrides and the batch
  // alone, so option sets share them); batches 1 and 2 are kept (every search
  // plans them), and the last few others.
  // (Shared: a shape set another thread evicts stays alive while in use.) With them, what every
  // simulation at those shapes computes alike whatever its options (the fused operators, the rules).
  struct AtBatch {
    // (A constructor, not aggregate initialisation: make_shared's parenthesised form needs one before C++20's
    // P0960, which clang 14 lacks.)
    explicit AtBatch(ConcreteShapes s) : shapes(std::move(s)) {}
    ConcreteShapes shapes;
    mutable SimulationShare share;
  };
  static constexpr size_t kRecentShapes = 3;
  Result<std::shared_ptr<const AtBatch>> Shapes(const PlanOptions& o) EXCLUDES(mu) {
    const std::string key = ShapeKey(o, *o.batch);
    {
      MutexLock lock(mu);
      if (auto it = shapes.find(key); it != shapes.end()) return it->second;
      for (auto& [k, s] : recent_shapes) {
        if (k == key) return s;
      }
    }
    Result<ConcreteShapes> s = InferConcreteShapes(model, o);  // outside the lock: other option sets go on
    if (!s) return MakeError(s.error());
    auto inferred = std::make_shared<const AtBatch>(std::move(s).value());
    MutexLock lock(mu);
    if (*o.batch <= 2) return shapes.emplace(key, std::move(inferred)).first->second;  // the first one kept
    if (recent_shapes.size() == kRecentShapes) recent_shapes.erase(recent_shapes.begin());
    recent_shapes.emplace_back(key, inferred);
    return inferred;
  }

  void Count(int BatchPlanner::Stats::*field) EXCLUDES(mu) {
    MutexLock lock(mu);
    ++(stats.*field);
  }

  Result<StepPlan> Full(const PlanOptions& o, StepTrace* trace) EXCLUDES(mu) {
    Count(&BatchPlanner::Stats::full_plans);
    if (Status valid = CheckShardCounts(o); !valid) return MakeError(valid.error());
    Result<std::shared_ptr<const AtBatch>> s = Shapes(o);
    if (!s) return MakeError(s.error());
    return PlanFromShapes(model, (*s)->shapes, o, trace, &(*s)->share);
  }

  static bool Replayable(const PlanOptions& o) { return o.batch && *o.batch >= 1 && *o.batch <= kMaxBatch; }

  // The option set's entry. A plan with the timeline shares the entry of the
  // same options without it (the timeline is the only difference).
  // (std::map keeps an entry where it is while others are added.)
  Entry& EntryFor(const PlanOptions& o) EXCLUDES(mu) {
    PlanOptions without = o;
    without.record_timeline = false;
    const std::string key = OptionSetKey(without);
    MutexLock lock(mu);
    return entries[key];
  }

  // A checked segment's answer at `n`, or nullptr.
  const Segment* Covering(const Entry& e, int64_t n) const REQUIRES(e.mu) {
    for (const Segment& s : e.segments) {
      if (s.checked && n >= s.lo && n <= s.hi) return &s;
    }
    return nullptr;
  }

  // Whether a recording of `e` could be checked at batch `n` (one that covers it already answers
  // without a plan).
  static bool MayExplain(const Entry& e, int64_t n) REQUIRES(e.mu) {
    for (const Segment& s : e.segments) {
      if (n >= 1 && n <= s.recording.valid_hi) return true;
    }
    return false;
  }

  // Whether a recording of `e` predicts `p` (planned in full at batch n, without its timeline, with
  // `trace`) exactly: the first that does now covers n. One never checked that does not is dropped.
  bool Explain(Entry& e, int64_t n, const PlanOptions& o, const StepPlan& p, const StepTrace& trace) REQUIRES(e.mu)
      EXCLUDES(mu) {
    for (size_t i = 0; i < e.segments.size();) {
      Segment& s = e.segments[i];
      // Where the recording's events at n are the plan's, the caching allocator's result is the plan's.
      const bool same = o.target == Target::kCuda && SameTrace(s.recording, n, trace);
      const ReplayResult known{p.peak_allocated_bytes, p.peak_reserved_bytes};
      std::optional<StepPlan> replayed = Replay(s.recording, o, n, same ? &known : nullptr);
      if (replayed && *replayed == p) {
        s.checked = true;
        s.lo = std::min(s.lo, n);
        s.hi = std::max(s.hi, n);
        return true;
      }
      if (!s.checked) {
        Count(&BatchPlanner::Stats::rejected);
        e.segments.erase(e.segments.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      ++i;
    }
    return false;
  }

  // Plans `o` in full and learns from it: a segment that predicts the plan
  // exactly now covers its batch, one never checked that does not is dropped,
  // and a plan no segment explains is fitted with the nearest loose one. Fills
  // `plan` (when given) and `required`.
  // `check_only`: the caller reads nothing but what the plan teaches (a recording checked at the
  // search's far batch); `required` is then left as it is where a recording explains the plan.
  Status FullAndLearn(const PlanOptions& o, Entry& e, StepPlan* plan, uint64_t* required, bool check_only = false)
      REQUIRES(e.mu) EXCLUDES(mu) {
    const int64_t n = *o.batch;
    // A traced plan no recording explains yet is this batch's full plan already (without the
    // timeline): split asks a batch's plan, then its required bytes.
    if (!o.record_timeline) {
      for (const Point& q : e.loose) {
        if (q.plan.batch != n) continue;
        *required = q.plan.required_bytes;
        if (plan) *plan = q.plan;
        return Status::Ok();
      }
    }
    Point point;
    const bool learn = e.recordings < kMaxRecordings;
    // A check alone needs no caching-allocator result where a recording's events are the plan's, event
    // for event: the recording's replay would find the plan's, whatever it is. Planned with an assumed
    // one, compared with the recording replayed with the same; anything else is planned again in full.
    if (check_only && learn && o.target == Target::kCuda && !plan && MayExplain(e, n)) {
      StepTrace trace;
      const size_t hint = TraceSizeHint();
      trace.events.reserve(hint + hint / 8);
      trace.assumed_replay = ReplayResult{};
      Result<StepPlan> assumed = Full(o, &trace);
      if (!assumed) return MakeError(assumed.error());
      assumed->timeline.clear();
      // As Explain, in its order, as far as the traces are the same.
      for (size_t i = 0; i < e.segments.size();) {
        Segment& s = e.segments[i];
        if (!SameTrace(s.recording, n, trace)) break;
        std::optional<StepPlan> replayed = Replay(s.recording, o, n, &*trace.assumed_replay);
        if (replayed && *replayed == *assumed) {
          s.checked = true;
          s.lo = std::min(s.lo, n);
          s.hi = std::max(s.hi, n);
          return Status::Ok();
        }
        if (!s.checked) {
          Count(&BatchPlanner::Stats::rejected);
          e.segments.erase(e.segments.begin() + static_cast<std::ptrdiff_t>(i));
          continue;
        }
        ++i;
      }
    }
    // Planned with the trace where it may be learnt from (it costs little more than without): where a
    // recording explains the plan, the trace shows that the recording's events are the plan's and the
    // recording's replay takes the plan's caching-allocator result; where none does, the plan and its
    // trace fit a new recording without planning again.
    // (A traced plan of this model has as many events as the last, give or take: reserving them
    // spares the trace's growth, a large part of a traced plan's time on a large graph.)
    if (learn) {
      const size_t hint = TraceSizeHint();
      point.trace.events.reserve(hint + hint / 8);
    }
    Result<StepPlan> full = Full(o, learn ? &point.trace : nullptr);
    if (!full) return MakeError(full.error());
    if (learn) NoteTraceSize(point.trace.events.size());
    *required = full->required_bytes;
    if (!learn) {
      if (plan) *plan = std::move(full).value();
      return Status::Ok();
    }
    std::vector<TimelinePoint> timeline = std::move(full->timeline);  // recordings hold none
    full->timeline.clear();
    const bool explained = Explain(e, n, o, *full, point.trace);
    full->timeline = std::move(timeline);
    if (explained) {
      if (plan) *plan = std::move(full).value();
      return Status::Ok();
    }
    if (plan) {
      *plan = *full;
      point.plan = std::move(full).value();
    } else {
      point.plan = std::move(full).value();
    }
    point.plan.timeline.clear();
    // Fit a new recording through this batch and the nearest loose one.
    std::sort(e.loose.begin(), e.loose.end(), [&](const Point& a, const Point& b) {
      return std::llabs(a.plan.batch - n) < std::llabs(b.plan.batch - n);
    });
    for (Point& q : e.loose) {
      const bool below = q.plan.batch < n;
      Point& x = below ? q : point;
      Point& y = below ? point : q;
      std::optional<Recording> r = MakeRecording(model, x.plan, x.trace, y.plan, y.trace);
      if (!r) continue;
      const int64_t lo = x.plan.batch, hi = y.plan.batch;
      r->base = std::move(x.plan);
      StripLocalsRisk(&r->base);
      r->trace = std::move(x.trace);
      CompileRequired(&*r);
      ++e.recordings;
      Count(&BatchPlanner::Stats::recordings);
      e.segments.push_back({std::move(*r), lo, hi, false, {}});
      e.loose.clear();
      return Status::Ok();
    }
    e.loose.insert(e.loose.begin(), std::move(point));
    if (e.loose.size() > 2) e.loose.pop_back();
    return Status::Ok();
  }

  size_t TraceSizeHint() EXCLUDES(mu) {
    MutexLock lock(mu);
    return trace_size_hint;
  }
  void NoteTraceSize(size_t events) EXCLUDES(mu) {
    MutexLock lock(mu);
    trace_size_hint = events;
  }

  // Searches and advice ask the same plan again (split's strategies, the
  // answer's plan and its range): the last few plans are kept whole.
  static constexpr size_t kRecentPlans = 4;
  static std::string PlanKey(const PlanOptions& o) {
    return OptionSetKey(o) + "batch=" + (o.batch ? std::to_string(*o.batch) : "none");
  }
  std::optional<StepPlan> Recent(const std::string& key) EXCLUDES(mu) {
    MutexLock lock(mu);
    for (const auto& [k, p] : recent_plans) {
      if (k == key) return p;
    }
    return std::nullopt;
  }
  void Remember(std::string key, const StepPlan& p) EXCLUDES(mu) {
    MutexLock lock(mu);
    if (recent_plans.size() == kRecentPlans) recent_plans.erase(recent_plans.begin());
    recent_plans.emplace_back(std::move(key), p);
  }

  Result<StepPlan> Plan(const PlanOptions& o) EXCLUDES(mu) {
    if (!Replayable(o)) return Full(o, nullptr);
    Entry& e = EntryFor(o);
    MutexLock lock(e.mu);
    return PlanLocked(o, e);
  }

  // Plan() with the option set's entry locked.
  Result<StepPlan> PlanLocked(const PlanOptions& o, Entry& e) REQUIRES(e.mu) EXCLUDES(mu) {
    std::string key = PlanKey(o);
    if (std::optional<StepPlan> p = Recent(key)) return *std::move(p);
    Result<StepPlan> p = NewPlan(o, e);
    if (p) Remember(std::move(key), *p);
    return p;
  }

  Result<StepPlan> NewPlan(const PlanOptions& o, Entry& e) REQUIRES(e.mu) EXCLUDES(mu) {
    const int64_t n = *o.batch;
    if (!o.record_timeline) {
      for (const Segment& s : e.segments) {
        if (!s.checked || n < s.lo || n > s.hi) continue;
        const ReplayResult* known = nullptr;
        for (const auto& [batch, replay] : s.replays.whole) {
          if (batch == n) known = &replay;
        }
        if (std::optional<StepPlan> p = Replay(s.recording, o, n, known)) {
          Count(&BatchPlanner::Stats::replayed_plans);
          return *std::move(p);
        }
      }
    }
    StepPlan plan;
    uint64_t required = 0;
    if (Status s = FullAndLearn(o, e, &plan, &required); !s) return MakeError(s.error());
    return plan;
  }

  Result<uint64_t> RequiredBytes(const PlanOptions& o, int64_t reach) EXCLUDES(mu) {
    if (!Replayable(o) || o.record_timeline) {
      Result<StepPlan> p = Plan(o);
      if (!p) return MakeError(p.error());
      return p->required_bytes;
    }
    const int64_t n = *o.batch;
    Entry& e = EntryFor(o);
    MutexLock lock(e.mu);
    // Searches ask the same batches again (split re-plans a split per strategy, the page searches twice).
    if (auto it = e.required.find(n); it != e.required.end()) return it->second;
    Result<uint64_t> r = NewRequiredBytes(o, e, reach);
    if (r) e.required.emplace(n, *r);
    return r;
  }

  Result<uint64_t> NewRequiredBytes(const PlanOptions& o, Entry& e, int64_t reach) REQUIRES(e.mu) EXCLUDES(mu) {
    const int64_t n = *o.batch;
    if (const Segment* s = Covering(e, n)) {
      if (std::optional<uint64_t> r = RequiredFrom(*s, o, n)) {
        Count(&BatchPlanner::Stats::replayed_plans);
        return *r;
      }
      Result<StepPlan> p = PlanLocked(o, e);  // tries every segment, then plans in full
      if (!p) return MakeError(p.error());
      return p->required_bytes;
    }
    // A recording not yet checked is checked at the farthest batch the caller
    // will ask (a plan costs the same at any batch), so that one check covers
    // the whole search; where that check fails, `n` is planned in full as well.
    if (reach > n && reach <= kMaxBatch && e.recordings < kMaxRecordings) {
      for (const Segment& s : e.segments) {
        if (s.checked || reach <= s.hi || reach > s.recording.valid_hi) continue;
        PlanOptions far = o;
        far.batch = reach;
        uint64_t ignored = 0;
        if (Status st = FullAndLearn(far, e, nullptr, &ignored, /*check_only=*/true); !st) break;
        if (const Segment* c = Covering(e, n)) {
          if (std::optional<uint64_t> r = RequiredFrom(*c, o, n)) {
            Count(&BatchPlanner::Stats::replayed_plans);
            return *r;
          }
        }
        break;
      }
    }
    uint64_t required = 0;
    if (Status s = FullAndLearn(o, e, nullptr, &required); !s) return MakeError(s.error());
    return required;
  }

  const Model& model;
  Mutex mu;
  std::map<std::string, Entry> entries GUARDED_BY(mu);
  std::map<std::string, std::shared_ptr<const AtBatch>> shapes GUARDED_BY(mu);
  std::vector<std::pair<std::string, std::shared_ptr<const AtBatch>>> recent_shapes GUARDED_BY(mu);
  std::vector<std::pair<std::string, StepPlan>> recent_plans GUARDED_BY(mu);
  BatchPlanner::Stats stats GUARDED_BY(mu);
  size_t trace_size_hint GUARDED_BY(mu) = 0;  // the events of the last traced plan
};

BatchPlanner::BatchPlanner(const Model& model) : impl_(std::make_unique<Impl>(model)) {}
BatchPlanner::~BatchPlanner() = default;

Result<StepPlan> BatchPlanner::Plan(const PlanOptions& options) { return impl_->Plan(options); }

Result<uint64_t> BatchPlanner::RequiredBytes(const PlanOptions& options, int64_t reach) {
  return impl_->RequiredBytes(options, reach);
}

BatchPlanner::Stats BatchPlanner::stats() const {
  MutexLock lock(impl_->mu);
  return impl_->stats;
}

}  // namespace oomguard::plan
