// start_pool: the servers' thread_pool, or a message and no pool when it cannot start.
#pragma once

#include <saturn/sched/thread_pool.hpp>

#include <cstdio>
#include <exception>
#include <optional>

namespace apps {

/// Constructs `pool` from `opts`; false after saying why on stderr ("<program>: cannot
/// start: ...") when a worker's ring, eventfd or thread cannot be had (RLIMIT_NOFILE,
/// RLIMIT_NPROC, memory). The caller exits 1. Main thread, before any worker exists.
inline bool start_pool(std::optional<saturn::thread_pool>& pool, const saturn::pool_options& opts,
                       const char* program) {
  try {
    pool.emplace(opts);
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: cannot start: %s\n", program, e.what());
    return false;
  }
}

}  // namespace apps
