#include <base/exceptions.h>

namespace fuser::detail {

void throwUserError(
    const char* /*cond*/, const char* /*file*/, int /*line*/,
    const std::string& msg) {
  // User errors carry only the message: the condition text and source
  // location mean nothing to the person who wrote the fusion.
  throw UserError(msg);
}

void throwInternalError(
    const char* cond, const char* file, int line, const std::string& msg) {
  std::ostringstream os;
  os << "fuser internal error: " << msg << "\n  (failed: " << cond << " at "
     << file << ":" << line
     << "; this is a bug in fuser, please report it with the fusion)";
  throw InternalError(os.str());
}

} // namespace fuser::detail
