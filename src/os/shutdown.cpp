// os::shutdown_signals: one process-wide set of SIGINT/SIGTERM handlers, refcounted by the
// live objects. The handler records the first signal (a lock-free atomic) and writes a
// byte to a non-blocking pipe; wait() reads the pipe through the ring and, when the
// number is set, writes a byte back before it returns, so the pipe stays readable and
// every other waiter wakes too (the latch of the header's comment).
//
// The pipe is made by the first install and never closed: a handler that is still
// running on another thread while the last object restores the old handlers then writes
// into this pipe, not into a descriptor number that close(2) freed for reuse. A later
// first install drains what such a late byte left.
#include <saturn/os/shutdown.hpp>

#include <saturn/task/io.hpp>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <saturn/detail/atomic.hpp>
#include <cerrno>
#include <cstddef>
#include <mutex>
#include <system_error>

namespace saturn::os {

namespace {

std::mutex g_shutdown_mutex;  // guards g_refs, the pipe's creation and the install / restore of the handlers
int g_refs = 0;
struct sigaction g_old_int{}, g_old_term{};
// ordering: written once, under g_shutdown_mutex, before the first handler is installed.
saturn::detail::atomic<int> g_pipe_read{-1}, g_pipe_write{-1};
saturn::detail::atomic<int> g_first_signal{0};
static_assert(saturn::detail::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free atomic");

extern "C" void on_shutdown_signal(int sig) {
  const int saved = errno;
  int none = 0;
  g_first_signal.compare_exchange_strong(none, sig);
  const char b = 1;
  // A full pipe already says "signalled": dropping this byte loses nothing.
  [[maybe_unused]] ssize_t n = ::write(g_pipe_write.load(), &b, 1);
  errno = saved;
}

}  // namespace

result<shutdown_signals> shutdown_signals::install() {
  std::lock_guard lock(g_shutdown_mutex);
  if (g_refs == 0) {
    if (g_pipe_read.load() < 0) {
      int fds[2];
      if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
        return error{std::error_code(errno, std::system_category()), "shutdown_signals: pipe"};
      g_pipe_read.store(fds[0]);
      g_pipe_write.store(fds[1]);
    }
    char drain[64];
    while (::read(g_pipe_read.load(), drain, sizeof drain) > 0) {
    }
    g_first_signal.store(0);
    struct sigaction sa{};
    sa.sa_handler = &on_shutdown_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(SIGINT, &sa, &g_old_int);
    ::sigaction(SIGTERM, &sa, &g_old_term);
  }
  ++g_refs;
  shutdown_signals s;
  s.m_live = true;
  return s;
}

shutdown_signals& shutdown_signals::operator=(shutdown_signals&& o) noexcept {
  if (this != &o) {
    this->~shutdown_signals();
    m_live = o.m_live;
    o.m_live = false;
  }
  return *this;
}

shutdown_signals::~shutdown_signals() {
  if (!m_live)
    return;
  m_live = false;
  std::lock_guard lock(g_shutdown_mutex);
  if (--g_refs > 0)
    return;
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
  g_first_signal.store(0);
}

int shutdown_signals::received() const noexcept { return g_first_signal.load(); }

task<result<int>> shutdown_signals::wait() const {
  const int fd = g_pipe_read.load();
  for (;;) {
    // The handler stores the number before it writes: a set number needs no read.
    if (const int sig = g_first_signal.load(); sig != 0)
      co_return sig;
    std::byte b[16];
    auto rd = saturn::read(fd, b);
    auto got = co_await rd;
    if (!got)
      co_return got.err();
    if (const int sig = g_first_signal.load(); sig != 0 && *got > 0) {
      // Put one byte back so that the pipe stays readable for the other waiters.
      const char one = 1;
      [[maybe_unused]] ssize_t n = ::write(g_pipe_write.load(), &one, 1);
      co_return sig;
    }
    // No number: a byte left by a late handler of an earlier install; read on.
  }
}

}  // namespace saturn::os
