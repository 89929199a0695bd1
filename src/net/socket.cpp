// Socket setup (synchronous: socket/bind/listen are not worth a ring round trip), the
// connect and accept tasks, and the fd-exhaustion policy of the listeners.
#include <saturn/net.hpp>
#include <saturn/task/time.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <saturn/detail/atomic.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "ring/sim/sim_hooks.hpp"

namespace saturn::net {

namespace {
error errno_now(const char* op) noexcept { return error{std::error_code(errno, std::system_category()), op}; }

result<address> sock_name(int fd, bool peer, const char* op) noexcept {
  ::sockaddr_storage ss{};
  ::socklen_t len = sizeof ss;
  int r = peer ? ::getpeername(fd, reinterpret_cast<::sockaddr*>(&ss), &len)
               : ::getsockname(fd, reinterpret_cast<::sockaddr*>(&ss), &len);
  if (r != 0)
    return errno_now(op);
  // Under a sim::world, a connection between two of the program's endpoints is an AF_UNIX
  // pair standing for TCP (src/ring/sim/net.cpp): it answers with the TCP address.
  if (ss.ss_family == AF_UNIX)
    (void)ring::sim_socket_name(fd, peer, ss, len);
  return address::from_sockaddr(reinterpret_cast<::sockaddr*>(&ss), len);
}

// No virtual call on the category here or in the log line below: at this point the
// process may have no fd to spare, and a sanitizer's checks of a virtual call need one.
bool fd_exhaustion(const error& e) noexcept {
  const int v = e.code.value();
  return &e.code.category() == &std::system_category() && (v == EMFILE || v == ENFILE || v == ENOBUFS || v == ENOMEM);
}

// accept(2) on Linux passes on errors of a connection that died in the accept queue
// (reset, unreachable, aborted): the listener is fine, the next connection can be taken.
bool connection_error(const error& e) noexcept {
  const int v = e.code.value();
  if (&e.code.category() != &std::system_category())
    return false;
  switch (v) {
    case ECONNABORTED: case EPROTO: case ENETDOWN: case ENOPROTOOPT: case EHOSTDOWN:
    case ENONET: case EHOSTUNREACH: case EOPNOTSUPP: case ENETUNREACH: case EPERM: case EINTR:
      return true;
    default:
      return false;
  }
}

// One line for a run of exhaustion episodes, not one per episode: at the fd limit every
// close lets one accept through and the next fails again, and each worker's listener
// (SO_REUSEPORT) has episodes of its own, so per-episode logging printed a line per
// closed connection. The first episode is logged; later ones within k_log_quiet of the
// last line are counted and summed into the next line. Any thread.
void log_exhaustion(const char* what, int err) noexcept {
  static constexpr std::int64_t k_log_quiet_ns = 10'000'000'000;
  static saturn::detail::atomic<std::int64_t> last_ns{0};  // 0: never logged
  static saturn::detail::atomic<unsigned> unlogged{0};
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now().time_since_epoch()).count();
  std::int64_t last = last_ns.load(std::memory_order_relaxed);
  if ((last != 0 && now - last < k_log_quiet_ns) ||
      !last_ns.compare_exchange_strong(last, now, std::memory_order_relaxed)) {
    unlogged.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  char more[64] = "";
  if (const unsigned n = unlogged.exchange(0, std::memory_order_relaxed); n != 0)
    std::snprintf(more, sizeof more, "; %u more episodes since the last message", n);
  std::fprintf(stderr, "saturn: %s: %s; backing off and retrying (close idle connections or raise RLIMIT_NOFILE)%s\n",
               what, ::strerror(err), more);
}

void set_nodelay_fd(int fd) noexcept {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

result<int> listen_socket(const address& addr, const listen_options& o) noexcept {
  int fd = ::socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return errno_now("socket");
  int one = 1;
  if (o.reuse_addr && addr.family() != AF_UNIX && ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) {
    error e = errno_now("setsockopt(SO_REUSEADDR)");
    ::close(fd);
    return e;
  }
  if (o.reuse_port && ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) {
    error e = errno_now("setsockopt(SO_REUSEPORT)");
    ::close(fd);
    return e;
  }
  if (::bind(fd, addr.data(), addr.size()) != 0) {
    error e = errno_now("bind");
    ::close(fd);
    return e;
  }
  if (::listen(fd, o.backlog) != 0) {
    error e = errno_now("listen");
    ::close(fd);
    return e;
  }
  if (addr.family() != AF_UNIX)
    ring::sim_note_listener(fd);  // under a sim::world: connects to it stay in the world
  return fd;
}
}  // namespace

// ---- stream_socket

result<void> stream_socket::set_nodelay(bool on) noexcept {
  int v = on ? 1 : 0;
  if (::setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &v, sizeof v) != 0) {
    ::sockaddr_storage ss{};
    ::socklen_t len = sizeof ss;
    if (errno == EOPNOTSUPP && ring::sim_socket_name(m_fd, false, ss, len))
      return {};  // an in-world connection under a sim::world: no TCP options to set
    return errno_now("setsockopt(TCP_NODELAY)");
  }
  return {};
}

result<address> stream_socket::local_address() const noexcept { return sock_name(m_fd, false, "getsockname"); }
result<address> stream_socket::peer_address() const noexcept { return sock_name(m_fd, true, "getpeername"); }

task<result<std::size_t>> stream_socket::write_all(std::span<const ::iovec> iov_in) {
  std::vector<::iovec> iov(iov_in.begin(), iov_in.end());
  std::size_t total = 0;
  std::size_t first = 0;
  while (first < iov.size()) {
    auto aw = writev(std::span<const ::iovec>(iov.data() + first, iov.size() - first));
    auto r = co_await aw;
    if (!r)
      co_return r.err();
    std::size_t n = *r;
    if (n == 0)
      co_return errno_error(-EPIPE, "writev");
    total += n;
    while (first < iov.size() && n >= iov[first].iov_len) {
      n -= iov[first].iov_len;
      ++first;
    }
    if (first < iov.size()) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + n;
      iov[first].iov_len -= n;
    }
  }
  co_return total;
}

