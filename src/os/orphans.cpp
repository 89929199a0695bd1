// Orphans: children whose os::child was destroyed before they were reaped. A destructor
// must not wait (a worker would block for as long as the child runs), and must not leave
// a zombie, so the pidfd is handed on to one of two places:
//
//  * a ring poll (POLLIN on the pidfd, readable once the child exited) on the destroying
//    thread's loop, when it has one: the orphan is reaped as soon as it exits, without
//    waiting for some later spawn. The poll is a heap operation owned by the ring until
//    its CQE. A CQE that does not let the reap succeed (the loop shutting down cancels
//    it: -ECANCELED) moves the pidfd to the list below.
//  * a process-wide list, swept with waitid(P_PIDFD, WNOHANG) at every spawn and every
//    wait (as Tokio sweeps its orphan queue) and by reap_orphans(). Threads without a
//    loop, and loops that went away, leave their orphans here.
//
// A swept or polled orphan that is reaped has its pidfd closed. ECHILD (someone else
// reaped it: SIGCHLD ignored, a wait(-1) elsewhere) also ends it: there is no zombie.
#include "os/orphans.hpp"

#include <saturn/ext/submit.hpp>
#include <saturn/loop/event_loop.hpp>
#include <saturn/os/child.hpp>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <saturn/detail/atomic.hpp>
#include <cerrno>
#include <mutex>
#include <new>
#include <vector>

namespace saturn::os {
namespace {

std::mutex g_mutex;         // guards g_orphans
std::vector<int> g_orphans;  // pidfds of unreaped children nobody waits for
// ordering: relaxed; a sweep that misses an orphan added concurrently finds it next time.
saturn::detail::atomic<std::size_t> g_count{0};

/// Reaps the child if it has exited (or is gone); closes the pidfd then. True when done.
bool try_reap(int pidfd) noexcept {
  ::siginfo_t si{};
  const int r = ::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd), &si, WEXITED | WNOHANG);
  if ((r == 0 && si.si_pid != 0) || (r != 0 && errno == ECHILD)) {
    ::close(pidfd);
    return true;
  }
  return false;
}

void push(int pidfd) noexcept {
  std::lock_guard lock(g_mutex);
  g_orphans.push_back(pidfd);
  g_count.store(g_orphans.size(), std::memory_order_relaxed);
}

/// Sweeps the list; g_mutex held.
std::size_t sweep_locked() noexcept {
  std::erase_if(g_orphans, [](int fd) { return try_reap(fd); });
  g_count.store(g_orphans.size(), std::memory_order_relaxed);
  return g_orphans.size();
}

/// The ring poll of one orphan. lifetime: owned by the ring from submit to its CQE.
struct orphan_poll : operation {
  int pidfd;
  explicit orphan_poll(int fd) noexcept : pidfd(fd) { m_complete = &done; }
  static void done(operation* op, int, unsigned) noexcept {
    auto* self = static_cast<orphan_poll*>(op);
    if (!try_reap(self->pidfd))
      push(self->pidfd);
    delete self;
  }
};

}  // namespace

namespace detail {

void adopt_orphan(int pidfd) noexcept {
  if (try_reap(pidfd))
    return;
  if (event_loop* loop = event_loop::current()) {
    if (auto* op = new (std::nothrow) orphan_poll(pidfd)) {
      ext::submit_poll(*loop, op, pidfd, POLLIN);
      return;
    }
  }
  push(pidfd);
}

void reap_orphans_if_any() noexcept {
  if (g_count.load(std::memory_order_relaxed) == 0)
    return;
  std::unique_lock lock(g_mutex, std::try_to_lock);
  if (lock.owns_lock())
    sweep_locked();
}

}  // namespace detail

std::size_t reap_orphans() noexcept {
  std::lock_guard lock(g_mutex);
  return sweep_locked();
}

}  // namespace saturn::os
