// Records the training-step simulation over time for StepPlan::timeline: at
// each event, what was live by category, the phase and the node. Memory stays
// bounded however long the step is: each kept point stands for `stride` events
// (the largest of them, the earliest on a tie); whenever twice the cap is
// reached, neighbours are merged in pairs the same way and the stride doubles.
// Points never merge across a stage (start, forward, loss, backward,
// optimizer), so the peak and every stage survive.
//
// Thread safety: a value; one per simulation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oomguard/plan/planner.h"

namespace oomguard::plan {

class TimelineRecorder {
 public:
  // Node indexes that are not graph nodes.
  static constexpr int kStart = -1;
  static constexpr int kLoss = -2;
  static constexpr int kOptimizerStep = -3;

  // REQUIRES: max_points >= 8.
  explicit TimelineRecorder(size_t max_points = kMaxTimelinePoints) : max_points_(max_points) {}

  // One event. `phase` must outlive the recorder (a string literal); `node` is
  // a graph node index or one of the constants above.
  void Record(const char* phase, int node, const MemoryBreakdown& live);

  // The points in time order (at most max_points), names resolved with
  // `node_name` (graph nodes only).
  std::vector<TimelinePoint> Finish(const std::function<std::string(int)>& node_name);

  size_t size() const { return points_.size(); }

 private:
  struct Raw {
    uint64_t event;
    const char* phase;
    int node;
    MemoryBreakdown live;
    uint64_t total;
  };
  static int Stage(const Raw& r);
  void Flush();  // appends the pending point
  void Halve();

  size_t max_points_;
  uint64_t events_ = 0;
  uint64_t stride_ = 1;  // events per kept point
  Raw pending_{};        // the largest of the events since the last kept point
  uint64_t pending_count_ = 0;
  std::vector<Raw> points_;
};

}  // namespace oomguard::plan