// ---- connect

namespace {
task<result<int>> connect_fd(address to, std::chrono::nanoseconds timeout) {
  int fd = ::socket(to.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    co_return errno_now("socket");
  auto aw = detail::connect_awaiter("connect", fd, to, timeout);
  auto r = co_await aw;
  if (!r) {
    ::close(fd);
    co_return r.err();
  }
  co_return fd;
}
}  // namespace

task<result<tcp_stream>> tcp_stream::connect(address to, std::chrono::nanoseconds timeout) {
  auto r = co_await connect_fd(to, timeout);
  if (!r)
    co_return r.err();
  set_nodelay_fd(*r);
  co_return tcp_stream(*r);
}

task<result<unix_stream>> unix_stream::connect(std::string_view path) {
  auto a = address::unix_path(path);
  if (!a)
    co_return a.err();
  auto r = co_await connect_fd(*a, {});
  if (!r)
    co_return r.err();
  co_return unix_stream(*r);
}

result<std::pair<unix_stream, unix_stream>> unix_stream::pair() noexcept {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return errno_now("socketpair");
  return std::pair<unix_stream, unix_stream>(unix_stream(fds[0]), unix_stream(fds[1]));
}

// ---- listeners

namespace detail {

result<address> listener_base::local_address() const noexcept { return sock_name(m_fd, false, "getsockname"); }

void listener_base::reset() noexcept {
  if (m_src != nullptr)
    std::exchange(m_src, nullptr)->close();
  if (m_fd >= 0)
    ::close(std::exchange(m_fd, -1));
}

task<result<int>> listener_base::accept_fd() {
  auto backoff = std::chrono::milliseconds(10);
  for (;;) {
    result<int> r = errno_error(-EBADF, m_what);
    if (m_opts.multishot) {
      if (m_src == nullptr)
        // A queue limit of 0 would pause at every CQE: at least 1.
        m_src = new multishot_source(multishot_source::kind::accept, m_fd, std::max(m_opts.accept_queue, 1u));
      ms_await aw(m_src);
      ms_item it = co_await aw;
      r = it.res >= 0 ? result<int>(it.res) : result<int>(errno_error(it.res, m_what));
    } else {
      accept_awaiter aw(m_fd);
      r = co_await aw;
      if (!r)
        r = error{r.err().code, m_what};
    }
    if (r) {
      m_exhausted = false;  // an episode ends with the first accept that works
      co_return r;
    }
    if (connection_error(r.err()))
      continue;  // that connection is gone; the listener is not (an error here used to end accept loops)
    if (!m_opts.retry_fd_exhaustion || !fd_exhaustion(r.err()))
      co_return r;
    // Out of descriptors (or kernel memory): keep serving what is open, retry later.
    if (!m_exhausted) {
      m_exhausted = true;
      ++m_episodes;
      log_exhaustion(m_what, r.err().code.value());
    }
    auto s = sleep_for(backoff);
    auto slept = co_await s;
    if (!slept)
      co_return slept.err();  // cancelled while backing off
    if (backoff < std::chrono::milliseconds(640))
      backoff *= 2;
  }
}

}  // namespace detail

result<tcp_listener> tcp_listener::bind(const address& addr, const listen_options& opts) {
  if (addr.family() != AF_INET && addr.family() != AF_INET6)
    return error{std::make_error_code(std::errc::address_family_not_supported), "tcp_listener::bind"};
  auto fd = listen_socket(addr, opts);
  if (!fd)
    return fd.err();
  tcp_listener l(*fd, opts, "accept");
  // Linux gives every socket accept() returns the listening socket's TCP_NODELAY (the
  // child is a clone of the listener), so one setsockopt here spares one syscall per
  // connection; accept() sets it itself only when this one failed.
  if (opts.nodelay) {
    int one = 1;
    l.m_nodelay_per_accept = ::setsockopt(*fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0;
  }
  return l;
}

task<result<tcp_stream>> tcp_listener::accept() {
  auto r = co_await accept_fd();
  if (!r)
    co_return r.err();
  if (m_nodelay_per_accept)
    set_nodelay_fd(*r);
  co_return tcp_stream(*r);
}

result<unix_listener> unix_listener::bind(std::string_view path, const listen_options& opts) {
  auto a = address::unix_path(path);
  if (!a)
    return a.err();
  listen_options o = opts;
  o.reuse_port = false;
  auto fd = listen_socket(*a, o);
  if (!fd)
    return fd.err();
  return unix_listener(*fd, o, "accept");
}

task<result<unix_stream>> unix_listener::accept() {
  auto r = co_await accept_fd();
  if (!r)
    co_return r.err();
  co_return unix_stream(*r);
}

// ---- udp

result<udp_socket> udp_socket::bind(const address& addr) noexcept {
  int fd = ::socket(addr.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return errno_now("socket");
  if (::bind(fd, addr.data(), addr.size()) != 0) {
    error e = errno_now("bind");
    ::close(fd);
    return e;
  }
  return udp_socket(fd);
}

result<address> udp_socket::local_address() const noexcept { return sock_name(m_fd, false, "getsockname"); }

}  // namespace saturn::net
