// The parallel directory walk behind fs::walk (saturn/fs/walk.hpp), in jobs.
//
// Work unit: a *job* (a saturn runnable on the walking task's scheduler) owns one
// directory. It reads the directory with getdents64 into a per-thread name_stack, counts
// the non-directories, then, for its subdirectories: while fewer than `spawn_below` jobs
// are outstanding, hands subdirectories 2..k to new jobs (stealable by idle workers of a
// thread_pool); the rest it walks itself, depth first, in the same job (an explicit stack
// of levels, level_stack.hpp: no depth limit). So a busy pool spawns nothing and a hungry
// one gets work split off high in the tree, the way rayon's adaptive splitting does,
// without per-directory tasks or allocations.
//
// Every directory is opened relative to its parent's descriptor
// (openat2(parent, name, O_DIRECTORY|O_NOFOLLOW, RESOLVE_NO_XDEV)): a short path lookup,
// symlinks never followed. A spawned job needs the parent's descriptor until it has
// opened its own, so such a parent's fd is reference counted (shared_dir).
//
// Descriptors (fd_budget.hpp): what RLIMIT_NOFILE leaves free is split into a window of
// open levels per worker (deeper, the oldest level is closed and later reopened by name)
// and a budget of shared_dirs (when it is spent, a job walks its subdirectories itself).
// So no tree runs the walk out of descriptors, at any depth.
//
// End of directory: on file systems that fill the getdents64 buffer until the end of the
// directory (ext2/3/4, tmpfs, xfs, btrfs: checked with fstatfs for ROOT and at every
// mount point, which RESOLVE_NO_XDEV detects), a batch that leaves room for one more
// record is the last, and the walk skips the getdents64 call that would return 0.
//
// Two variants of the listing loop: *plain* (no visitor, no depth limit: names are never
// spelled, entries only counted) and *full* (a visitor and/or a depth limit: each worker
// keeps the path of its current directory, entries are typed fully).
//
// Counts are per-thread and added to relaxed atomics when a job ends; completion is an
// outstanding-jobs counter whose last decrement schedules the walking task again.
#pragma once

#include "paths.hpp"

#include <saturn/fs/walk.hpp>
#include <saturn/loop/runnable.hpp>
#include <saturn/task/scheduler.hpp>

#include <saturn/detail/atomic.hpp>
#include <cstdint>
#include <mutex>
#include <string>

namespace saturn::fs::walk_detail {

/// Jobs outstanding (queued or running) per worker below which a job splits off
/// subdirectories: enough queued work that a worker rarely finds the pool empty and
/// parks (even while another waits for a directory block from disk), few enough that
/// most directories are walked inline.
inline constexpr std::int64_t k_jobs_per_worker = 64;
/// Descriptors left out of the plan (fd_budget.hpp): ROOT's while its job waits, and slack.
inline constexpr unsigned k_reserved_fds = 4;

/// One walk's shared state; lives in the walking task's frame until the last job ends.
struct walk_state {
  scheduler* sched = nullptr;
  runnable* waiter = nullptr;         // the walking task, scheduled when the last job ends
  const root_paths* paths = nullptr;  // spells paths in messages
  const walk_visitor* visitor = nullptr;  // null or non-empty
  bool full_reads = false;            // no end-of-directory shortcut
  bool same_fs = false;               // do not descend into mount points
  bool plain = true;                  // no visitor and no depth limit: the counting loop
  unsigned max_depth = k_walk_unlimited_depth;
  std::int64_t spawn_below = 8;
  unsigned window = 128;              // levels a worker keeps open (fd_budget.hpp)
  std::int64_t shared_budget = 0;     // shared_dirs open at once, at most
  saturn::detail::atomic<bool> stopping{false};  // set once: a stop request or a visitor's stop
  alignas(64) saturn::detail::atomic<std::int64_t> outstanding{0};
  saturn::detail::atomic<std::int64_t> shared_open{0};
  alignas(64) saturn::detail::atomic<std::uint64_t> files{0};
  saturn::detail::atomic<std::uint64_t> dirs{1};  // ROOT
  saturn::detail::atomic<bool> visitor_stopped{false};
  const std::function<void(const walk_error&)>* on_error = nullptr;
  std::mutex error_mutex;  // serializes on_error; guards errors, error_list
  std::uint64_t errors = 0;
  std::vector<walk_error> error_list;
};

/// Reports that `path` could not be read (errno `err`); the walk goes on. Any thread.
void report(walk_state& st, const std::string& path, int err);

/// Makes the first job, for ROOT open as `fd` (owned), spelled `root`. With `trusted`,
/// the end-of-directory shortcut applies to it.
runnable* make_root_job(walk_state& st, int fd, bool trusted, const std::string& root);

}  // namespace saturn::fs::walk_detail
