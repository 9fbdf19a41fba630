// A training step counter read from a run's output ("step 120", "Iter: 5",
// "[120/500]"), so that `oomguard watch --steps` can say at which step the
// limit will be reached. Pure; not thread-safe (one per run).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oomguard/doctor/growth.h"

namespace oomguard::doctor {

// The last step number in one line: a number after "step", "iter",
// "iteration" or "batch" (any case, optionally followed by ':', '=' or '#'),
// or the N of "[N/M]". nullopt when the line has none.
std::optional<long> ParseStepNumber(std::string_view line);

class StepCounter {
 public:
  // Feeds output in any chunking; complete lines are parsed as they arrive.
  void Feed(std::string_view text, double seconds);
  std::optional<long> last_step() const { return last_; }
  // Theil–Sen rate over the (seconds, step) points seen; 0 with fewer than 2.
  double steps_per_second() const;

 private:
  std::string partial_;
  std::optional<long> last_;
  std::vector<MemoryPoint> points_;  // bytes = step number
};

}  // namespace oomguard::doctor
