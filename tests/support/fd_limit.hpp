// Raising RLIMIT_NOFILE for tests that hold thousands of connections.
#pragma once

#include <sys/resource.h>

#include <string>

namespace saturn_test {

/// Why the soft RLIMIT_NOFILE cannot be raised to `need` (the hard limit is lower: the
/// test should skip), or an empty string when it can.
inline std::string fd_limit_shortfall(rlim_t need) {
  ::rlimit rl{};
  ::getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_max < need)
    return "RLIMIT_NOFILE hard limit " + std::to_string(rl.rlim_max) + " < " + std::to_string(need);
  return {};
}

/// Sets the soft RLIMIT_NOFILE to `need` (inherited by child processes) for its scope
/// and puts the old limit back when it ends.
class fd_limit_guard {
 public:
  explicit fd_limit_guard(rlim_t need) {
    ::getrlimit(RLIMIT_NOFILE, &m_old);
    ::rlimit want{need, m_old.rlim_max};
    m_result = ::setrlimit(RLIMIT_NOFILE, &want);
  }
  fd_limit_guard(const fd_limit_guard&) = delete;
  fd_limit_guard& operator=(const fd_limit_guard&) = delete;
  ~fd_limit_guard() {
    if (m_result == 0)
      ::setrlimit(RLIMIT_NOFILE, &m_old);
  }
  /// setrlimit's result: 0 when the limit was raised.
  int result() const noexcept { return m_result; }

 private:
  ::rlimit m_old{};
  int m_result = -1;
};

}  // namespace saturn_test
