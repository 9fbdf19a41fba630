#include "step_timeline.h"

#include <cstring>

namespace oomguard::plan {

namespace {

uint64_t Sum(const MemoryBreakdown& b) {
  return b.weights + b.gradients + b.optimizer_state + b.activations_saved + b.inputs + b.transient + b.workspace +
         b.context + b.allocator_slack;
}

}  // namespace

int TimelineRecorder::Stage(const Raw& r) {
  if (r.node == kStart) return 0;
  if (r.node == kLoss) return 2;
  if (std::strcmp(r.phase, "optimizer") == 0) return 4;
  return std::strcmp(r.phase, "backward") == 0 ? 3 : 1;
}

void TimelineRecorder::Record(const char* phase, int node, const MemoryBreakdown& live) {
  Raw r{events_++, phase, node, live, Sum(live)};
  if (pending_count_ > 0 && Stage(pending_) != Stage(r)) Flush();
  if (pending_count_ == 0 || r.total > pending_.total) pending_ = r;
  if (++pending_count_ >= stride_) Flush();
}

void TimelineRecorder::Flush() {
  if (pending_count_ == 0) return;
  points_.push_back(pending_);
  pending_count_ = 0;
  if (points_.size() >= 2 * max_points_) {
    Halve();
    stride_ *= 2;
  }
}

void TimelineRecorder::Halve() {
  std::vector<Raw> kept;
  kept.reserve(points_.size() / 2 + 8);
  for (size_t i = 0; i < points_.size();) {
    if (i + 1 < points_.size() && Stage(points_[i]) == Stage(points_[i + 1])) {
      kept.push_back(points_[i + 1].total > points_[i].total ? points_[i + 1] : points_[i]);
      i += 2;
    } else {
      kept.push_back(points_[i]);
      ++i;
    }
  }
  points_ = std::move(kept);
}

std::vector<TimelinePoint> TimelineRecorder::Finish(const std::function<std::string(int)>& node_name) {
  Flush();
  for (size_t before = 0; points_.size() > max_points_ && points_.size() != before;) {
    before = points_.size();
    Halve();
  }
  std::vector<TimelinePoint> out;
  out.reserve(points_.size());
  for (const Raw& r : points_) {
    TimelinePoint p;
    p.event = r.event;
    p.phase = r.phase;
    switch (r.node) {
      case kStart: p.node = "start of step"; break;
      case kLoss: p.node = "loss"; break;
      case kOptimizerStep: p.node = "optimizer.step()"; break;
      default: p.node = node_name(r.node);
    }
    p.live = r.live;
    p.allocated_bytes = r.total;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace oomguard::plan
