// exit_reason::describe.
#include <saturn/proc/pid.hpp>

namespace saturn {

std::string exit_reason::describe() const {
  switch (kind) {
    case exit_kind::normal:
      return "normal";
    case exit_kind::killed:
      return "killed";
    case exit_kind::noproc:
      return "noproc";
    case exit_kind::shutdown:
      return "shutdown";
    case exit_kind::error:
      break;
  }
  if (!error)
    return "error";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return std::string("error: ") + e.what();
  } catch (...) {
    return "error: (not a std::exception)";
  }
}

}  // namespace saturn
