// os::command::spawn: clone3(CLONE_VM | CLONE_VFORK | CLONE_PIDFD | CLONE_CLEAR_SIGHAND)
// and exec, with posix_spawn + pidfd_open as the fallback.
//
// Why clone3 this way (the way Go's os/exec and glibc's posix_spawn start a child, minus
// glibc's per-spawn costs):
//  * CLONE_VM | CLONE_VFORK: the child runs in the parent's memory until its exec (no
//    page tables copied, so the cost does not grow with the parent's memory); the calling
//    thread sleeps until then. The child runs on a small stack in spawn()'s own frame (the
//    frame is idle while the thread sleeps), so nothing is mapped or unmapped per spawn —
//    glibc's posix_spawn mmaps and munmaps a stack for every child, and the munmap of a
//    multi-threaded process interrupts the CPUs its other threads run on.
//  * CLONE_CLEAR_SIGHAND (Linux 5.5): the kernel gives the child every caught signal at
//    SIG_DFL, so no handler of the parent can run in the child's shared memory. glibc has
//    to block every signal around the clone and then ask for and reset each of the 64
//    dispositions in the child, one system call each; here the child makes two (SIGPIPE to
//    SIG_DFL, the empty mask).
//  * CLONE_PIDFD: the pidfd comes with the pid; no pidfd_open afterwards.
//  * An exec failure is written by the child into the parent's frame (shared memory)
//    before it exits with 127; the parent, woken when the child exits, reaps it and
//    returns the error.
// The child calls no library function: raw system calls only (no errno, no PLT binding,
// no sanitizer instrumentation), prepared entirely by the parent.
//
// Fallback: where clone3 is missing (Linux < 5.3, or refused by a seccomp policy as
// Docker's default does with ENOSYS) or rejects CLONE_CLEAR_SIGHAND (< 5.5), and on
// architectures without the trampoline below (everything but x86-64), posix_spawn:
// glibc's is clone(CLONE_VM | CLONE_VFORK) + exec too, it reports an exec failure as its
// return value, and posix_spawn_file_actions_addchdir_np gives the working directory;
// the pidfd is opened just after, which is safe because nothing else reaps our children
// (see the pid-reuse note on os::child): the child, even if it has already exited, holds
// its pid as a zombie until saturn's own waitid.
//
// Descriptors: every pipe is made O_CLOEXEC, so a child spawned concurrently on another
// thread inherits none of them; this child gets its ends through dup3 / dup2 file actions
// (which clear close-on-exec on the target). Child ends are moved to descriptors >= 3
// first, so no dup onto 0..2 can overwrite another child end when the parent itself
// runs with a standard descriptor closed. /dev/null for stdio::null is opened by the
// parent the same way.
#include <saturn/os/command.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <saturn/detail/atomic.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
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

// The clone3 trampoline (x86-64): clone3(args, size); in the child, which starts on the
// stack args names, call fn(arg) and exit_group with its result; in the parent return
// clone3's result (the child's pid or -errno). A C function cannot do this: the child
// would return through a frame that is not on its stack.
#if defined(__x86_64__) && defined(__linux__)
#define SATURN_OS_CLONE3 1
extern "C" long saturn_os_clone3_run(void* args, unsigned long size, int (*fn)(void*), void* arg) noexcept;
asm(R"(
	.text
	.globl saturn_os_clone3_run
	.hidden saturn_os_clone3_run
	.type saturn_os_clone3_run, @function
	.p2align 4
saturn_os_clone3_run:
	.cfi_startproc
	endbr64
	movq %rdx, %r8
	movq %rcx, %r9
	movl $435, %eax
	syscall
	testq %rax, %rax
	jnz 1f
	xorl %ebp, %ebp
	movq %r9, %rdi
	callq *%r8
	movl %eax, %edi
	movl $231, %eax
	syscall
	hlt
1:
	ret
	.cfi_endproc
	.size saturn_os_clone3_run, .-saturn_os_clone3_run
)");
#else
#define SATURN_OS_CLONE3 0
#endif

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

/// Moves `g.fd` to a descriptor >= 3, close-on-exec kept (see the file comment): 0 or errno.
int move_above_stdio(fd_guard& g) {
  if (g.fd >= 3)
    return 0;
  const int moved = ::fcntl(g.fd, F_DUPFD_CLOEXEC, 3);
  if (moved < 0)
    return errno;
  ::close(g.fd);
  g.fd = moved;
  return 0;
}

/// A close-on-exec pipe whose `child_side` end is >= 3 (see the file comment).
int make_pipe(fd_guard& parent, fd_guard& child, bool child_reads) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return errno;
  parent.fd = child_reads ? fds[1] : fds[0];
  child.fd = child_reads ? fds[0] : fds[1];
  return move_above_stdio(child);
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

// How spawn() starts a child: 0 not decided yet, 1 clone3, 2 posix_spawn (forced, or
// clone3 refused once).
saturn::detail::atomic<int> g_spawn{0};

