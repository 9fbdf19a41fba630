// Placeholder until the 'devices' command lands.
#include "commands.h"
#include "common.h"

namespace oomguard::cli {

int RunDevices(int argc, char** argv) { return UsageError("devices", "not implemented yet"); }

}  // namespace oomguard::cli
