// Two error families (doc/design.md §8):
//  - FUSER_CHECK(cond, msg...): the user asked for something invalid (bad
//    input, bad schedule). The message says what was expected, what was
//    found, and how to fix it.
//  - FUSER_INTERNAL_ASSERT(cond, msg...) / FUSER_ERROR(msg...): a compiler
//    bug. Users should never see these.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace fuser {

// Raised for invalid user requests; the message is meant for the user.
class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Raised when an internal invariant does not hold (a bug in fuser).
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

namespace detail {

inline void appendAll(std::ostringstream&) {}

template <typename T, typename... Rest>
void appendAll(std::ostringstream& os, const T& first, const Rest&... rest) {
  os << first;
  appendAll(os, rest...);
}

template <typename... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  appendAll(os, args...);
  return os.str();
}

[[noreturn]] void throwUserError(
    const char* cond, const char* file, int line, const std::string& msg);
[[noreturn]] void throwInternalError(
    const char* cond, const char* file, int line, const std::string& msg);

} // namespace detail
} // namespace fuser

#define FUSER_CHECK(cond, ...)                                     \
  do {                                                             \
    if (!(cond)) {                                                 \
      ::fuser::detail::throwUserError(                             \
          #cond, __FILE__, __LINE__,                               \
          ::fuser::detail::concat("" __VA_OPT__(, ) __VA_ARGS__)); \
    }                                                              \
  } while (0)

#define FUSER_INTERNAL_ASSERT(cond, ...)                           \
  do {                                                             \
    if (!(cond)) {                                                 \
      ::fuser::detail::throwInternalError(                         \
          #cond, __FILE__, __LINE__,                               \
          ::fuser::detail::concat("" __VA_OPT__(, ) __VA_ARGS__)); \
    }                                                              \
  } while (0)

#define FUSER_ERROR(...)                 \
  ::fuser::detail::throwInternalError(   \
      "unreachable", __FILE__, __LINE__, \
      ::fuser::detail::concat("" __VA_OPT__(, ) __VA_ARGS__))
