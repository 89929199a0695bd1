// The descriptor plan of a walk (fd_budget.hpp).
#include "fd_budget.hpp"

#include <dirent.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>

namespace saturn::fs::walk_detail {
namespace {

/// Descriptors open now below `limit` (the ones that take numbers a new one could get),
/// counted in /proc/self/fd; without /proc, a guess: stdin, stdout, stderr and a few.
std::int64_t open_descriptors(std::int64_t limit) noexcept {
  ::DIR* d = ::opendir("/proc/self/fd");
  if (d == nullptr)
    return 8;
  std::int64_t n = 0;
  const int self = ::dirfd(d);
  while (const ::dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0' && fd != self && fd < limit)
      ++n;
  }
  ::closedir(d);
  return n;
}

/// The soft RLIMIT_NOFILE in force (RLIM_INFINITY as 2^30; 1,024 if it cannot be read).
std::int64_t nofile_limit() noexcept {
  ::rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0)
    return 1024;
  constexpr ::rlim_t k_big = ::rlim_t{1} << 30;  // RLIM_INFINITY, or more than a walk uses
  return static_cast<std::int64_t>(std::min(rl.rlim_cur, k_big));
}

}  // namespace

fd_plan plan_descriptors(unsigned threads, std::int64_t shared_per_worker, unsigned reserved) {
  const std::int64_t limit = nofile_limit();
  const std::int64_t spare = std::max<std::int64_t>(0, limit - open_descriptors(limit) - reserved);
  const std::int64_t t = std::max(1u, threads);
  fd_plan plan;
  if (spare >= t * (k_max_window + shared_per_worker)) {  // the usual case: no constraint
    plan.threads = static_cast<unsigned>(t);
    plan.window = k_max_window;
    plan.shared = spare - t * k_max_window;
    return plan;
  }
  // Few descriptors: half for the workers' levels, half for spawned jobs, and fewer
  // workers if each would not get k_min_window levels (and as many shared) that way.
  const std::int64_t workers = std::clamp<std::int64_t>(spare / (2 * k_min_window), 1, t);
  const std::int64_t window = std::clamp<std::int64_t>(spare / (2 * workers), k_min_window, k_max_window);
  plan.threads = static_cast<unsigned>(workers);
  plan.window = static_cast<unsigned>(window);
  plan.shared = std::max<std::int64_t>(0, spare - workers * window);
  return plan;
}

}  // namespace saturn::fs::walk_detail