bool use_clone3() noexcept {
#if SATURN_OS_CLONE3
  int m = g_spawn.load(std::memory_order_relaxed);
  if (m == 0) {
    const char* env = std::getenv("SATURN_SPAWN");
    m = env != nullptr && std::string_view(env) == "posix_spawn" ? 2 : 1;
    int expected = 0;
    g_spawn.compare_exchange_strong(expected, m, std::memory_order_relaxed);
    m = g_spawn.load(std::memory_order_relaxed);
  }
  return m == 1;
#else
  return false;
#endif
}

/// The execve candidates for `program`, as posix_spawnp / execvpe try them: the program
/// itself when it has a '/', else "DIR/program" for every element of the parent's PATH
/// (default "/bin:/usr/bin"; an empty element is the working directory).
std::vector<std::string> exec_candidates(const std::string& program) {
  std::vector<std::string> out;
  if (program.find('/') != std::string::npos) {
    out.push_back(program);
    return out;
  }
  if (program.empty())
    return out;
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "/bin:/usr/bin";
  for (;;) {
    const std::size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    std::string& c = out.emplace_back(dir);
    if (!dir.empty())
      c += '/';
    c += program;
    if (colon == std::string_view::npos)
      break;
    rest.remove_prefix(colon + 1);
  }
  return out;
}

#if SATURN_OS_CLONE3

/// Everything the clone3 child reads, prepared by the parent, and the errno it reports.
struct clone_plan {
  const char* const* paths = nullptr;  // execve candidates, null-terminated
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* cwd = nullptr;          // chdir first when set
  int stdio_from[3] = {-1, -1, -1};   // dup3'd onto 0, 1, 2; -1: inherited
  int err = 0;                        // written by the child when a step fails
};

// The child side runs in the parent's memory on a borrowed stack: nothing of it may be
// instrumented, nor call into a library.
#define SATURN_CHILD_SIDE [[gnu::no_sanitize("address", "undefined", "thread")]]

SATURN_CHILD_SIDE [[gnu::always_inline]] inline long raw_syscall(long n, long a = 0, long b = 0, long c = 0,
                                                                  long d = 0) noexcept {
  long ret;
  register long r10 asm("r10") = d;
  asm volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
  return ret;
}

/// The kernel's struct sigaction (x86-64).
struct kernel_sigaction {
  void* handler;
  unsigned long flags;
  void* restorer;
  std::uint64_t mask;
};

/// The child, between clone3 and exec: SIGPIPE at SIG_DFL (CLONE_CLEAR_SIGHAND reset the
/// caught signals, not the ignored ones), no signal blocked, its stdio, its working
/// directory, then each execve candidate in turn with execvpe's rules (EACCES is kept
/// and the search goes on; ENOENT and its kind go on; anything else stops). Returns the
/// exit code of a child that could not exec; the errno is in plan->err.
SATURN_CHILD_SIDE int clone_child(void* p) noexcept {
  auto* plan = static_cast<clone_plan*>(p);
  kernel_sigaction dfl{};
  long r = raw_syscall(SYS_rt_sigaction, SIGPIPE, reinterpret_cast<long>(&dfl), 0, sizeof(std::uint64_t));
  if (r >= 0) {
    const std::uint64_t none = 0;
    r = raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&none), 0, sizeof none);
  }
  for (int i = 0; r >= 0 && i < 3; ++i)
    if (plan->stdio_from[i] >= 0)
      r = raw_syscall(SYS_dup3, plan->stdio_from[i], i, 0);
  if (r >= 0 && plan->cwd != nullptr)
    r = raw_syscall(SYS_chdir, reinterpret_cast<long>(plan->cwd));
  if (r >= 0) {
    bool eacces = false;
    r = -ENOENT;
    for (const char* const* path = plan->paths; *path != nullptr; ++path) {
      r = raw_syscall(SYS_execve, reinterpret_cast<long>(*path), reinterpret_cast<long>(plan->argv),
                      reinterpret_cast<long>(plan->envp));
      if (r == -EACCES) {
        eacces = true;
        continue;
      }
      if (r == -ENOENT || r == -ENOTDIR || r == -ENOEXEC || r == -ESTALE || r == -ENODEV || r == -ETIMEDOUT)
        continue;
      break;
    }
    if (eacces && (r == -ENOENT || r == -ENOTDIR || r == -ENOEXEC || r == -ESTALE || r == -ENODEV ||
                   r == -ETIMEDOUT))
      r = -EACCES;
  }
  plan->err = static_cast<int>(-r);
  return 127;
}

