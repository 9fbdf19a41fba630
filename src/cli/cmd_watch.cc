// Placeholder until the 'watch' command lands.
#include "commands.h"
#include "common.h"

namespace oomguard::cli {

int RunWatch(int argc, char** argv) { return UsageError("watch", "not implemented yet"); }

}  // namespace oomguard::cli
