/// \file
/// `os::child`: a running (or finished) child process, made by os::command::spawn()
/// (saturn/os/command.hpp): its stdio pipes, wait() for its exit through the ring,
/// kill(), and the promise that no child saturn spawned is ever left a zombie.
///
/// ```
/// auto kid = saturn::os::command("/bin/sh").arg("-c").arg("exit 3").spawn();
/// if (!kid) co_return kid.err();                      // "spawn /bin/sh: ..."
/// auto st = co_await kid->wait();                      // suspends the task, not the worker
/// if (st && st->exited()) use(st->code);               // 3
/// ```
///
/// The child is known by a pidfd (clone3 returns it with the pid; after the posix_spawn
/// fallback it is opened right after the spawn). Its exit is awaited with
/// IORING_OP_WAITID on the pidfd where the kernel has it (Linux 6.7+: one ring operation
/// that also reaps), else with a ring poll on the pidfd (readable once the child exited)
/// followed by waitid(P_PIDFD, WNOHANG). No thread of saturn waits, and no SIGCHLD
/// handler is installed.
#pragma once

#include <saturn/os/pipe_stream.hpp>
#include <saturn/result.hpp>
#include <saturn/task/task.hpp>

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

namespace saturn::os {

/// How a child ended: an exit code, or the signal that killed it. A plain value.
struct exit_status {
  int code = 0;              ///< the exit code (0..255) when exited(), else 0
  int signal = 0;            ///< the terminating signal when killed, else 0
  bool core_dumped = false;  ///< the signal dumped core

  /// The child called exit (or returned from main).
  bool exited() const noexcept { return signal == 0; }
  /// It exited with code 0.
  bool success() const noexcept { return signal == 0 && code == 0; }
  /// "exit code 3" or "killed by signal 9 (Killed)".
  std::string describe() const;
  friend bool operator==(const exit_status&, const exit_status&) = default;
};

/// What child::wait_with_output() and command::output() collect.
struct child_output {
  exit_status status;
  std::string out;  ///< everything the child wrote to stdout (empty if it was not a pipe)
  std::string err;  ///< everything it wrote to stderr (empty if it was not a pipe)
};

/// A child process. Move-only; made by command::spawn().
///
/// Threading: owned by one task at a time. wait(), wait_for() and wait_with_output() are
/// awaited from a saturn task on a thread with an event loop (a runtime or a thread_pool
/// worker, any one: not necessarily the spawning thread); at most one of them at a time,
/// and the child must not be moved or destroyed while one is pending. kill() and pid()
/// may be called from any thread, also while a wait is pending (the pidfd stays open
/// until the destructor). try_wait() must not race a pending wait.
///
/// Cancellation: a stop of the awaiting task's token (with_timeout, when_any, a task
/// group) ends a pending wait() with std::errc::operation_canceled and leaves the child
/// unreaped and waitable again; a stop that loses the race to the exit still records the
/// status, which the next wait() returns at once.
///
/// Destruction without a wait never leaves a zombie: with kill_on_destroy the child gets
/// SIGKILL first; a child that has not exited yet is handed to the orphan reaper (see
/// reap_orphans()), which reaps it when it exits — through a ring poll on the pidfd when
/// the destructor runs on a thread with an event loop, else at the next spawn, wait or
/// reap_orphans() call.
///
/// Pids: saturn never calls wait(-1), so a child stays a zombie (holding its pid) until
/// saturn reaps it, and the pid cannot be reused while the pidfd is being opened. A
/// program that sets SIGCHLD to SIG_IGN (or SA_NOCLDWAIT), or a library in it that reaps
/// every child with wait(-1), breaks that: the kernel or that library reaps the child,
/// wait() then fails with ECHILD ("wait: No child processes") and the exit status is lost.
class child {
 public:
  child(child&& o) noexcept;
  child& operator=(child&& o) noexcept;
  child(const child&) = delete;
  child& operator=(const child&) = delete;
  /// Closes the pipes; an unreaped child is killed (kill_on_destroy) and/or left to the
  /// orphan reaper. Never blocks. Any thread.
  ~child();

  /// The child's pid (for logs and /proc; saturn itself uses the pidfd). -1 once moved from.
  pid_t pid() const noexcept { return m_pid; }
  /// The pidfd (owned by the child object), -1 once moved from.
  int pidfd() const noexcept { return m_pidfd; }

  /// The parent's ends of the stdio pipes (empty streams for stdio that was not a pipe).
  /// std_in() is written, std_out()/std_err() read. The streams may be moved out.
  pipe_stream& std_in() noexcept { return m_in; }
  pipe_stream& std_out() noexcept { return m_out; }
  pipe_stream& std_err() noexcept { return m_err; }

  /// Waits for the child to exit and reaps it: its status (at once, if it was reaped
  /// already). Suspends the task, not the thread. Errors name "wait" (ECHILD: the child
  /// was reaped by someone else, see the class comment); cancellation as above. Does not
  /// close stdin: a child that reads it to EOF needs std_in().close() first.
  task<result<exit_status>> wait();
  /// wait() with a deadline: the status, or an empty optional when `timeout` passed first
  /// (the child is then still running and waitable; kill() it or wait again).
  task<result<std::optional<exit_status>>> wait_for(std::chrono::nanoseconds timeout);
  /// Reaps the child if it has exited (waitid WNOHANG): its status, or an empty optional
  /// while it runs. Never blocks. Errors name "wait".
  result<std::optional<exit_status>> try_wait();
  /// Sends `sig` to the child (pidfd_send_signal: never another process that reused the
  /// pid). Success also for a child that has exited but is not reaped yet; ESRCH ("kill:
  /// No such process") once it was reaped. Any thread; never blocks.
  result<void> kill(int sig = SIGKILL) noexcept;
  /// Closes stdin, reads stdout and stderr to EOF concurrently (whichever are pipes) and
  /// waits: everything the child wrote plus its status. Errors name what failed first.
  task<result<child_output>> wait_with_output();

  /// Whether the destructor sends SIGKILL to a child that was not reaped (default: the
  /// command's kill_on_destroy setting).
  void set_kill_on_destroy(bool on) noexcept { m_kill_on_destroy = on; }

 private:
  friend class command;
  child(pid_t pid, int pidfd, bool kill_on_destroy) noexcept
      : m_pid(pid), m_pidfd(pidfd), m_kill_on_destroy(kill_on_destroy) {}
  void release() noexcept;

  pid_t m_pid = -1;
  int m_pidfd = -1;
  bool m_kill_on_destroy = false;
  std::optional<exit_status> m_status;
  pipe_stream m_in, m_out, m_err;
};

/// Reaps every orphan on the process-wide list (children destroyed before they were
/// reaped, on a thread without an event loop or whose loop went away) that has exited,
/// without blocking, and returns how many on it still run. Orphans watched by a ring poll
/// are reaped by it and not counted. saturn sweeps the list at every spawn and wait; a
/// program may call this too (e.g. before it exits). Any thread.
std::size_t reap_orphans() noexcept;

namespace detail {
/// How child::wait() waits. automatic: IORING_OP_WAITID where the ring has it, else poll;
/// `SATURN_CHILD_WAIT=poll` in the environment (read at the first wait) selects poll.
/// For tests and benchmarks of the fallback path. Any thread.
enum class child_wait_mode : int { automatic, poll };
void set_child_wait_mode(child_wait_mode m) noexcept;
/// Whether a wait() on this thread's loop would use IORING_OP_WAITID. Loop thread only.
bool child_wait_uses_waitid() noexcept;
}  // namespace detail

}  // namespace saturn::os
