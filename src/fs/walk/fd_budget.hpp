// How many directory descriptors a walk may hold open, and who holds them.
//
// A walk (fs::walk) holds two kinds of descriptors: each worker's *levels* (the directories on the
// path of its depth-first walk, at most `window` of them; older ones are closed and
// reopened by name when needed again) and *shared* ones (a directory whose
// subdirectories were handed to other jobs stays open until each of those has opened its
// own; at most `shared` of them at once, else the job walks the subdirectories itself).
// The plan keeps threads x window + shared within what RLIMIT_NOFILE leaves free, so
// a walk of a sound tree does not run out of descriptors at any depth.
#pragma once

#include <cstdint>

namespace saturn::fs::walk_detail {

struct fd_plan {
  unsigned threads = 1;      ///< workers: fewer than asked for if descriptors are that few
  unsigned window = 3;       ///< descriptors of its own levels one worker keeps open
  std::int64_t shared = 0;   ///< descriptors kept open for spawned jobs, all workers together
};

/// The fewest levels a worker can walk with: the job's own directory (the anchor that
/// closed levels are reopened from), the current one and the child being opened.
inline constexpr unsigned k_min_window = 3;
/// More levels than this open per worker buy nothing: trees that deep are rare, and a
/// closed level costs one reopen only if it has subdirectories left.
inline constexpr unsigned k_max_window = 128;

/// Splits the descriptors not yet open below the soft RLIMIT_NOFILE (the walk does not
/// raise it: a program that wants more raises it at start), less `reserved`, among
/// `threads` workers (1..255) that want `shared_per_worker` shared descriptors each.
/// Any thread, when the walk starts, before it opens anything else.
fd_plan plan_descriptors(unsigned threads, std::int64_t shared_per_worker, unsigned reserved);

}  // namespace saturn::fs::walk_detail
