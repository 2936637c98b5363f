// The scheduler registry (doc/design.md §2, §6). A scheduler says whether it
// can take a fusion, first from the fusion alone (compile time), then with the
// inputs of a run (run time), giving a reason when it cannot; it computes
// printable heuristic parameters and applies them. The runtime asks the
// schedulers in order and uses the first that accepts.
#pragma once

#include <base/hash.h>
#include <fusion.h>
#include <scheduler/kernel_flags.h>
#include <scheduler/runtime_info.h>
#include <scheduler/scheduler_types.h>

#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <typeinfo>
#include <utility>
#include <vector>

namespace fuser {

// Parameters a scheduler chose; printed with FUSER_DUMP=scheduler_params.
class HeuristicParams {
 public:
  virtual ~HeuristicParams() = default;
  virtual std::string toString() const = 0;
  // Whether `other` holds the same scheduler's parameters with equal
  // values: the scheduler makes the same kernel of the same fusion with
  // either. Equal parameters have equal hashes.
  virtual bool sameAs(const HeuristicParams& other) const = 0;
  virtual size_t hash() const = 0;
  // What the kernel is asked beyond its loops (none by default).
  virtual KernelFlags kernelFlags() const {
    return {};
  }
};

namespace param_hash {

template <typename A, typename B>
void add(size_t& seed, const std::pair<A, B>& value);
template <typename T>
void add(size_t& seed, const std::vector<T>& values);

inline void add(size_t& seed, int64_t value) {
  hashCombine(seed, std::hash<int64_t>{}(value));
}
inline void add(size_t& seed, bool value) {
  hashCombine(seed, value ? 1 : 2);
}
inline void add(size_t& seed, const std::string& value) {
  hashCombine(seed, std::hash<std::string>{}(value));
}
template <typename A, typename B>
void add(size_t& seed, const std::pair<A, B>& value) {
  add(seed, value.first);
  add(seed, value.second);
}
template <typename T>
void add(size_t& seed, const std::vector<T>& values) {
  hashCombine(seed, values.size());
  for (const auto& value : values) {
    add(seed, static_cast<const T&>(value));
  }
}

} // namespace param_hash

// The parameters of one scheduler. `Derived::fields()` ties every field
// (std::tie), once: equality and the hash both read it, so a field added
// to the list counts in both.
template <typename Derived>
class HeuristicParamsOf : public HeuristicParams {
 public:
  bool sameAs(const HeuristicParams& other) const override {
    const auto* same_kind = dynamic_cast<const Derived*>(&other);
    return same_kind != nullptr && self().fields() == same_kind->fields();
  }
  size_t hash() const override {
    size_t seed = typeid(Derived).hash_code();
    std::apply(
        [&seed](const auto&... field) { (param_hash::add(seed, field), ...); },
        self().fields());
    return seed;
  }

 private:
  const Derived& self() const {
    return static_cast<const Derived&>(*this);
  }
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual SchedulerType type() const = 0;
  // From the fusion alone. On false, `reason` says why.
  virtual bool canScheduleCompileTime(Fusion* fusion, std::string* reason) = 0;
  // With the inputs of a run.
  virtual bool canScheduleRunTime(
      Fusion* fusion, RuntimeInfo& runtime_info, std::string* reason) = 0;
  virtual std::unique_ptr<HeuristicParams> computeHeuristics(
      Fusion* fusion, RuntimeInfo& runtime_info) = 0;
  // Schedules `fusion` in place.
  virtual void schedule(Fusion* fusion, const HeuristicParams& params) = 0;
};

// The registered schedulers, in the order they are tried.
const std::vector<std::unique_ptr<Scheduler>>& registeredSchedulers();
Scheduler& schedulerFor(SchedulerType type);

struct SchedulerChoice {
  Scheduler* scheduler = nullptr;
  // Why each scheduler tried before it declined.
  std::vector<std::string> rejections;
};

// The first scheduler that accepts `fusion` for this run. Without
// `allow_expr_eval`, ExprEval is not asked and `scheduler` is null when no
// other scheduler accepts.
SchedulerChoice chooseScheduler(
    Fusion* fusion, RuntimeInfo& runtime_info, bool allow_expr_eval = true);

// How many times this process has run chooseScheduler: tests count the
// choices a cache miss makes (one per candidate group).
int64_t schedulerChoiceCount();

} // namespace fuser
