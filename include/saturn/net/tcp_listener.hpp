/// \file
/// `tcp_listener`: a listening TCP socket with an awaitable accept (a multishot accept
/// kept armed by default), and the fd-exhaustion policy: EMFILE/ENFILE (and ENOBUFS,
/// ENOMEM) on accept are not fatal — the listener backs off (10 ms doubling to 640 ms) and
/// resumes accepting; open connections are unaffected. It says so on stderr once for a run
/// of episodes (the process logs at most one such line per 10 s, with the count of the
/// episodes it did not log).
/// Errors accept(2) passes on from a connection that died in the accept queue
/// (ECONNABORTED, EPROTO, ENETDOWN, EHOSTUNREACH, EPERM … see accept(2)) are not returned
/// either: that connection is skipped and the next one accepted.
#pragma once

#include <saturn/net/address.hpp>
#include <saturn/net/detail/multishot.hpp>
#include <saturn/net/tcp_stream.hpp>
#include <saturn/task/task.hpp>

#include <string>
#include <utility>

namespace saturn::net {

/// How to listen.
struct listen_options {
  int backlog = 4096;              ///< listen(2) backlog (the kernel caps it at somaxconn)
  bool reuse_addr = true;          ///< SO_REUSEADDR
  bool reuse_port = false;         ///< SO_REUSEPORT: several listeners share the port, the kernel spreads connections
  bool nodelay = true;             ///< TCP_NODELAY on every accepted TCP socket (set once on the listener, which accepted sockets inherit)
  bool multishot = true;           ///< keep one multishot accept armed (else one accept SQE per call)
  bool retry_fd_exhaustion = true; ///< back off and retry on EMFILE/ENFILE/ENOBUFS/ENOMEM instead of returning them
  /// Multishot only: connections the kernel has accepted that wait for accept() to take
  /// them. At this many the multishot accept is cancelled, and re-armed once accept() has
  /// taken half of them, so a consumer that stops calling accept() (a server at its
  /// connection limit) stops taking descriptors and the kernel's listen backlog holds the
  /// rest. A burst that is in the backlog already when the queue fills is still accepted
  /// whole (the kernel's multishot accept drains the backlog before the cancel lands): for
  /// a hard bound, listen with `multishot = false` (one accept per call).
  unsigned accept_queue = 64;
};

namespace detail {
/// Shared by the TCP and Unix listeners: the fd, the multishot accept, the retry policy.
class listener_base {
 public:
  listener_base() noexcept = default;
  listener_base(int fd, const listen_options& o, const char* what) noexcept : m_fd(fd), m_opts(o), m_what(what) {}
  listener_base(listener_base&& o) noexcept
      : m_fd(std::exchange(o.m_fd, -1)), m_src(std::exchange(o.m_src, nullptr)), m_opts(o.m_opts), m_what(o.m_what) {}
  listener_base& operator=(listener_base&& o) noexcept {
    if (this != &o) {
      reset();
      m_fd = std::exchange(o.m_fd, -1);
      m_src = std::exchange(o.m_src, nullptr);
      m_opts = o.m_opts;
      m_what = o.m_what;
    }
    return *this;
  }
  ~listener_base() { reset(); }

  /// The listening fd.
  int fd() const noexcept { return m_fd; }
  /// The bound address (the real port after binding port 0).
  result<address> local_address() const noexcept;
  /// Stops accepting and closes the fd (synchronously). Loop or any thread.
  void close() noexcept { reset(); }
  /// Episodes of fd exhaustion seen so far (tests).
  unsigned exhaustion_episodes() const noexcept { return m_episodes; }

 protected:
  task<result<int>> accept_fd();
  void reset() noexcept;

  int m_fd = -1;
  multishot_source* m_src = nullptr;
  listen_options m_opts{};
  const char* m_what = "accept";
  unsigned m_episodes = 0;
  bool m_exhausted = false;
};
}  // namespace detail

/// A listening TCP socket. Move-only; the destructor stops accepting and closes the fd.
/// Threading: one task accepts at a time; accept() may be awaited from any worker (the
/// multishot accept lives on the loop that first awaited it).
class tcp_listener : public detail::listener_base {
 public:
  tcp_listener() noexcept = default;

  /// socket + SO_REUSEADDR/SO_REUSEPORT + bind + listen. Errors name the step
  /// ("bind: Address already in use").
  static result<tcp_listener> bind(const address& addr, const listen_options& opts = {});

  /// The next connection (TCP_NODELAY set when the options ask). Suspends; cancellable.
  task<result<tcp_stream>> accept();

 private:
  using listener_base::listener_base;
  bool m_nodelay_per_accept = false;  // TCP_NODELAY could not be set on the listener itself
};

}  // namespace saturn::net
