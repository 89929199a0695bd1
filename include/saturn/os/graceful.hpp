/// \file
/// `os::graceful_stop`: a server's stop in three steps — stop accepting at once, let the
/// work in flight finish within a deadline, then cancel what is left — shared by every
/// task of the server.
///
/// ```
/// saturn::os::graceful_stop gs(pool);
/// gs.spawn_acceptor(accept_loop(gs, std::move(listener)));   // calls gs.spawn(serve(conn)) per connection
/// auto report = pool.block_on(gs.stop_on_signals({SIGINT, SIGTERM}, std::chrono::seconds(5)));
/// // the signals were blocked in main() first (os::block_signals), see os/signal.hpp
/// ```
///
/// Two groups of tasks, each with its own stop source and count: acceptors (what starts
/// new work: accept loops) and work (connections, requests). stop() stops the acceptors
/// and waits for them, then waits up to the deadline for the work to end by itself,
/// then stops the work (its awaits end with std::errc::operation_canceled, so a
/// connection closes) and waits for it. A task spawned after stop() began is stopped at
/// once. A work task that throws is counted (report.failed) and dropped; it does not stop
/// the server. The group's tasks are spawned tasks of the scheduler (they are not
/// children of the caller): each holds the shared state, so the graceful_stop may be
/// destroyed once stop() has returned, even while the last task is finishing its frame.
#pragma once

#include <saturn/result.hpp>
#include <saturn/task/scheduler.hpp>
#include <saturn/task/task.hpp>

#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <memory>

namespace saturn::os {

/// What stop() found.
struct stop_report {
  int signal = 0;                  ///< the signal that started the stop (stop_on_signals), else 0
  std::size_t in_flight = 0;       ///< work tasks running when the acceptors had stopped
  std::size_t cancelled = 0;       ///< of those, still running at the deadline (then stopped)
  std::size_t failed = 0;          ///< work tasks that ended by an exception, over the whole run
  std::chrono::milliseconds took{};  ///< from the start of stop() to its end
};

/// The shared stop protocol of one server. Move-only handle to shared state.
///
/// Threading: spawn(), spawn_acceptor(), spawn_acceptor_on() and stopping() from any
/// thread (a worker of the scheduler, or the thread that owns it); stop() and
/// stop_on_signals() are awaited from a saturn task of that scheduler (or through
/// block_on), once.
class graceful_stop {
 public:
  /// Tasks go to `sched` (a thread_pool or a runtime).
  explicit graceful_stop(scheduler& sched);
  graceful_stop(graceful_stop&&) noexcept = default;
  graceful_stop& operator=(graceful_stop&&) noexcept = default;
  ~graceful_stop();

  /// Starts a task that stop() cancels first and at once (an accept loop). Never suspends.
  void spawn_acceptor(task<void> t);
  /// As spawn_acceptor, on worker `worker` of the scheduler (a per-worker listener's
  /// accept loop, whose multishot accept then lives in that worker's ring). Throws
  /// std::out_of_range, without starting `t`, when there is no such worker.
  void spawn_acceptor_on(unsigned worker, task<void> t);
  /// Starts a task of work in flight (a connection): stop() gives it until the deadline.
  /// Never suspends.
  void spawn(task<void> t);
  /// As spawn, on worker `worker` of the scheduler (a per-worker listener's server
  /// loop). Throws std::out_of_range, without starting `t`, when there is no such worker.
  void spawn_on(unsigned worker, task<void> t);
  /// True once stop() has begun; an accept loop can test it to tell its listener's
  /// cancellation from a real failure.
  bool stopping() const noexcept;

  /// Runs the stop (see the file comment) and reports it. `deadline` counts from the
  /// moment the acceptors have ended.
  task<stop_report> stop(std::chrono::milliseconds deadline);
  /// Waits for one of `signals` (an os::signal_set: they must be blocked, see
  /// os/signal.hpp), then stop(deadline). Errors: the signal_set's, or the stop of the
  /// awaiting task (then nothing was stopped).
  task<result<stop_report>> stop_on_signals(std::initializer_list<int> signals, std::chrono::milliseconds deadline);

  struct state;

 private:
  std::shared_ptr<state> m_state;
};

}  // namespace saturn::os
