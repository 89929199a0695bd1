/// \file
/// What the live single-threaded `runtime`s have done so far: their event loop's
/// loop_stats and the spawned tasks alive on each. metrics' runtime collector renders
/// these next to the thread_pools' (saturn/sched/pool_stats.hpp); a program may read them
/// itself.
///
/// The counters are written by the runtime's thread alone (owned_counter: a plain add)
/// and read here from any thread, so a value may lag by the adds in flight.
#pragma once

#include <saturn/loop/event_loop.hpp>

#include <cstddef>
#include <vector>

namespace saturn {

/// One runtime's counters (totals since it was built) and its live tasks (now).
struct runtime_stats {
  unsigned id = 0;             ///< a number unique among the runtimes of this process, in creation order
  std::size_t live_tasks = 0;  ///< spawned tasks started and not finished
  loop_stats loop{};           ///< its event loop's counters
};

/// A snapshot of every `runtime` alive now, oldest first. Threading: any thread; takes the
/// lock runtimes register under at construction and leave at destruction (never taken by
/// a running runtime). Does not suspend.
std::vector<runtime_stats> live_runtime_stats();

}  // namespace saturn
