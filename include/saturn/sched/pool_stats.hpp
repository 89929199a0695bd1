/// \file
/// What the live thread_pools have done so far, per worker: the scheduler's own counters
/// (tasks run, steals, parks, wake-ups, parked time), the depth of its queues, and in io
/// mode its event loop's loop_stats. metrics' runtime collector renders these; a program
/// may read them itself.
///
/// The counters are written by their worker alone, with a plain add (owned_counter: no
/// lock, no read-modify-write), and read here from any thread: a snapshot is not one
/// instant across workers, and each value may lag its worker by the adds in flight.
#pragma once

#include <saturn/loop/event_loop.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace saturn {

/// One worker's counters (totals since the pool started) and queue depths (now).
struct worker_stats {
  unsigned index = 0;               ///< the worker's index in its pool
  std::uint64_t tasks_run = 0;      ///< runnables this worker ran (task steps, posted callables)
  std::uint64_t steal_attempts = 0; ///< rounds over the other workers' and submitters' queues
  std::uint64_t steals = 0;         ///< rounds that took work
  std::uint64_t parks = 0;          ///< times the worker went to sleep (in its ring or on a futex)
  std::uint64_t wakeups = 0;        ///< times another thread woke it from a park (unparks taken)
  std::uint64_t stalls = 0;         ///< stalls reported on this worker (saturn/sched/stall.hpp)
  std::uint64_t parked_ns = 0;      ///< time spent parked, a park in progress included
  std::uint64_t uptime_ns = 0;      ///< time since the worker started (busy = uptime - parked)
  std::size_t local_depth = 0;      ///< tasks in its deque and LIFO slot now (approximate)
  bool has_loop = false;            ///< io mode: `loop` holds the ring's counters
  loop_stats loop{};                ///< its event loop's counters (io mode)
};

/// One pool: its workers and the depth of the queues shared by all of them.
struct pool_stats {
  unsigned id = 0;                  ///< a number unique among the pools of this process
  std::size_t injection_depth = 0;  ///< tasks in the global injection queue now (approximate)
  std::size_t submitter_depth = 0;  ///< tasks in the registered submitters' queues now (approximate)
  std::vector<worker_stats> workers;
};

/// A snapshot of every thread_pool alive now, oldest first. Threading: any thread; takes
/// the lock pools register under at construction and leave at destruction (a pool being
/// built or destroyed waits for it, never a worker). Does not suspend.
std::vector<pool_stats> live_pool_stats();

}  // namespace saturn
