// os::child: waiting for, signalling and letting go of a child known by its pidfd.
//
// wait() has two ways, chosen per call from the ring the task runs on:
//  * IORING_OP_WAITID (Linux 6.7+) with P_PIDFD: one ring operation that sleeps in the
//    kernel until the child exits and reaps it, filling a siginfo_t in the task's frame;
//  * else a one-shot ring poll on the pidfd (POLLIN once the child exited), then
//    waitid(P_PIDFD, WEXITED | WNOHANG) to reap it — looping if the reap finds nothing.
// Either way a cancelled wait leaves the child unreaped (the kernel cancels the WAITID
// before it reaps, or the poll before any waitid), and a status obtained is kept in the
// object, so a wait whose stop lost the race returns it next time.
#include <saturn/ext/submit.hpp>
#include <saturn/os/child.hpp>

#include <saturn/loop/event_loop.hpp>
#include <saturn/task/io.hpp>
#include <saturn/task/time.hpp>
#include <saturn/task/when_all.hpp>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <saturn/detail/atomic.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <system_error>
#include <tuple>

#include "os/orphans.hpp"
#include "os/pidfd.hpp"

namespace saturn::os {
namespace {

/// IORING_OP_WAITID of one pidfd, as an awaiter (the siginfo_t lives in the caller's frame).
struct waitid_awaiter : saturn::detail::io_awaiter<waitid_awaiter, void> {
  int m_pidfd;
  ::siginfo_t* m_info;
  waitid_awaiter(int pidfd, ::siginfo_t* info) : io_awaiter("wait"), m_pidfd(pidfd), m_info(info) {}
  void submit(event_loop& l) { ext::submit_waitid(l, this, P_PIDFD, m_pidfd, m_info, WEXITED); }
  result<void> value(int) const noexcept { return {}; }
};

exit_status status_of(const ::siginfo_t& si) noexcept {
  exit_status s;
  if (si.si_code == CLD_EXITED) {
    s.code = si.si_status;
  } else {
    s.signal = si.si_status;
    s.core_dumped = si.si_code == CLD_DUMPED;
  }
  return s;
}

error errno_now(const char* what) noexcept { return error{std::error_code(errno, std::system_category()), what}; }

// 0: not read yet, 1: automatic, 2: poll.
saturn::detail::atomic<int> g_mode{0};

bool force_poll() noexcept {
  int m = g_mode.load(std::memory_order_relaxed);
  if (m == 0) {
    const char* env = std::getenv("SATURN_CHILD_WAIT");
    m = env != nullptr && std::string_view(env) == "poll" ? 2 : 1;
    int expected = 0;
    g_mode.compare_exchange_strong(expected, m, std::memory_order_relaxed);
    m = g_mode.load(std::memory_order_relaxed);
  }
  return m == 2;
}

}  // namespace

namespace detail {
void set_child_wait_mode(child_wait_mode m) noexcept {
  g_mode.store(m == child_wait_mode::poll ? 2 : 1, std::memory_order_relaxed);
}
bool child_wait_uses_waitid() noexcept {
  event_loop* loop = event_loop::current();
  return loop != nullptr && !force_poll() && ext::supports_waitid(*loop);
}
}  // namespace detail

std::string exit_status::describe() const {
  if (signal == 0)
    return "exit code " + std::to_string(code);
  std::string s = "killed by signal " + std::to_string(signal);
  if (const char* name = ::sigdescr_np(signal))
    s += std::string(" (") + name + ")";
  if (core_dumped)
    s += ", core dumped";
  return s;
}

child::child(child&& o) noexcept
    : m_pid(o.m_pid),
      m_pidfd(o.m_pidfd),
      m_kill_on_destroy(o.m_kill_on_destroy),
      m_status(o.m_status),
      m_in(std::move(o.m_in)),
      m_out(std::move(o.m_out)),
      m_err(std::move(o.m_err)) {
  o.m_pid = -1;
  o.m_pidfd = -1;
}

child& child::operator=(child&& o) noexcept {
  if (this != &o) {
    release();
    m_pid = o.m_pid;
    m_pidfd = o.m_pidfd;
    m_kill_on_destroy = o.m_kill_on_destroy;
    m_status = o.m_status;
    m_in = std::move(o.m_in);
    m_out = std::move(o.m_out);
    m_err = std::move(o.m_err);
    o.m_pid = -1;
    o.m_pidfd = -1;
  }
  return *this;
}

child::~child() { release(); }

void child::release() noexcept {
  // The pipes first: a child blocked writing to a full stdout sees EPIPE and may exit.
  m_in = pipe_stream();
  m_out = pipe_stream();
  m_err = pipe_stream();
  if (m_pidfd < 0)
    return;
  if (m_status) {
    ::close(m_pidfd);
  } else {
    if (m_kill_on_destroy)
      detail::pidfd_send_signal(m_pidfd, SIGKILL);
    detail::adopt_orphan(m_pidfd);  // lifetime: the reaper owns the pidfd from here
  }
  m_pidfd = -1;
  m_pid = -1;
}

task<result<exit_status>> child::wait() {
  if (m_status)
    co_return *m_status;
  if (m_pidfd < 0)
    co_return error{std::make_error_code(std::errc::bad_file_descriptor), "wait"};
  detail::reap_orphans_if_any();
  ::siginfo_t si{};
  if (detail::child_wait_uses_waitid()) {
    waitid_awaiter w(m_pidfd, &si);
    auto r = co_await w;
    if (!r)
      co_return r.err();
  } else {
    for (;;) {
      auto p = saturn::poll(m_pidfd, POLLIN);
      auto ready = co_await p;
      if (!ready)
        co_return ready.err();
      si = {};
      if (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(m_pidfd), &si, WEXITED | WNOHANG) != 0)
        co_return errno_now("wait");
      if (si.si_pid != 0)
        break;
    }
  }
  m_status = status_of(si);
  co_return *m_status;
}

