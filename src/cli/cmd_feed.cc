// Placeholder until the 'feed' command lands.
#include "commands.h"
#include "common.h"

namespace oomguard::cli {

int RunFeed(int argc, char** argv) { return UsageError("feed", "not implemented yet"); }

}  // namespace oomguard::cli
