// os::signal_set and saturn::signal: one process-wide signalfd read through the ring by
// whichever waiting task finds nobody reading (see include/saturn/os/signal.hpp).
//
// The hub's state (mask, counts, reader flag, the current wake-up event) is guarded by
// one mutex held only for a few instructions, never across a suspension. Wake-ups use
// generations: a waiter takes the current event under the lock, checks the counts, and
// sleeps on that event; whoever changes a count (or gives up reading) swaps in a fresh
// event under the lock and sets the old one after unlocking. A change between a
// waiter's check and its sleep sets the event it holds, so no wake-up is lost.
#include <saturn/os/signal.hpp>

#include <saturn/sync/event.hpp>
#include <saturn/task/io.hpp>

#include <saturn/net/stable_text.hpp>

#include <sys/signalfd.h>
#include <pthread.h>
#include <signal.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <system_error>

namespace saturn::os {

namespace {

constexpr int k_max_signal = 64;  // Linux: 1..64 (SIGRTMAX)

struct hub {
  std::mutex mutex;
  int fd = -1;  // the signalfd: created on first use, open for the life of the process
  sigset_t mask{};
  std::array<std::uint64_t, k_max_signal + 1> count{};
  bool reading = false;
  std::shared_ptr<event> wake = std::make_shared<event>();

  hub() { sigemptyset(&mask); }

  /// Under `mutex`: a fresh event for the next waiters; the caller sets the returned
  /// old one once it has unlocked.
  std::shared_ptr<event> rotate() {
    auto old = std::move(wake);
    wake = std::make_shared<event>();
    return old;
  }
};

hub& the_hub() {
  static hub* h = new hub;  // never destroyed: tasks of late runtimes may still use it
  return *h;
}

/// A process-lifetime text for an error (error::operation is a const char*).
const char* stable(std::string s) { return net::stable_text(std::move(s), "signal_set"); }

const char* name_of(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? abbrev : "?";
}

std::string sig_name(int sig) { return std::string("SIG") + name_of(sig) + " (" + std::to_string(sig) + ")"; }

/// Why `sig` cannot be served, or nullptr.
const char* refuse(int sig) {
  if (sig < 1 || sig > k_max_signal)
    return "is not a signal number";
  if (sig == SIGKILL || sig == SIGSTOP)
    return "cannot be blocked or caught";
  if (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP)
    return "is a synchronous fault signal: blocking it is undefined for faults";
  return nullptr;
}

error invalid(const char* what, int sig, const char* why) {
  return error{std::make_error_code(std::errc::invalid_argument),
               stable(std::string(what) + ": signal " + std::to_string(sig) + " " + why)};
}

}  // namespace

result<void> block_signals(std::initializer_list<int> signals) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : signals) {
    if (const char* why = refuse(s))
      return invalid("block_signals", s, why);
    sigaddset(&set, s);
  }
  if (const int rc = pthread_sigmask(SIG_BLOCK, &set, nullptr); rc != 0)
    return error{std::error_code(rc, std::system_category()), "block_signals: pthread_sigmask"};
  return {};
}

result<signal_set> signal_set::make(std::initializer_list<int> signals) {
  sigset_t blocked;
  if (const int rc = pthread_sigmask(SIG_BLOCK, nullptr, &blocked); rc != 0)
    return error{std::error_code(rc, std::system_category()), "signal_set: pthread_sigmask"};
  signal_set out;
  for (int s : signals) {
    if (const char* why = refuse(s))
      return invalid("signal_set", s, why);
    if (sigismember(&blocked, s) != 1)
      return error{std::make_error_code(std::errc::invalid_argument),
                   stable("signal_set: " + sig_name(s) +
                          " is not blocked in this thread, so the kernel would not keep it for the signalfd: call "
                          "saturn::os::block_signals({SIG" +
                          name_of(s) + "}) in main() before starting the runtime")};
  }
  hub& h = the_hub();
  std::lock_guard lock(h.mutex);
  bool grow = false;
  for (int s : signals) {
    if (sigismember(&h.mask, s) != 1) {
      sigaddset(&h.mask, s);
      grow = true;
    }
    bool dup = false;
    for (auto& [sig, seen] : out.m_seen)
      dup = dup || sig == s;
    if (!dup)
      out.m_seen.emplace_back(s, h.count[static_cast<unsigned>(s)]);
  }
  if (grow) {
    // A blocking signalfd: the ring's read waits on it (io_uring polls it internally)
    // instead of failing with EAGAIN. Its mask only grows: a signal nobody waits for any
    // more is still read and counted, which matters only while it stays blocked.
    const int fd = ::signalfd(h.fd, &h.mask, SFD_CLOEXEC);
    if (fd < 0)
      return error{std::error_code(errno, std::system_category()), "signal_set: signalfd"};
    h.fd = fd;
  }
  return out;
}

std::uint64_t signal_set::delivered(int sig) noexcept {
  if (sig < 1 || sig > k_max_signal)
    return 0;
  hub& h = the_hub();
  std::lock_guard lock(h.mutex);
  return h.count[static_cast<unsigned>(sig)];
}

task<result<int>> signal_set::wait() {
  hub& h = the_hub();
  for (;;) {
    std::shared_ptr<event> wake;
    bool reader = false;
    int fd = -1;
    {
      std::lock_guard lock(h.mutex);
      int hit = 0;
      for (auto& [sig, seen] : m_seen) {
        const std::uint64_t now = h.count[static_cast<unsigned>(sig)];
        if (now != seen && (hit == 0 || sig < hit))
          hit = sig;
      }
      if (hit != 0) {
        for (auto& [sig, seen] : m_seen)
          if (sig == hit)
            seen = h.count[static_cast<unsigned>(sig)];
        co_return hit;
      }
      wake = h.wake;
      if (!h.reading) {
        h.reading = true;
        reader = true;
        fd = h.fd;
      }
    }
    if (reader) {
      std::array<signalfd_siginfo, 8> info{};
      auto rd = saturn::read(fd, std::as_writable_bytes(std::span(info)));
      auto got = co_await rd;
      std::shared_ptr<event> old;
      {
        std::lock_guard lock(h.mutex);
        h.reading = false;  // let the next waiter read, whether or not this read worked
        if (got)
          for (std::size_t i = 0; i < *got / sizeof(signalfd_siginfo); ++i)
            if (const auto s = info[i].ssi_signo; s >= 1 && s <= k_max_signal)
              ++h.count[s];
        old = h.rotate();
      }
      old->set();
      if (!got)
        co_return got.err();  // cancelled (another waiter takes over) or a read error
    } else {
      auto w = co_await wake->wait();
      if (!w)
        co_return w.err();
    }
  }
}

}  // namespace saturn::os

namespace saturn {

task<result<int>> signal(int sig) {
  auto set = os::signal_set::make({sig});
  if (!set)
    co_return set.err();
  co_return co_await set->wait();
}

}  // namespace saturn
