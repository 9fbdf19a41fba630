// Placeholder until the 'explain' command lands.
#include "commands.h"
#include "common.h"

namespace oomguard::cli {

int RunExplain(int argc, char** argv) { return UsageError("explain", "not implemented yet"); }

}  // namespace oomguard::cli