/// clone3's struct clone_args, version 0 (64 bytes, Linux 5.3).
struct clone_args_v0 {
  std::uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

constexpr std::uint64_t clear_sighand = 0x100000000ULL;  // CLONE_CLEAR_SIGHAND, Linux 5.5
constexpr std::uint64_t pidfd_flag = 0x1000;             // CLONE_PIDFD, Linux 5.2

/// Starts the child: its pid (pidfd set), or -errno from clone3. Returns once the child
/// has exec'd or exited (CLONE_VFORK); plan.err then says which.
[[gnu::noinline]] long clone3_spawn(clone_plan& plan, int& pidfd) noexcept {
  // The child's stack: this frame sleeps while the child runs. The child side needs a
  // few hundred bytes; 8 KiB leaves a wide margin.
  alignas(64) unsigned char stack[8192];
  clone_args_v0 args{};
  args.flags = CLONE_VM | CLONE_VFORK | pidfd_flag | clear_sighand;
  args.pidfd = reinterpret_cast<std::uint64_t>(&pidfd);
  args.exit_signal = SIGCHLD;
  args.stack = reinterpret_cast<std::uint64_t>(stack);
  args.stack_size = sizeof stack;
  return saturn_os_clone3_run(&args, sizeof args, &clone_child, &plan);
}

#endif  // SATURN_OS_CLONE3

}  // namespace

namespace detail {
void set_spawn_mode(spawn_mode m) noexcept {
  g_spawn.store(m == spawn_mode::posix_spawn ? 2 : 1, std::memory_order_relaxed);
}
bool spawn_uses_clone3() noexcept { return use_clone3(); }
}  // namespace detail

result<child> command::spawn() const {
  detail::reap_orphans_if_any();
  std::string what = "spawn " + m_program;
  if (m_cwd)
    what += " (cwd " + *m_cwd + ")";

  // The child's stdio ends (>= 3, close-on-exec) and the parent's pipe ends.
  fd_guard parent_end[3], child_end[3], null_in, null_out;
  for (int i = 0; i < 3; ++i) {
    if (m_stdio[i] == stdio::pipe) {
      if (int e = make_pipe(parent_end[i], child_end[i], i == 0); e != 0)
        return spawn_error(e, "spawn: pipe");
    } else if (m_stdio[i] == stdio::null) {
      fd_guard& null = i == 0 ? null_in : null_out;
      if (null.fd < 0) {
        null.fd = ::open("/dev/null", (i == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
        if (null.fd < 0)
          return spawn_error(errno, "spawn: open /dev/null");
        if (int e = move_above_stdio(null); e != 0)
          return spawn_error(e, "spawn: open /dev/null");
      }
    }
  }
  int stdio_from[3];
  for (int i = 0; i < 3; ++i)
    stdio_from[i] = m_stdio[i] == stdio::pipe   ? child_end[i].fd
                    : m_stdio[i] == stdio::null ? (i == 0 ? null_in.fd : null_out.fd)
                                                : -1;

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
  int pidfd = -1;
#if SATURN_OS_CLONE3
  if (use_clone3()) {
    const std::vector<std::string> candidates = exec_candidates(m_program);
    std::vector<const char*> paths;
    paths.reserve(candidates.size() + 1);
    for (const std::string& c : candidates)
      paths.push_back(c.c_str());
    paths.push_back(nullptr);
    clone_plan plan;
    plan.paths = paths.data();
    plan.argv = argv.data();
    plan.envp = env;
    plan.cwd = m_cwd ? m_cwd->c_str() : nullptr;
    for (int i = 0; i < 3; ++i)
      plan.stdio_from[i] = stdio_from[i];
    const long r = clone3_spawn(plan, pidfd);
    if (r < 0 && r != -ENOSYS && r != -EINVAL && r != -EPERM)
      return spawn_error(static_cast<int>(-r), what);
    if (r < 0) {
      // No clone3, or one without CLONE_CLEAR_SIGHAND, or a seccomp policy against it:
      // posix_spawn from now on (below).
      g_spawn.store(2, std::memory_order_relaxed);
    } else if (plan.err != 0) {
      // The child could not exec and has exited 127: reap it (it is ours, unreaped, so
      // this cannot wait for another process) and report what failed.
      ::siginfo_t si{};
      while (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd), &si, WEXITED) != 0 &&
             errno == EINTR) {
      }
      ::close(pidfd);
      return spawn_error(plan.err, what);
    } else {
      pid = static_cast<pid_t>(r);
    }
  }
#endif
  if (pid < 0) {
    spawn_attrs sa;
    for (int i = 0; i < 3; ++i)
      if (stdio_from[i] >= 0)
        posix_spawn_file_actions_adddup2(&sa.actions, stdio_from[i], i);
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
    const bool search = m_program.find('/') == std::string::npos;
    const int err = search ? ::posix_spawnp(&pid, m_program.c_str(), &sa.actions, &sa.attr, argv.data(), env)
                           : ::posix_spawn(&pid, m_program.c_str(), &sa.actions, &sa.attr, argv.data(), env);
    if (err != 0)
      return spawn_error(err, what);
    pidfd = detail::pidfd_open(pid);
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
  }
  child c(pid, pidfd, m_kill_on_destroy);
  c.m_in = pipe_stream(parent_end[0].fd);
  c.m_out = pipe_stream(parent_end[1].fd);
  c.m_err = pipe_stream(parent_end[2].fd);
  for (fd_guard& g : parent_end)
    g.fd = -1;  // lifetime: now owned by the child's streams
  return c;     // child_end[] and /dev/null close here: the parent keeps none of them
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
