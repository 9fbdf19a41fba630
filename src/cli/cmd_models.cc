// Placeholder until the 'models' command lands.
#include "commands.h"
#include "common.h"

namespace oomguard::cli {

int RunModels(int argc, char** argv) { return UsageError("models", "not implemented yet"); }

}  // namespace oomguard::cli
