/// \file
/// Signals as events tasks await: `co_await saturn::signal(SIGHUP)`, or a `signal_set`
/// for several signals and for deliveries that must not be missed between two waits.
///
/// ```
/// int main() {
///   // 1. Block the signals in main() before any runtime or pool starts, so every thread
///   //    saturn creates inherits the mask and the kernel keeps them for the signalfd.
///   if (auto b = saturn::os::block_signals({SIGHUP, SIGTERM}); !b) return 1;
///   saturn::runtime rt;
///   rt.block_on([]() -> saturn::task<> {
///     auto hup = saturn::os::signal_set::make({SIGHUP, SIGTERM});
///     if (!hup) co_return;                            // a signal was not blocked: the message says so
///     for (;;) {
///       auto s = co_await hup->wait();                // the next SIGHUP or SIGTERM
///       if (!s || *s == SIGTERM) co_return;
///       // SIGHUP: reload the configuration
///     }
///   }());
/// }
/// ```
///
/// How it works: one signalfd for the whole process, its mask the union of every signal
/// a signal_set was made for, read through the ring (IORING_OP_READ of signalfd_siginfo
/// records). Whichever waiting task finds nobody reading becomes the reader; each record
/// it reads bumps a per-signal delivery count and wakes every waiter, and the next
/// waiter whose signal has not come takes over the reading. So a signal reaches every
/// signal_set waiting for it, on any worker, and no saturn thread is dedicated to
/// signals. A wait() completes for deliveries counted after the set's previous wait()
/// returned (after make() for the first), so a signal that arrives between two waits of
/// a loop is not lost; several deliveries of one signal in that gap are seen once (the
/// kernel coalesces standard signals anyway).
///
/// The contract that makes signalfd work: the signals must be blocked in every thread of
/// the process, else the kernel delivers them to a thread that has them unblocked (the
/// default action of SIGTERM kills the process). block_signals() in main() before
/// starting saturn does that, since threads inherit their creator's mask; make() checks
/// the calling thread's mask and refuses with a message naming the signal otherwise.
/// Signals sent to one thread (pthread_kill, tgkill) reach only a signalfd read on that
/// thread: process-directed signals (kill, the terminal, systemd) are what this serves.
/// For SIGINT/SIGTERM without blocking anything, os::shutdown_signals uses handlers.
#pragma once

#include <saturn/result.hpp>
#include <saturn/task/task.hpp>

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

namespace saturn::os {

/// Blocks `signals` in the calling thread (pthread_sigmask), so that threads it creates
/// afterwards — a runtime's, a pool's workers — inherit the mask. Call it in main()
/// before saturn starts any thread. Errors (nothing is blocked then): a number that is not
/// a signal, SIGKILL or SIGSTOP (which cannot be blocked), or a synchronous fault signal
/// (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP: blocking them is undefined for faults).
/// Threading: affects the calling thread only; never suspends.
result<void> block_signals(std::initializer_list<int> signals);

/// A subscription to some signals, whose wait() completes with the next one delivered.
/// Move-only; cheap (no system call after the first set of the process, except to add a
/// signal the signalfd does not have yet).
///
/// Threading: make() and the destructor on any thread; wait() is awaited from a saturn
/// task (a runtime, or a thread_pool in io mode), one wait at a time per object; any
/// number of objects may wait at once on any workers, for the same or other signals.
/// The object must outlive its wait().
class signal_set {
 public:
  /// A set for `signals`. Errors: an invalid number (as for block_signals), or a signal
  /// not blocked in the calling thread ("signal_set: SIGHUP is not blocked in this thread:
  /// call saturn::os::block_signals({SIGHUP}) in main() before starting the runtime"), or
  /// the signalfd cannot be made.
  static result<signal_set> make(std::initializer_list<int> signals);

  signal_set(signal_set&&) noexcept = default;
  signal_set& operator=(signal_set&&) noexcept = default;
  signal_set(const signal_set&) = delete;
  signal_set& operator=(const signal_set&) = delete;
  ~signal_set() = default;

  /// Completes with the number of a signal of the set delivered since the previous wait()
  /// returned (since make(), the first time) — at once if one already was; the lowest
  /// number when several were. Suspends the task, not the thread. Cancellation: a stop of
  /// the task's token ends it with std::errc::operation_canceled, and the set stays usable
  /// (a delivery is kept for the next wait). Errors: the signalfd read failed (its errno).
  task<result<int>> wait();

  /// How many deliveries of `sig` the process has read so far (all sets share the count).
  /// Any thread.
  static std::uint64_t delivered(int sig) noexcept;

 private:
  signal_set() = default;
  /// (signal, deliveries already reported to this set)
  std::vector<std::pair<int, std::uint64_t>> m_seen;
};

}  // namespace saturn::os

namespace saturn {

/// `co_await saturn::signal(SIGHUP)`: the next delivery of `sig` after this call (see
/// os::signal_set, whose make() errors it returns). Threading and cancellation: as
/// os::signal_set::wait().
task<result<int>> signal(int sig);

}  // namespace saturn
