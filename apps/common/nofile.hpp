// raise_nofile: lifts the soft RLIMIT_NOFILE to the hard limit at start, as Go's runtime
// does. A server then holds as many connections as the administrator allows without a
// `ulimit -n` in front of it (Debian's soft default is 1,024), and the walker keeps more
// directories open.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>

namespace apps {

/// Raises the soft RLIMIT_NOFILE to the hard limit and returns the soft limit now in force
/// (what it was, when raising fails; RLIM_INFINITY is reported as 2^30; 1,024 when it
/// cannot be read). Threading: call at start, before other threads open descriptors.
inline std::int64_t raise_nofile() noexcept {
  ::rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0)
    return 1024;
  if (rl.rlim_cur < rl.rlim_max) {
    const ::rlim_t want = rl.rlim_max;
    rl.rlim_cur = want;
    if (::setrlimit(RLIMIT_NOFILE, &rl) != 0)
      ::getrlimit(RLIMIT_NOFILE, &rl);
  }
  constexpr ::rlim_t k_big = ::rlim_t{1} << 30;  // RLIM_INFINITY, or more than we would use
  return static_cast<std::int64_t>(std::min(rl.rlim_cur, k_big));
}

}  // namespace apps
