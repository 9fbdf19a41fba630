// Placeholder until the 'split' command lands.
#include "commands.h"
#include "common.h"

namespace oomguard::cli {

int RunSplit(int argc, char** argv) { return UsageError("split", "not implemented yet"); }

}  // namespace oomguard::cli
