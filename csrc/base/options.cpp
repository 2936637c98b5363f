#include <base/options.h>

#include <base/exceptions.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <sstream>
#include <unordered_map>

namespace fuser {

const std::vector<std::string>& debugDumpOptionNames() {
  static const std::vector<std::string> names = {
      "fusion_ir",        "segmented_fusion", "scheduled_ir",
      "scheduler_params", "scheduler_reject", "preseg_ir",
      "lower_passes",     "lower_ir",         "kernel_ir",
      "cuda_kernel",      "launch_params",    "nvrtc",
      "kernel_cache",     "compile_time",     "failure_repro"};
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

bool isDebugDumpEnabledFor(DebugDumpOption option, const std::string& name) {
  if (!isDebugDumpEnabled(option)) {
    return false;
  }
  const auto& names = debugDumpArguments(option);
  return names.empty() ||
         std::find(names.begin(), names.end(), name) != names.end();
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
    "warp_per_row",     "tight_register_caps", "narrow_load_unroll",
    "validate_runs"};
constexpr const char* kDisableNames[] = {
    "inner_outer_persistent", "fewer_rows_per_block", "matmul_expr_eval",
    "kernel_fallback"};
static_assert(
    std::size(kEnableNames) ==
    static_cast<size_t>(EnableOption::ValidateRuns) + 1);
static_assert(
    std::size(kDisableNames) ==
    static_cast<size_t>(DisableOption::KernelFallback) + 1);
static_assert(std::size(kEnableNames) <= 32 && std::size(kDisableNames) <= 32);

constexpr int kDisableBit = 32;

thread_local uint64_t scoped_option_bits = 0;

uint64_t bitOf(size_t position, int base) {
  return uint64_t{1} << (base + static_cast<int>(position));
}

// The bit of option `name` among `names` (from bit `base`), or a user
// error naming the known ones.
template <size_t N>
uint64_t optionBit(
    const char* const (&names)[N], const std::string& name, int base,
    const char* variable) {
  std::string known;
  for (size_t i = 0; i < N; ++i) {
    if (name == names[i]) {
      return bitOf(i, base);
    }
    known += std::string(i ? ", " : "") + names[i];
  }
  FUSER_CHECK(
      false, "Unknown option \"", name, "\" to ",
      base == 0 ? "enable" : "disable", " (the names ", variable,
      " takes): expected one of ", known, ".");
  return 0;
}

bool isEnabled(EnableOption option) {
  const auto i = static_cast<size_t>(option);
  return (scoped_option_bits & bitOf(i, 0)) != 0 ||
         listedIn("FUSER_ENABLE", kEnableNames[i]);
}

bool isDisabled(DisableOption option) {
  const auto i = static_cast<size_t>(option);
  return (scoped_option_bits & bitOf(i, kDisableBit)) != 0 ||
         listedIn("FUSER_DISABLE", kDisableNames[i]);
}

const std::vector<std::string>& enableOptionNames() {
  static const std::vector<std::string> names(
      std::begin(kEnableNames), std::end(kEnableNames));
  return names;
}

const std::vector<std::string>& disableOptionNames() {
  static const std::vector<std::string> names(
      std::begin(kDisableNames), std::end(kDisableNames));
  return names;
}

ScopedOptions::ScopedOptions(
    const std::vector<std::string>& enable,
    const std::vector<std::string>& disable)
    : previous_(scoped_option_bits) {
  uint64_t bits = previous_;
  for (const std::string& name : enable) {
    bits |= optionBit(kEnableNames, name, 0, "FUSER_ENABLE");
  }
  for (const std::string& name : disable) {
    bits |= optionBit(kDisableNames, name, kDisableBit, "FUSER_DISABLE");
  }
  scoped_option_bits = bits;
}

ScopedOptions::~ScopedOptions() {
  scoped_option_bits = previous_;
}

uint64_t scopedOptionBits() {
  return scoped_option_bits;
}

} // namespace fuser
