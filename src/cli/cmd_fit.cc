// Placeholder until the 'fit' command lands.
#include "commands.h"
#include "common.h"

namespace oomguard::cli {

int RunFit(int argc, char** argv) { return UsageError("fit", "not implemented yet"); }

}  // namespace oomguard::cli
