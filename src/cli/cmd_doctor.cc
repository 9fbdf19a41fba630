// Placeholder until the 'doctor' command lands.
#include "commands.h"
#include "common.h"

namespace oomguard::cli {

int RunDoctor(int argc, char** argv) { return UsageError("doctor", "not implemented yet"); }

}  // namespace oomguard::cli
