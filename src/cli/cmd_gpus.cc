// Placeholder until the 'gpus' command lands.
#include "commands.h"
#include "common.h"

namespace oomguard::cli {

int RunGpus(int argc, char** argv) { return UsageError("gpus", "not implemented yet"); }

}  // namespace oomguard::cli
