/// \file
/// The debug dump an operator asks a running service for: every spawned task alive
/// (saturn/sched/task_dump.hpp) and the process layer's counts, as text. Served on
/// `/debug/tasks` (http::add_debug_routes) and written to stderr on a signal
/// (signal_dumper: `saturn-http --dump-on-sigusr1`, `kill -USR1 <pid>`).
///
/// ```cpp
/// int main() {
///   saturn::metrics::signal_dumper dumper;  // before any pool: the workers inherit the mask
///   saturn::thread_pool pool;
///   // ... kill -USR1 <pid> writes the dump to stderr ...
///   return 0;
/// }
/// ```
#pragma once

#include <saturn/sched/task_dump.hpp>

#include <csignal>
#include <memory>
#include <string>

namespace saturn::metrics {

/// The dump as text: render_task_dump(dump_tasks(opts)) (a process body's line carries
/// its pid, mailbox depth, links and monitors), a line with the processes alive, and a
/// line per registered name ("registered <3.1> logger"). Threading: any thread, best not a worker (see dump_tasks); blocks while the
/// dump is taken (it pauses each pool's workers for at most one batch at a time).
std::string render_debug_dump(const task_dump_options& opts = {});

/// While it lives, each delivery of `sig` to the process writes render_debug_dump() to
/// stderr, from a thread of its own (never a worker). The constructor blocks `sig` in the
/// calling thread, so build it in main() before any pool or runtime starts: the threads
/// they create inherit the mask and the signal reaches only this dumper. Threading:
/// construct and destroy on one thread; the destructor stops its thread (within 100 ms).
class signal_dumper {
 public:
  explicit signal_dumper(int sig = SIGUSR1);
  ~signal_dumper();
  signal_dumper(const signal_dumper&) = delete;
  signal_dumper& operator=(const signal_dumper&) = delete;

  /// Dumps written so far. Any thread.
  unsigned long dumps() const noexcept;

 private:
  struct state;
  std::unique_ptr<state> m_state;
};

}  // namespace saturn::metrics
