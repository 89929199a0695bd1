// os::command::spawn: posix_spawn, then pidfd_open.
//
// Why posix_spawn: glibc's is clone(CLONE_VM | CLONE_VFORK) + exec, so its cost does not
// grow with the parent's memory (no page tables to copy), it reports an exec failure as
// its return value, and posix_spawn_file_actions_addchdir_np gives the working directory.
// clone3(CLONE_PIDFD) would return the pidfd with the pid; with posix_spawn the pidfd is
// opened just after, which is safe because nothing else reaps our children (see the
// pid-reuse note on os::child): the child, even if it has already exited, holds its pid
// as a zombie until saturn's own waitid.
//
// Descriptors: every pipe is made O_CLOEXEC, so a child spawned concurrently on another
// thread inherits none of them; this child gets its ends through dup2 file actions
// (which clear close-on-exec on the target). Child ends are moved to descriptors >= 3
// first, so no dup2 onto 0..2 can overwrite another child end when the parent itself
// runs with a standard descriptor closed.
#include <saturn/os/command.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "os/orphans.hpp"
#include "os/pidfd.hpp"

extern char** environ;

namespace saturn::os {
namespace {

/// A stable C string for an error's operation ("spawn /no/such"). The set is capped, so
/// a program that fails to spawn ever new names does not grow it without bound.
const char* intern(std::string s) {
  static std::mutex mu;
  static std::set<std::string> strings;
  std::lock_guard lock(mu);
  if (strings.size() >= 1024) {
    auto it = strings.find(s);
    return it != strings.end() ? it->c_str() : "spawn";
  }
  return strings.insert(std::move(s)).first->c_str();
}

error spawn_error(int err, const std::string& what) {
  return error{std::error_code(err, std::system_category()), intern(what)};
}

/// Owns descriptors until the spawn has happened.
struct fd_guard {
  int fd = -1;
  ~fd_guard() {
    if (fd >= 0)
      ::close(fd);
  }
};

/// A close-on-exec pipe whose `child_side` end is >= 3 (see the file comment).
int make_pipe(fd_guard& parent, fd_guard& child, bool child_reads) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return errno;
  parent.fd = child_reads ? fds[1] : fds[0];
  child.fd = child_reads ? fds[0] : fds[1];
  if (child.fd < 3) {
    const int moved = ::fcntl(child.fd, F_DUPFD_CLOEXEC, 3);
    if (moved < 0)
      return errno;
    ::close(child.fd);
    child.fd = moved;
  }
  return 0;
}

struct spawn_attrs {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  spawn_attrs() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~spawn_attrs() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  spawn_attrs(const spawn_attrs&) = delete;
  spawn_attrs& operator=(const spawn_attrs&) = delete;
};

/// The child's environment, "K=V" strings: the parent's (unless cleared) with the
/// command's changes applied in order.
std::vector<std::string> build_env(bool clear, const auto& changes) {
  std::vector<std::string> env;
  if (!clear)
    for (char** e = environ; *e != nullptr; ++e)
      env.emplace_back(*e);
  for (const auto& [key, value] : changes) {
    std::erase_if(env, [&](const std::string& kv) {
      return kv.size() > key.size() && kv[key.size()] == '=' && std::string_view(kv).starts_with(key);
    });
    if (value)
      env.push_back(key + "=" + *value);
  }
  return env;
}

}  // namespace

result<child> command::spawn() const {
  detail::reap_orphans_if_any();
  std::string what = "spawn " + m_program;
  if (m_cwd)
    what += " (cwd " + *m_cwd + ")";

  fd_guard parent_end[3], child_end[3];
  spawn_attrs sa;
  static const char* const null_path = "/dev/null";
  for (int i = 0; i < 3; ++i) {
    if (m_stdio[i] == stdio::pipe) {
      if (int e = make_pipe(parent_end[i], child_end[i], i == 0); e != 0)
        return spawn_error(e, "spawn: pipe");
      posix_spawn_file_actions_adddup2(&sa.actions, child_end[i].fd, i);
    } else if (m_stdio[i] == stdio::null) {
      posix_spawn_file_actions_addopen(&sa.actions, i, null_path, i == 0 ? O_RDONLY : O_WRONLY, 0);
    }
  }
  if (m_cwd)
    posix_spawn_file_actions_addchdir_np(&sa.actions, m_cwd->c_str());
  // The child starts with no signal blocked and SIGPIPE at its default action, whatever
  // this thread blocks or the program ignores (a server ignoring SIGPIPE is common).
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&sa.attr, &none);
  posix_spawnattr_setsigdefault(&sa.attr, &defaults);
  posix_spawnattr_setflags(&sa.attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> argv;
  argv.reserve(m_args.size() + 2);
  argv.push_back(const_cast<char*>(m_program.c_str()));
  for (const std::string& a : m_args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  std::vector<char*> envp;
  char** env = environ;
  if (m_env_clear || !m_env.empty()) {
    env_strings = build_env(m_env_clear, m_env);
    envp.reserve(env_strings.size() + 1);
    for (std::string& kv : env_strings)
      envp.push_back(kv.data());
    envp.push_back(nullptr);
    env = envp.data();
  }

  pid_t pid = -1;
  const bool search = m_program.find('/') == std::string::npos;
  const int err = search ? ::posix_spawnp(&pid, m_program.c_str(), &sa.actions, &sa.attr, argv.data(), env)
                         : ::posix_spawn(&pid, m_program.c_str(), &sa.actions, &sa.attr, argv.data(), env);
  if (err != 0)
    return spawn_error(err, what);

  const int pidfd = detail::pidfd_open(pid);
  if (pidfd < 0) {
    // ESRCH: the child has exited and was reaped already, which only SIGCHLD set to
    // SIG_IGN (or a wait(-1) elsewhere) does; the pid may belong to another process now,
    // so it is left alone. Otherwise (EMFILE...) do not leave the child running unseen,
    // nor a zombie: the pid is still ours (unreaped), so this kill and wait cannot hit
    // another process.
    const int e = errno;
    if (e != ESRCH) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    return spawn_error(e, what + ": pidfd_open");
  }
  child c(pid, pidfd, m_kill_on_destroy);
  c.m_in = pipe_stream(parent_end[0].fd);
  c.m_out = pipe_stream(parent_end[1].fd);
  c.m_err = pipe_stream(parent_end[2].fd);
  for (fd_guard& g : parent_end)
    g.fd = -1;  // lifetime: now owned by the child's streams
  return c;     // child_end[] close here: the parent keeps no child end open
}

task<result<exit_status>> command::status() const {
  auto c = spawn();
  if (!c)
    co_return c.err();
  co_return co_await c->wait();
}

task<result<child_output>> command::output() const {
  command cmd = *this;
  if (cmd.m_stdio[0] == stdio::inherit)
    cmd.m_stdio[0] = stdio::null;
  cmd.m_stdio[1] = stdio::pipe;
  cmd.m_stdio[2] = stdio::pipe;
  auto c = cmd.spawn();
  if (!c)
    co_return c.err();
  co_return co_await c->wait_with_output();
}

}  // namespace saturn::os
