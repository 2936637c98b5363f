// The CUDA headers of the top-level runtime/ folder, embedded into the
// library at build time (cmake/EmbedRuntimeSources.cmake generates the
// definition). Kernels prepend these to their generated source.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fuser {

// (file name relative to runtime/, file content) pairs, sorted by file name.
const std::vector<std::pair<std::string, std::string>>&
embeddedRuntimeSources();

} // namespace fuser
