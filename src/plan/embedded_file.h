// A file embedded into the library at build time (src/plan/embed_files.cmake).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace oomguard::plan {

struct EmbeddedFile {
  std::string_view name;   // the file name without its extension ("resnet50", "op_table")
  std::string_view bytes;  // its contents
};

}  // namespace oomguard::plan
