// Times the stages of a cache miss (scheduling, lowering, code generation,
// NVRTC, module load, launch planning) and prints them with
// FUSER_DUMP=compile_time: "[compile_time] kernel: lower 812 us, ...".
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace fuser {

class CompileTimer {
 public:
  // `what` names the whole (e.g. "kernel", "segment 0").
  explicit CompileTimer(std::string what);
  // Prints the stages when the dump is enabled.
  ~CompileTimer();
  CompileTimer(const CompileTimer&) = delete;
  CompileTimer& operator=(const CompileTimer&) = delete;

  // Ends the current stage, naming it.
  void stage(const std::string& name);

 private:
  std::string what_;
  std::chrono::steady_clock::time_point last_;
  std::vector<std::pair<std::string, int64_t>> stages_; // name, microseconds
};

} // namespace fuser
