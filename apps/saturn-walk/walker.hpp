// The parallel directory walk of saturn-walk (BENCH-CONTRACT.md, `walk`).
//
// Work unit: a *job* (a saturn runnable on the thread_pool in cpu_bound mode) owns one
// directory. It reads the directory with getdents64 into a per-thread name_stack, counts
// the non-directories, then, for its subdirectories: while the pool has fewer than
// `spawn_below` jobs outstanding, hands subdirectories 2..k to new jobs (stealable by
// idle workers); the rest it walks itself, depth first, in the same job (an explicit
// stack of levels, level_stack.hpp: no depth limit). So a busy pool spawns nothing and a
// hungry one gets work split off high in the tree, the way rayon's adaptive splitting
// does, without per-directory tasks or allocations.
//
// Every directory is opened relative to its parent's descriptor
// (openat2(parent, name, O_DIRECTORY|O_NOFOLLOW, RESOLVE_NO_XDEV)): a short path lookup,
// symlinks never followed. A spawned job needs the parent's descriptor until it has
// opened its own, so such a parent's fd is reference counted (shared_dir).
//
// Descriptors (fd_budget.hpp): RLIMIT_NOFILE is raised to its hard limit and split into
// a window of open levels per worker (deeper, the oldest level is closed and later
// reopened by name) and a budget of shared_dirs (when it is spent, a job walks its
// subdirectories itself). So no tree runs the walk out of descriptors, at any depth.
//
// End of directory: on file systems that fill the getdents64 buffer until the end of the
// directory (ext2/3/4, tmpfs, xfs, btrfs: checked with fstatfs for ROOT and at every
// mount point, which RESOLVE_NO_XDEV detects), a batch that leaves room for one more
// record is the last, and the walk skips the getdents64 call that would return 0.
//
// Counts are per-thread and added to relaxed atomics when a job ends; completion is an
// outstanding-jobs counter whose last decrement wakes the main thread (futex).
#pragma once

#include <saturn/sched/thread_pool.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

namespace walk {

/// The most workers a walk runs (saturn's thread_pool takes at most 255).
inline constexpr unsigned k_max_threads = 255;

struct walk_options {
  unsigned threads = 0;  ///< 1..k_max_threads; 0: the CPUs in the affinity mask (at most k_max_threads)
  /// Leave the pool's workers idle instead of shutting the pool down: for a caller that
  /// ends the process right after (std::_Exit), which then skips waking and joining every
  /// worker — milliseconds on a busy machine, where each wake waits for a CPU.
  bool leave_pool_running = false;
  /// Called once for each directory (or entry) that cannot be read, with
  /// "cannot read <path>: <reason>" (the path escaped, escape.hpp); the walk goes on
  /// without it. Runs on a pool worker or the caller's thread, one call at a time.
  std::function<void(const std::string&)> on_error;
};

struct walk_result {
  std::uint64_t files = 0;
  std::uint64_t dirs = 0;  ///< an unreadable directory counts, its contents do not
  bool counted = false;     ///< false: ROOT itself could not be looked up, nothing counted
  std::uint64_t errors = 0; ///< on_error calls: the counts miss what those hid
};

/// Walks `root` as find does: a ROOT that is not a directory, or a symlink (unless
/// spelled with a trailing slash, "link/"), counts as one file and no directory; below
/// ROOT no symlink is followed.
/// Blocks the calling thread (not a pool worker) until the walk ends; throws only if
/// the pool cannot start.
walk_result run_walk(const std::string& root, const walk_options& opts);

}  // namespace walk
