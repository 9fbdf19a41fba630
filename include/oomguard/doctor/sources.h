// Where devices/doctor/watch read the machine from: the real driver and OS,
// or fakes named by two environment variables, so that the CLI itself can be
// tested end to end on a machine without a GPU:
//   OOMGUARD_FAKE_GPUS=<file.json>   MachineGpus from a JSON file (gpus.h)
//   OOMGUARD_FAKE_ROOT=<dir>         SystemView rooted in a directory (system_view.h)
// Each one is independent; unset means real.
#pragma once

#include <memory>
#include <string>

#include "oomguard/doctor/gpus.h"
#include "oomguard/doctor/system_view.h"

namespace oomguard::doctor {

struct Sources {
  std::unique_ptr<MachineGpus> gpus;
  std::unique_ptr<SystemView> system;
  bool fake = false;  // either one is a fake
};

// False with *error set when a fake was asked for and cannot be opened.
bool OpenSources(Sources* out, std::string* error);

}  // namespace oomguard::doctor
