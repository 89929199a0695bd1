/// \file
/// Socket awaitables built on detail::io_awaiter (task/io.hpp): the operation lives in
/// the awaiting frame, a stop of the task's token cancels it through the ring, and the
/// task resumes only on the final CQE. Every error names its operation.
#pragma once

#include <saturn/ext/operation.hpp>
#include <saturn/ext/submit.hpp>
#include <saturn/ext/submit_net.hpp>
#include <saturn/net/address.hpp>
#include <saturn/task/io.hpp>
#include <saturn/task/task.hpp>

#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <coroutine>
#include <cstddef>
#include <span>

namespace saturn::net::detail {

using saturn::detail::io_awaiter;

/// accept4(2), one connection: the new fd.
struct accept_awaiter : io_awaiter<accept_awaiter, int> {
  int m_fd;
  explicit accept_awaiter(int fd) noexcept : io_awaiter("accept"), m_fd(fd) {}
  void submit(event_loop& l) { ext::submit_accept(l, this, m_fd, nullptr, nullptr, SOCK_CLOEXEC, false); }
  result<int> value(int res) const noexcept { return res; }
};

/// connect(2), optionally with a deadline (a linked timeout): ETIMEDOUT when it passes.
struct connect_awaiter : io_awaiter<connect_awaiter, void> {
  int m_fd;
  address m_addr;
  kernel_timespec m_ts{};
  bool m_timed;
  bool m_stopped = false;
  connect_awaiter(const char* name, int fd, const address& a, std::chrono::nanoseconds timeout) noexcept
      : io_awaiter(name), m_fd(fd), m_addr(a), m_timed(timeout.count() > 0) {
    if (m_timed)
      m_ts = kernel_timespec::from(timeout);
  }
  void submit(event_loop& l) {
    ext::submit_connect(l, this, m_fd, m_addr.data(), m_addr.size());
    if (m_timed)
      ext::link_timeout(l, &m_ts);
  }
  void cancel_io() noexcept {
    m_stopped = true;
    io_awaiter::cancel_io();
  }
  result<void> await_resume() noexcept {
    if (m_res == -ECANCELED && m_timed && !m_stopped)
      m_res = -ETIMEDOUT;  // the linked timeout cancelled it
    return io_awaiter::await_resume();
  }
  result<void> value(int) const noexcept { return {}; }
};

/// The operation name of a recv that its read timeout ended (std::errc::timed_out).
inline constexpr const char* recv_timeout_name = "recv (read timeout)";

/// recv(2) into a caller buffer: the byte count, 0 at end of stream.
///
/// Read timeout (`timeout` > 0, stream_socket::set_read_timeout): submit also arms a loop
/// timer (no kernel object) on the submitting loop; if it fires before the CQE it cancels
/// the recv through the ring and the await ends with std::errc::timed_out, operation
/// recv_timeout_name. Bytes that arrive before the cancel lands are returned as usual.
/// Timer, recv and completion all live on that one loop's thread. Without a timeout the
/// path is as before plus one test in submit: no timer, the plain completion function.
struct recv_awaiter : io_awaiter<recv_awaiter, std::size_t> {
  struct read_timer : timer_node {
    recv_awaiter* self = nullptr;
    event_loop* loop = nullptr;
  };
  int m_fd;
  void* m_buf;
  unsigned m_len;
  int m_flags;
  std::chrono::milliseconds m_timeout;
  bool m_timed_out = false;  // the timer fired (and asked the ring to cancel the recv)
  bool m_stopped = false;    // the task's stop token cancelled it: operation_canceled wins
  read_timer m_timer;
  recv_awaiter(int fd, void* buf, unsigned len, int flags, std::chrono::milliseconds timeout = {}) noexcept
      : io_awaiter("recv"), m_fd(fd), m_buf(buf), m_len(len), m_flags(flags), m_timeout(timeout) {}
  void submit(event_loop& l) {
    ext::submit_recv(l, this, m_fd, m_buf, m_len, m_flags);
    if (m_timeout.count() > 0) [[unlikely]]
      arm_timer(l);
  }
  void arm_timer(event_loop& l) {
    m_complete = &on_timed_complete;
    m_timer.self = this;
    m_timer.loop = &l;
    m_timer.m_fire = &on_timer;
    l.add_timer(&m_timer, clock::now() + m_timeout);
  }
  static void on_timer(timer_node* t, run_mode mode) noexcept {
    auto* rt = static_cast<read_timer*>(t);
    if (mode != run_mode::run)
      return;  // the loop is going away; its drain cancels the recv
    rt->self->m_timed_out = true;
    ext::submit_cancel(*rt->loop, rt->self);
  }
  // lifetime: the timer lives in this awaiter; it is disarmed here, on the loop thread,
  // before the task can resume and the awaiter go.
  static void on_timed_complete(operation* op, int res, unsigned flags) noexcept {
    auto* self = static_cast<recv_awaiter*>(op);
    self->m_timer.loop->cancel_timer(&self->m_timer);
    if (res == -ECANCELED && self->m_timed_out && !self->m_stopped) {
      res = -ETIMEDOUT;
      self->m_name = recv_timeout_name;
    }
    io_awaiter::on_complete(op, res, flags);
  }
  void cancel_io() noexcept {
    m_stopped = true;
    io_awaiter::cancel_io();
  }
  result<std::size_t> value(int res) const noexcept { return static_cast<std::size_t>(res); }
};

/// One send(2): the byte count (may be short for a stream socket under pressure).
struct send_awaiter : io_awaiter<send_awaiter, std::size_t> {
  int m_fd;
  const void* m_buf;
  unsigned m_len;
  int m_flags;
  send_awaiter(int fd, const void* buf, unsigned len, int flags) noexcept
      : io_awaiter("send"), m_fd(fd), m_buf(buf), m_len(len), m_flags(flags) {}
  void submit(event_loop& l) { ext::submit_send(l, this, m_fd, m_buf, m_len, m_flags); }
  result<std::size_t> value(int res) const noexcept { return static_cast<std::size_t>(res); }
};

/// Sends every byte: resubmits after a short send on the completing loop, without waking
/// the task in between. One send is in flight at a time, so a slow reader holds the task
/// here (backpressure) instead of growing a queue. Completes with the total, or the first
/// error (bytes sent before it are not reported).
struct send_all_awaiter : io_awaiter<send_all_awaiter, std::size_t> {
  int m_fd;
  const std::byte* m_buf;
  std::size_t m_len;
  std::size_t m_done = 0;
  bool m_stopped = false;
  send_all_awaiter(int fd, const std::byte* buf, std::size_t len) noexcept
      : io_awaiter("send"), m_fd(fd), m_buf(buf), m_len(len) {
    m_complete = &on_step;
  }
  bool await_ready() const noexcept { return m_len == 0; }
  void submit(event_loop& l) { ext::submit_send(l, this, m_fd, m_buf + m_done, chunk(), 0); }
  unsigned chunk() const noexcept {
    const std::size_t left = m_len - m_done;
    return left > (1u << 30) ? (1u << 30) : static_cast<unsigned>(left);
  }
  void cancel_io() noexcept {
    m_stopped = true;
    io_awaiter::cancel_io();
  }
  static void on_step(operation* op, int res, unsigned flags) noexcept {
    auto* self = static_cast<send_all_awaiter*>(op);
    if (res > 0) {
      self->m_done += static_cast<std::size_t>(res);
      if (self->m_done < self->m_len && !self->m_stopped) {
        self->submit(*self->m_loop);  // same loop thread: the completion runs on it
        return;
      }
      res = self->m_done < self->m_len ? -ECANCELED : 0;  // stopped between two sends
    } else if (res == 0 && self->m_done < self->m_len) {
      res = -EPIPE;  // a stream send of 0 bytes cannot make progress
    }
    io_awaiter::on_complete(op, res, flags);
  }
  result<std::size_t> value(int) const noexcept { return m_done; }
};

/// sendmsg(2) of an iovec array (writev on a socket): the byte count, possibly short.
struct sendmsg_awaiter : io_awaiter<sendmsg_awaiter, std::size_t> {
  int m_fd;
  ::msghdr m_msg{};
  ::iovec m_one{};
  address m_to;
  sendmsg_awaiter(const char* name, int fd, const ::iovec* iov, std::size_t n, const address* to) noexcept
      : io_awaiter(name), m_fd(fd) {
    m_msg.msg_iov = const_cast<::iovec*>(iov);
    m_msg.msg_iovlen = n;
    if (to != nullptr)
      m_to = *to;
  }
  /// One buffer, kept in the awaiter.
  sendmsg_awaiter(const char* name, int fd, const void* buf, std::size_t len, const address* to) noexcept
      : io_awaiter(name), m_fd(fd), m_one{const_cast<void*>(buf), len} {
    m_msg.msg_iovlen = 1;
    if (to != nullptr)
      m_to = *to;
  }
  void submit(event_loop& l) {
    if (m_msg.msg_iov == nullptr)
      m_msg.msg_iov = &m_one;  // lifetime: m_one lives in this awaiter until the CQE
    if (m_to.family() != AF_UNSPEC) {
      // lifetime: m_to lives in this awaiter, which lives until the CQE.
      m_msg.msg_name = m_to.data();
      m_msg.msg_namelen = m_to.size();
    }
    ext::submit_sendmsg(l, this, m_fd, &m_msg, 0);
  }
  result<std::size_t> value(int res) const noexcept { return static_cast<std::size_t>(res); }
};

/// What recv_from returns: the datagram's length and sender.
struct datagram {
  std::size_t size = 0;
  address from;
  bool truncated = false;  ///< the datagram was longer than the buffer (MSG_TRUNC)
};

/// recvmsg(2) of one datagram with its sender.
struct recvmsg_awaiter : io_awaiter<recvmsg_awaiter, datagram> {
  int m_fd;
  ::iovec m_iov;
  ::msghdr m_msg{};
  address m_from;
  recvmsg_awaiter(int fd, void* buf, std::size_t len) noexcept : io_awaiter("recv_from"), m_fd(fd), m_iov{buf, len} {}
  void submit(event_loop& l) {
    m_msg.msg_iov = &m_iov;
    m_msg.msg_iovlen = 1;
    m_msg.msg_name = m_from.data();
    m_msg.msg_namelen = sizeof(::sockaddr_storage);
    ext::submit_recvmsg(l, this, m_fd, &m_msg, 0);
  }
  result<datagram> value(int res) const noexcept {
    datagram d;
    d.size = static_cast<std::size_t>(res);
    d.truncated = (m_msg.msg_flags & MSG_TRUNC) != 0;
    auto a = address::from_sockaddr(static_cast<const ::sockaddr*>(m_msg.msg_name), m_msg.msg_namelen);
    if (a)
      d.from = *a;
    return d;
  }
};

/// shutdown(2), made at once by the awaiting thread, not through the ring: the await
/// never suspends. Why: the kernel runs IORING_OP_SHUTDOWN only on an io-wq worker
/// (io_shutdown_prep forces it async), so each one woke a kernel thread and cost two
/// context switches; in HttpArena's limited-conn, where every tenth request closes its
/// connection and the server half-closes before draining, io-wq was ~5 % of the server's
/// samples. shutdown(2) on a socket does not block (it queues a FIN or marks the socket),
/// and the caller's earlier sends on the stream have completed by the time it awaits this
/// (one task per stream at a time), so the FIN still follows them. A stop request does
/// not affect it. ext::submit_shutdown remains for callers that want the ring's op.
struct shutdown_awaiter {
  int m_fd;
  int m_how;
  shutdown_awaiter(int fd, int how) noexcept : m_fd(fd), m_how(how) {}
  bool await_ready() const noexcept { return true; }
  void await_suspend(std::coroutine_handle<>) const noexcept {}
  result<void> await_resume() const noexcept {
    if (::shutdown(m_fd, m_how) != 0)
      return errno_error(-errno, "shutdown");
    return {};
  }
};

/// Zero-copy send: completes after the kernel's notification that it no longer reads the
/// buffer (two CQEs), with the byte count of the send.
struct send_zc_awaiter : io_awaiter<send_zc_awaiter, std::size_t> {
  int m_fd;
  const void* m_buf;
  unsigned m_len;
  int m_sent = 0;
  send_zc_awaiter(int fd, const void* buf, unsigned len) noexcept
      : io_awaiter("send_zc"), m_fd(fd), m_buf(buf), m_len(len) {
    m_complete = &on_zc;
  }
  void submit(event_loop& l) { ext::submit_send_zc(l, this, m_fd, m_buf, m_len, 0); }
  static void on_zc(operation* op, int res, unsigned flags) noexcept {
    auto* self = static_cast<send_zc_awaiter*>(op);
    if ((flags & cqe_f_notif) == 0) {
      self->m_sent = res;  // the send's own result
      if ((flags & cqe_f_more) != 0)
        return;  // wait for the notification: the buffer is still the kernel's
    }
    io_awaiter::on_complete(op, self->m_sent, flags);
  }
  result<std::size_t> value(int res) const noexcept { return static_cast<std::size_t>(res); }
};

}  // namespace saturn::net::detail
