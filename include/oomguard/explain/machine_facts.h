// The `explain --here` boundary is the shared machine-facts layer
// (oomguard/machine_facts.h); these names keep explain's callers short.
#pragma once

#include "oomguard/machine_facts.h"

namespace oomguard::explain {

using MachineFacts = oomguard::MachineFactsSource;
using oomguard::FixedMachineFacts;
using oomguard::NewLocalMachineFacts;
using oomguard::ParseMeminfo;

}  // namespace oomguard::explain
