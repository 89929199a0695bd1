/// \file
/// `os::command`: what to run as a child process — program, argv, environment, working
/// directory, stdio — and spawn() to start it (os::child, saturn/os/child.hpp).
///
/// ```
/// using saturn::os::stdio;
/// auto out = co_await saturn::os::command("ls").arg("-l").cwd("/tmp").output();
/// if (out && out->status.success()) print(out->out);
///
/// auto kid = saturn::os::command("/usr/bin/sort").std_in(stdio::pipe).std_out(stdio::pipe)
///                .env("LC_ALL", "C").spawn();
/// ```
///
/// Spawning is vfork-style: clone3 with CLONE_VM | CLONE_VFORK | CLONE_PIDFD |
/// CLONE_CLEAR_SIGHAND on x86-64 Linux 5.5+ (the calling thread waits the few
/// microseconds until the child has exec'd; an exec failure comes back as the error; the
/// pidfd comes with the pid), else posix_spawn (glibc's is vfork-style too) and then
/// pidfd_open. Only the child's own stdio ends reach it: every descriptor saturn
/// makes is close-on-exec, the pipes included. The child starts with an empty signal mask
/// and SIGPIPE at its default action, whatever the spawning thread had.
#pragma once

#include <saturn/os/child.hpp>
#include <saturn/result.hpp>
#include <saturn/task/task.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace saturn::os {

/// What a child's stdin, stdout or stderr is.
enum class stdio : std::uint8_t {
  inherit,  ///< the parent's own descriptor (the default)
  null,     ///< /dev/null
  pipe,     ///< a pipe whose other end is the child's pipe_stream (child::std_in() ...)
};

/// A description of a child process to start. A plain value (copyable); the builder
/// methods return *this for chaining.
///
/// Threading: a value; spawn() may be called from any thread (no event loop needed) and
/// blocks the calling thread only while the kernel starts the child (vfork-style: until
/// the exec). status() and output() are awaited from a saturn task on a thread with an
/// event loop, like child::wait().
class command {
 public:
  /// `program` is a path, or a name looked up in the parent's PATH when it has no '/'.
  /// It is also the child's argv[0].
  explicit command(std::string program) : m_program(std::move(program)) {}

  /// Appends one argument.
  command& arg(std::string a) {
    m_args.push_back(std::move(a));
    return *this;
  }
  /// Appends several arguments.
  command& args(std::initializer_list<std::string_view> as) {
    for (std::string_view a : as)
      m_args.emplace_back(a);
    return *this;
  }
  /// Sets `key=value` in the child's environment (which otherwise is the parent's).
  command& env(std::string key, std::string value) {
    m_env.emplace_back(std::move(key), std::optional<std::string>(std::move(value)));
    return *this;
  }
  /// Removes `key` from the child's environment.
  command& env_remove(std::string key) {
    m_env.emplace_back(std::move(key), std::nullopt);
    return *this;
  }
  /// Starts the child's environment empty instead of from the parent's (env() still adds).
  command& env_clear() {
    m_env_clear = true;
    m_env.clear();
    return *this;
  }
  /// The child's working directory (default: the parent's).
  command& cwd(std::string dir) {
    m_cwd = std::move(dir);
    return *this;
  }
  /// What the child's stdin / stdout / stderr is (default stdio::inherit).
  command& std_in(stdio s) {
    m_stdio[0] = s;
    return *this;
  }
  command& std_out(stdio s) {
    m_stdio[1] = s;
    return *this;
  }
  command& std_err(stdio s) {
    m_stdio[2] = s;
    return *this;
  }
  /// Whether a child destroyed before it was reaped gets SIGKILL (default false: it runs
  /// on, and is reaped when it exits; see child).
  command& kill_on_destroy(bool on = true) {
    m_kill_on_destroy = on;
    return *this;
  }

  /// Starts the child. Errors name what failed and the program: "spawn /no/such: No such
  /// file or directory" (also for a missing working directory, then "spawn prog (cwd
  /// DIR)"), "spawn: pipe: Too many open files", "spawn prog: pidfd_open: ...". Reaps
  /// exited orphans first. Any thread; does not suspend.
  result<child> spawn() const;
  /// Spawns (stdio as set) and waits: the exit status. Tokio's Command::status. A stop
  /// of the task's token ends it with operation_canceled and lets the child go as
  /// child's destructor does (killed only with kill_on_destroy, never left a zombie).
  task<result<exit_status>> status() const;
  /// Spawns with stdout and stderr as pipes (stdin as set, but stdio::inherit becomes
  /// stdio::null) and collects everything: child::wait_with_output().
  task<result<child_output>> output() const;

 private:
  std::string m_program;
  std::vector<std::string> m_args;
  std::vector<std::pair<std::string, std::optional<std::string>>> m_env;  // in call order
  std::optional<std::string> m_cwd;
  stdio m_stdio[3] = {stdio::inherit, stdio::inherit, stdio::inherit};
  bool m_env_clear = false;
  bool m_kill_on_destroy = false;
};

namespace detail {
/// How command::spawn() starts a child. automatic: clone3 where the architecture has
/// saturn's trampoline (x86-64) and the kernel takes it (it falls back for good, at the
/// first refusal: ENOSYS, EINVAL or EPERM), else posix_spawn; `SATURN_SPAWN=posix_spawn`
/// in the environment (read at the first spawn) selects posix_spawn. For tests and
/// benchmarks of the fallback path. Any thread.
enum class spawn_mode : int { automatic, posix_spawn };
void set_spawn_mode(spawn_mode m) noexcept;
/// Whether the next spawn() will try clone3. Any thread.
bool spawn_uses_clone3() noexcept;
}  // namespace detail

}  // namespace saturn::os
