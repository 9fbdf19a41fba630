// Placeholder until the 'plan' command lands.
#include "commands.h"
#include "common.h"

namespace oomguard::cli {

int RunPlan(int argc, char** argv) { return UsageError("plan", "not implemented yet"); }

}  // namespace oomguard::cli