task<result<std::optional<exit_status>>> child::wait_for(std::chrono::nanoseconds timeout) {
  auto r = co_await with_timeout(timeout, wait());
  if (r)
    co_return std::optional<exit_status>(*r);
  if (r.err() == std::errc::timed_out)
    co_return std::optional<exit_status>();
  co_return r.err();
}

result<std::optional<exit_status>> child::try_wait() {
  if (m_status)
    return std::optional<exit_status>(*m_status);
  if (m_pidfd < 0)
    return error{std::make_error_code(std::errc::bad_file_descriptor), "wait"};
  ::siginfo_t si{};
  if (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(m_pidfd), &si, WEXITED | WNOHANG) != 0)
    return errno_now("wait");
  if (si.si_pid == 0)
    return std::optional<exit_status>();
  m_status = status_of(si);
  return std::optional<exit_status>(*m_status);
}

result<void> child::kill(int sig) noexcept {
  if (detail::pidfd_send_signal(m_pidfd, sig) != 0)
    return errno_now("kill");
  return {};
}

namespace {
task<result<std::string>> read_if_open(pipe_stream& s) {
  if (!s.is_open())
    co_return std::string();
  co_return co_await s.read_all();
}
}  // namespace

task<result<child_output>> child::wait_with_output() {
  m_in = pipe_stream();  // EOF for the child's input
  auto both = co_await when_all(read_if_open(m_out), read_if_open(m_err));
  result<std::string>& out = std::get<0>(both);
  result<std::string>& err = std::get<1>(both);
  if (!out)
    co_return out.err();
  if (!err)
    co_return err.err();
  auto st = co_await wait();
  if (!st)
    co_return st.err();
  child_output o;
  o.status = *st;
  o.out = std::move(*out);
  o.err = std::move(*err);
  co_return o;
}

}  // namespace saturn::os
