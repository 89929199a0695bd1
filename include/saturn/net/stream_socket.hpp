/// \file
/// `stream_socket`: a connected stream socket (TCP or Unix) with awaitable receive, send,
/// writev, shutdown and close. `tcp_stream` and `unix_stream` are this type plus a way to
/// connect.
///
/// Two ways to receive:
///   * `recv(buf)`: one recv(2) into your buffer.
///   * `receive()`: a multishot receive kept armed on the loop, into the loop's provided
///     buffer ring (no buffer per connection while idle, no SQE per message). The bytes it
///     returns stay valid until the next receive() or close — send them straight from there.
///
/// Idle connections: set_read_timeout(d) makes every recv() and receive() that gets no byte
/// within `d` end with timed_out, the stream still usable (buffered_reader honours it too).
///
/// Threading: one task uses a stream at a time (it is not a concurrent queue). Awaits may
/// run on any worker; a receive() continues on the loop that first served it. Every await
/// is cancellable through the task's stop token (it ends with operation_canceled).
/// Errors come back as values naming the operation ("recv: Connection reset by peer").
#pragma once

#include <saturn/ext/buf_ring.hpp>
#include <saturn/net/address.hpp>
#include <saturn/net/detail/multishot.hpp>
#include <saturn/net/detail/ops.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <span>
#include <utility>

namespace saturn::net {

namespace detail {
/// receive(): the next chunk of the multishot receive as a span (empty at end of stream).
class receive_awaiter : public ms_await {
 public:
  using ms_await::ms_await;
  result<std::span<const std::byte>> await_resume() noexcept {
    ms_item it = take_item();
    if (it.res < 0)
      return errno_error(it.res, (it.flags & ms_f_timeout) != 0 ? recv_timeout_name : "recv");
    if (it.res > 0 && (it.flags & ms_f_spare) != 0)
      return std::span<const std::byte>(m_src->spare(), static_cast<std::size_t>(it.res));
    if (it.res == 0 || (it.flags & cqe_f_buffer) == 0)
      return std::span<const std::byte>{};
    const auto bid = static_cast<std::uint16_t>(it.flags >> cqe_buffer_shift);
    return std::span<const std::byte>(m_src->buffers()->data(bid), static_cast<std::size_t>(it.res));
  }
};
}  // namespace detail

/// Per-stream receive tuning.
struct receive_options {
  /// Chunks queued for a lagging consumer before the multishot receive pauses.
  unsigned queue_limit = 8;
};

/// A connected stream socket owning its fd. Move-only; the destructor closes the fd
/// (synchronously) and releases the receive state.
class stream_socket {
 public:
  stream_socket() noexcept = default;
  /// Adopts a connected stream socket fd.
  explicit stream_socket(int fd) noexcept : m_fd(fd) {}
  stream_socket(stream_socket&& o) noexcept
      : m_fd(std::exchange(o.m_fd, -1)),
        m_src(std::exchange(o.m_src, nullptr)),
        m_ropts(o.m_ropts),
        m_read_timeout(o.m_read_timeout) {}
  stream_socket& operator=(stream_socket&& o) noexcept {
    if (this != &o) {
      reset();
      m_fd = std::exchange(o.m_fd, -1);
      m_src = std::exchange(o.m_src, nullptr);
      m_ropts = o.m_ropts;
      m_read_timeout = o.m_read_timeout;
    }
    return *this;
  }
  ~stream_socket() { reset(); }

  /// The fd (-1 when closed or empty).
  int fd() const noexcept { return m_fd; }
  bool is_open() const noexcept { return m_fd >= 0; }
  /// Gives up ownership of the fd (stops a receive() in progress first).
  int release() noexcept {
    drop_source();
    return std::exchange(m_fd, -1);
  }

