/// \file
/// `os::shutdown_signals`: SIGINT and SIGTERM as an event a task awaits, for a program's
/// graceful stop ("stop accepting, finish what is in flight, exit 0").
///
/// ```
/// auto sigs = saturn::os::shutdown_signals::install();   // before serving: from here on
/// if (!sigs) { log(sigs.err().message()); co_return; }    // the two signals no longer kill
/// auto r = co_await saturn::when_any(accept_loop(listener), sigs->wait());
/// // r.index() == 1: SIGINT or SIGTERM arrived, and accept_loop was cancelled
/// ```
///
/// How it works: while at least one shutdown_signals is alive, a handler for each of the
/// two signals records the first signal's number and writes a byte to a pipe (both
/// async-signal-safe); wait() reads that pipe through the ring, so no thread of saturn's
/// waits for signals and the workers' signal masks need no change. The event is a latch:
/// once a signal has arrived, every wait() — those pending and those started later, on
/// any object — completes, until the last object is destroyed, which restores the
/// handlers that were there before and forgets the signal (the pipe, two close-on-exec
/// descriptors, stays open for the life of the process). http::serve uses the same
/// objects, so a program that serves HTTP and awaits shutdown_signals itself sees one
/// signal stop both.
#pragma once

#include <saturn/result.hpp>
#include <saturn/task/task.hpp>

namespace saturn::os {

/// A share of the process's SIGINT/SIGTERM handlers (see the file comment). Move-only.
///
/// Threading: install() and the destructor may run on any thread (they take a
/// process-wide lock); the signals must not be blocked in every thread of the process
/// (a thread that has them unblocked runs the handler). wait() is awaited from a saturn
/// task on a thread with an event loop (a runtime, or a thread_pool in io mode); any
/// number of tasks may wait at once, on any workers. The object must outlive every
/// wait() on it.
class shutdown_signals {
 public:
  /// Installs the handlers for SIGINT and SIGTERM (replacing whatever was there, also
  /// SIG_IGN) if no other shutdown_signals is alive, else shares the ones installed.
  /// Never suspends. Errors: the pipe cannot be made ("shutdown_signals: pipe: ...").
  static result<shutdown_signals> install();

  shutdown_signals(shutdown_signals&& o) noexcept : m_live(o.m_live) { o.m_live = false; }
  shutdown_signals& operator=(shutdown_signals&& o) noexcept;
  shutdown_signals(const shutdown_signals&) = delete;
  shutdown_signals& operator=(const shutdown_signals&) = delete;
  /// The last live object restores the previous handlers and forgets a received signal.
  ~shutdown_signals();

  /// Completes once SIGINT or SIGTERM has arrived (at once if one already has since the
  /// handlers were installed), with that signal's number (the first one's, when several
  /// came). Suspends the task, not the thread. Cancellation: a stop of the task's token
  /// ends it with std::errc::operation_canceled (when_any does this to the loser).
  task<result<int>> wait() const;

  /// The number of the first SIGINT/SIGTERM received so far, or 0. Any thread; never
  /// blocks.
  int received() const noexcept;

 private:
  shutdown_signals() noexcept = default;
  bool m_live = false;
};

}  // namespace saturn::os
