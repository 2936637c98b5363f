#include <base/compile_timer.h>

#include <base/options.h>

#include <iostream>
#include <sstream>

namespace fuser {

CompileTimer::CompileTimer(std::string what)
    : what_(std::move(what)), last_(std::chrono::steady_clock::now()) {}

CompileTimer::~CompileTimer() {
  if (!isDebugDumpEnabled(DebugDumpOption::CompileTime) || stages_.empty()) {
    return;
  }
  std::stringstream ss;
  ss << "[compile_time] " << what_ << ":";
  int64_t total = 0;
  for (size_t i = 0; i < stages_.size(); ++i) {
    ss << (i ? ", " : " ") << stages_[i].first << " " << stages_[i].second
       << " us";
    total += stages_[i].second;
  }
  ss << " (total " << total << " us)\n";
  std::cout << ss.str() << std::flush;
}

void CompileTimer::stage(const std::string& name) {
  const auto now = std::chrono::steady_clock::now();
  stages_.emplace_back(
      name,
      std::chrono::duration_cast<std::chrono::microseconds>(now - last_)
          .count());
  last_ = now;
}

} // namespace fuser
