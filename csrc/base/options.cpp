#include <base/options.h>

#include <base/exceptions.h>

#include <cstdlib>
#include <sstream>
#include <unordered_set>

namespace fuser {

const std::vector<std::string>& debugDumpOptionNames() {
  static const std::vector<std::string> names = {
      "fusion_ir",     "scheduled_ir", "scheduler_params",
      "lower_passes",  "kernel_ir",    "cuda_kernel",
      "launch_params", "nvrtc",        "kernel_cache"};
  return names;
}

namespace {

std::unordered_set<int> parseDumpOptions() {
  std::unordered_set<int> enabled;
  const char* env = std::getenv("FUSER_DUMP");
  if (env == nullptr) {
    return enabled;
  }
  const auto& names = debugDumpOptionNames();
  std::stringstream ss(env);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) {
      continue;
    }
    bool found = false;
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == item) {
        enabled.insert(static_cast<int>(i));
        found = true;
      }
    }
    if (!found) {
      std::string valid;
      for (const auto& name : names) {
        valid += (valid.empty() ? "" : ", ") + name;
      }
      FUSER_CHECK(
          false, "FUSER_DUMP: unknown option '", item,
          "'. Valid options: ", valid, ".");
    }
  }
  return enabled;
}

} // namespace

bool isDebugDumpEnabled(DebugDumpOption option) {
  static const std::unordered_set<int> enabled = parseDumpOptions();
  return enabled.count(static_cast<int>(option)) != 0;
}

} // namespace fuser
