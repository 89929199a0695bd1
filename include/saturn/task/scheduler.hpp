/// \file
/// The seam between the task layer and whatever runs tasks: a single-threaded runtime
/// (one loop) or the work-stealing scheduler. The task layer only ever calls these two
/// functions, plus event_loop::current() for I/O.
#pragma once

#include <saturn/loop/runnable.hpp>

#include <stop_token>

namespace saturn {

namespace detail {
struct promise_base;
class live_table;
}  // namespace detail
class scheduler;

/// What a task inherits from whoever started it: where it runs, and what can cancel it.
/// Lives in the frame (or object) of the starter, which outlives the task (structured
/// concurrency); spawned tasks get their runtime's root context.
struct task_context {
  scheduler* sched = nullptr;
  std::stop_token token{};
  /// Where spawned tasks started under this context are recorded while alive (root
  /// contexts of single-threaded runtimes; see detail::live_table). When null, the
  /// scheduler's track/untrack are used instead.
  detail::live_table* live = nullptr;
};

/// Runs tasks. Implementations: runtime (src/task) and the work-stealing pool (src/sched).
class scheduler {
 public:
  virtual ~scheduler() = default;
  /// Queues `r` (a task's promise) to run. From a thread of this scheduler it goes on that
  /// thread's local queue without synchronization; from any other thread it is handed over
  /// lock-free and the scheduler is woken if asleep.
  virtual void schedule(runnable* r) noexcept = 0;
  /// Queues a newly spawned task: like schedule(), but a multi-threaded scheduler may
  /// place it where other workers can steal it.
  virtual void spawn(runnable* r) noexcept { schedule(r); }
  /// Queues a newly spawned task to start on worker `worker` of this scheduler (numbered
  /// from 0; a single-threaded runtime has worker 0 only). Any thread. Throws
  /// std::out_of_range, without queueing `r`, when there is no such worker.
  virtual void spawn_on(unsigned worker, runnable* r) = 0;
  /// Records a spawned task as alive (when its context has no inline live table), so a
  /// scheduler destroyed while it is suspended can destroy it. On a thread of this scheduler.
  virtual void track(detail::promise_base*) noexcept {}
  /// Forgets a finishing task recorded by track(). On a thread of this scheduler.
  virtual void untrack(detail::promise_base*) noexcept {}
  /// Queues a task that yielded: it runs after the work that is ready now. Default: schedule.
  virtual void yield(runnable* r) noexcept { schedule(r); }
  /// The context spawned tasks get (no cancellation token of their own).
  virtual task_context& root_context() noexcept = 0;
  /// The scheduler whose thread is calling, or nullptr.
  static scheduler* current() noexcept;

 protected:
  /// Sets the calling thread's current scheduler (for implementations); returns the old one.
  static scheduler* set_current(scheduler* s) noexcept;
};

}  // namespace saturn