  /// One recv(2) into `buf`: the byte count, 0 at end of stream. Suspends. With a read
  /// timeout set, ends with std::errc::timed_out ("recv (read timeout)") when no byte came
  /// within it; the stream stays usable.
  detail::recv_awaiter recv(std::span<std::byte> buf) noexcept {
    return detail::recv_awaiter(m_fd, buf.data(), static_cast<unsigned>(buf.size()), 0, m_read_timeout);
  }
  /// The next bytes of the stream from the multishot receive (see the file comment): a
  /// span valid until the next receive() or close, empty at end of stream. Does not
  /// suspend when data is already queued.
  detail::receive_awaiter receive() {
    if (m_src == nullptr)
      m_src = new detail::multishot_source(detail::multishot_source::kind::recv, m_fd, m_ropts.queue_limit);
    return detail::receive_awaiter(m_src, m_read_timeout);
  }
  /// Idle-read deadline: every later recv() and receive() that gets no byte within `d`
  /// ends with std::errc::timed_out (operation "recv (read timeout)") and the stream stays
  /// usable: no byte is lost, the next read continues the stream. 0 (the default): no
  /// deadline, and no timer is armed. A loop timer per waiting read, no kernel object. Set
  /// it between reads, from the task that uses the stream; an await already waiting keeps
  /// the deadline it started with.
  void set_read_timeout(std::chrono::milliseconds d) noexcept { m_read_timeout = d; }
  /// The idle-read deadline (0: none).
  std::chrono::milliseconds read_timeout() const noexcept { return m_read_timeout; }
  /// Sets receive() tuning; before the first receive().
  void set_receive_options(const receive_options& o) noexcept { m_ropts = o; }
  /// Chunks queued by receive() and not yet taken (tests).
  unsigned receive_queued() const noexcept { return m_src != nullptr ? m_src->queued() : 0; }

  /// One send(2): the byte count, possibly short. Suspends.
  detail::send_awaiter send_some(std::span<const std::byte> buf) noexcept {
    return detail::send_awaiter(m_fd, buf.data(), static_cast<unsigned>(buf.size()), 0);
  }
  /// Sends every byte of `buf` (resubmitting after short sends); the total. One send is
  /// in flight at a time: a slow reader holds the caller here (backpressure). Suspends.
  detail::send_all_awaiter send(std::span<const std::byte> buf) noexcept {
    return detail::send_all_awaiter(m_fd, buf.data(), buf.size());
  }
  /// Zero-copy send (IORING_OP_SEND_ZC) of `buf`, which stays untouched until the await
  /// ends: the byte count, possibly short. Pays only for large buffers (see docs).
  detail::send_zc_awaiter send_zc(std::span<const std::byte> buf) noexcept {
    return detail::send_zc_awaiter(m_fd, buf.data(), static_cast<unsigned>(buf.size()));
  }
  /// One sendmsg(2) of the buffers in `iov` (kept alive by the caller): the byte count,
  /// possibly short. Use write_all for a full write.
  detail::sendmsg_awaiter writev(std::span<const ::iovec> iov) noexcept {
    return detail::sendmsg_awaiter("writev", m_fd, iov.data(), iov.size(), nullptr);
  }
  /// Writes every byte of `iov` (the array is copied; the buffers must stay alive).
  task<result<std::size_t>> write_all(std::span<const ::iovec> iov);
  /// shutdown(2): SHUT_WR sends FIN (half-close), SHUT_RD, SHUT_RDWR. The call is made
  /// when awaited, by the awaiting thread, without suspending (a socket's shutdown never
  /// blocks, and the ring would run it on a kernel worker thread: detail::shutdown_awaiter).
  detail::shutdown_awaiter shutdown(int how = SHUT_WR) noexcept { return detail::shutdown_awaiter(m_fd, how); }
  /// Closes through the ring; the stream is empty afterwards whatever the result.
  saturn::detail::close_awaiter close() noexcept {
    drop_source();
    return saturn::close(std::exchange(m_fd, -1));
  }

  /// TCP_NODELAY on/off (TCP only).
  result<void> set_nodelay(bool on) noexcept;
  /// The local / peer address.
  result<address> local_address() const noexcept;
  result<address> peer_address() const noexcept;

 protected:
  void reset() noexcept {
    drop_source();
    if (m_fd >= 0)
      ::close(std::exchange(m_fd, -1));
  }
  void drop_source() noexcept {
    if (m_src != nullptr)
      std::exchange(m_src, nullptr)->close();
  }

  int m_fd = -1;
  detail::multishot_source* m_src = nullptr;
  receive_options m_ropts{};
  std::chrono::milliseconds m_read_timeout{0};
};

}  // namespace saturn::net
