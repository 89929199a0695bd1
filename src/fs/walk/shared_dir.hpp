// A directory descriptor shared with the jobs its subdirectories were handed to.
#pragma once

#include <unistd.h>

#include <saturn/detail/atomic.hpp>
#include <cstdint>

namespace saturn::fs::walk_detail {

/// Each spawned job holds a reference until it has opened its own directory (openat on
/// `fd`); the last reference closes `fd`. `alive` counts the shared_dirs open, against
/// the walk's shared budget (fd_budget.hpp). Any thread.
struct shared_dir {
  saturn::detail::atomic<std::uint32_t> refs;
  int fd;
  saturn::detail::atomic<std::int64_t>* alive;

  void release() noexcept {
    // ordering: acq_rel: the last holder closes after every other holder's openat on fd.
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      ::close(fd);
      alive->fetch_sub(1, std::memory_order_relaxed);  // ordering: a budget, no data behind it
      delete this;
    }
  }
};

}  // namespace saturn::fs::walk_detail
