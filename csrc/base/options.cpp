#include <base/options.h>

#include <base/exceptions.h>

#include <cstdlib>
#include <iterator>
#include <sstream>
#include <unordered_map>

namespace fuser {

const std::vector<std::string>& debugDumpOptionNames() {
  static const std::vector<std::string> names = {"fusion_ir",
                                                 "segmented_fusion",
                                                 "scheduled_ir",
                                                 "scheduler_params",
                                                 "scheduler_reject",
                                                 "lower_passes",
                                                 "lower_ir",
                                                 "kernel_ir",
                                                 "cuda_kernel",
                                                 "launch_params",
                                                 "nvrtc",
                                                 "kernel_cache",
                                                 "compile_time"};
  return names;
}

namespace {

// Enabled options and their arguments ("name:arg:arg").
using DumpOptions = std::unordered_map<int, std::vector<std::string>>;

DumpOptions parseDumpOptions() {
  DumpOptions enabled;
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
    std::vector<std::string> parts;
    std::stringstream item_stream(item);
    std::string part;
    while (std::getline(item_stream, part, ':')) {
      parts.push_back(part);
    }
    bool found = false;
    for (size_t i = 0; i < names.size(); ++i) {
      if (!parts.empty() && names[i] == parts[0]) {
        auto& arguments = enabled[static_cast<int>(i)];
        arguments.insert(arguments.end(), parts.begin() + 1, parts.end());
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

const DumpOptions& dumpOptions() {
  static const DumpOptions enabled = parseDumpOptions();
  return enabled;
}

} // namespace

bool isDebugDumpEnabled(DebugDumpOption option) {
  return dumpOptions().count(static_cast<int>(option)) != 0;
}

const std::vector<std::string>& debugDumpArguments(DebugDumpOption option) {
  static const std::vector<std::string> none;
  auto it = dumpOptions().find(static_cast<int>(option));
  return it == dumpOptions().end() ? none : it->second;
}

namespace {

// Whether the comma-separated list in environment variable `variable`
// names `name`.
bool listedIn(const char* variable, const char* name) {
  const char* value = std::getenv(variable);
  if (value == nullptr) {
    return false;
  }
  std::stringstream list(value);
  std::string item;
  while (std::getline(list, item, ',')) {
    if (item == name) {
      return true;
    }
  }
  return false;
}

} // namespace

// The names FUSER_ENABLE and FUSER_DISABLE take, in enum order.
constexpr const char* kEnableNames[] = {
    "outer_persistent", "matmul_cluster",      "shared_buffers",
    "warp_per_row",     "tight_register_caps", "narrow_load_unroll"};
constexpr const char* kDisableNames[] = {
    "inner_outer_persistent", "fewer_rows_per_block"};
static_assert(
    std::size(kEnableNames) ==
    static_cast<size_t>(EnableOption::NarrowLoadUnroll) + 1);
static_assert(
    std::size(kDisableNames) ==
    static_cast<size_t>(DisableOption::FewerRowsPerBlock) + 1);

bool isEnabled(EnableOption option) {
  return listedIn("FUSER_ENABLE", kEnableNames[static_cast<size_t>(option)]);
}

bool isDisabled(DisableOption option) {
  return listedIn("FUSER_DISABLE", kDisableNames[static_cast<size_t>(option)]);
}

} // namespace fuser
