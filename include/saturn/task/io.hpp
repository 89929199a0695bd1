/// \file
/// Awaitables for the loop's operations (tier B). The operation object lives in the
/// awaiting coroutine's frame, so an await allocates nothing; the completion puts the task
/// back on its loop's run queue (its promise is the queue node).
///
/// Every await is cancellable through the task's stop token (with_timeout, when_any and
/// task groups set one): a stop submits IORING_OP_ASYNC_CANCEL for the operation, the
/// await ends with std::errc::operation_canceled, and the buffers stay in use until the
/// kernel's final CQE — which is also when the task resumes.
///
/// Threading: await only from a saturn task running on a thread with an event loop.
#pragma once

#include <saturn/ext/submit.hpp>
#include <saturn/result.hpp>
#include <saturn/task/detail/cancellable.hpp>
#include <saturn/task/detail/promise_base.hpp>

#include <sys/uio.h>

#include <cerrno>
#include <cstddef>
#include <span>

namespace saturn {
namespace detail {

/// Shared by every I/O awaiter: submit in await_suspend, resume through the run queue.
template <class Derived, class T>
struct io_awaiter : operation, cancellable<io_awaiter<Derived, T>> {
  using base = cancellable<io_awaiter<Derived, T>>;
  int m_res = 0;
  const char* m_name;

  explicit io_awaiter(const char* name) noexcept : m_name(name) { m_complete = &on_complete; }

  bool await_ready() const noexcept { return false; }

  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) {
    static_assert(saturn_promise<P>, "saturn I/O awaitables must be awaited from a saturn::task");
    promise_base* p = &h.promise();
    if (p->token().stop_requested()) {
      m_res = -ECANCELED;
      return false;
    }
    event_loop* loop = event_loop::current();
    static_cast<Derived*>(this)->submit(*loop);
    this->arm_cancellation(p, loop);
    return true;
  }

  result<T> await_resume() noexcept {
    this->disarm_cancellation();
    if (m_res < 0)
      return errno_error(m_res, m_name);
    return static_cast<Derived*>(this)->value(m_res);
  }

  static void on_complete(operation* op, int res, unsigned) noexcept {
    auto* self = static_cast<io_awaiter*>(op);
    self->m_res = res;
    if (self->complete_may_resume())
      self->m_promise->wake();
  }

  /// cancellable's hook (its Derived is this class, not the awaiter): forwards to the
  /// awaiter's cancel_io, which an awaiter shadows to note the stop before cancelling.
  void cancel_now() noexcept { static_cast<Derived*>(this)->cancel_io(); }
  void cancel_io() noexcept { ext::submit_cancel(*this->m_loop, this); }
};

struct nop_awaiter : io_awaiter<nop_awaiter, void> {
  nop_awaiter() : io_awaiter("nop") {}
  void submit(event_loop& l) { ext::submit_nop(l, this); }
  result<void> value(int) const noexcept { return {}; }
};

struct rw_awaiter : io_awaiter<rw_awaiter, std::size_t> {
  enum kind : std::uint8_t { k_read, k_write, k_read_fixed, k_write_fixed };
  int m_fd;
  void* m_buf;
  unsigned m_len;
  std::uint64_t m_offset;
  unsigned m_buf_index;
  kind m_kind;
  rw_awaiter(const char* name, kind k, int fd, void* buf, unsigned len, std::uint64_t off, unsigned idx)
      : io_awaiter(name), m_fd(fd), m_buf(buf), m_len(len), m_offset(off), m_buf_index(idx), m_kind(k) {}
  void submit(event_loop& l) {
    switch (m_kind) {
      case k_read: ext::submit_read(l, this, m_fd, m_buf, m_len, m_offset); break;
      case k_write: ext::submit_write(l, this, m_fd, m_buf, m_len, m_offset); break;
      case k_read_fixed: ext::submit_read_fixed(l, this, m_fd, m_buf, m_len, m_offset, m_buf_index); break;
      case k_write_fixed: ext::submit_write_fixed(l, this, m_fd, m_buf, m_len, m_offset, m_buf_index); break;
    }
  }
  result<std::size_t> value(int res) const noexcept { return static_cast<std::size_t>(res); }
};

struct rwv_awaiter : io_awaiter<rwv_awaiter, std::size_t> {
  int m_fd;
  const ::iovec* m_iov;
  unsigned m_count;
  std::uint64_t m_offset;
  bool m_write;
  rwv_awaiter(const char* name, bool write, int fd, const ::iovec* iov, unsigned n, std::uint64_t off)
      : io_awaiter(name), m_fd(fd), m_iov(iov), m_count(n), m_offset(off), m_write(write) {}
  void submit(event_loop& l) {
    if (m_write)
      ext::submit_writev(l, this, m_fd, m_iov, m_count, m_offset);
    else
      ext::submit_readv(l, this, m_fd, m_iov, m_count, m_offset);
  }
  result<std::size_t> value(int res) const noexcept { return static_cast<std::size_t>(res); }
};

struct timeout_awaiter : io_awaiter<timeout_awaiter, void> {
  kernel_timespec m_ts;
  explicit timeout_awaiter(std::chrono::nanoseconds d) : io_awaiter("timeout"), m_ts(kernel_timespec::from(d)) {}
  void submit(event_loop& l) { ext::submit_timeout(l, this, &m_ts); }
  result<void> value(int) const noexcept { return {}; }
  result<void> await_resume() noexcept {
    if (m_res == -ETIME)
      m_res = 0;  // expiry is the normal end of a timeout, not an error
    return io_awaiter::await_resume();
  }
};

struct cancel_awaiter : io_awaiter<cancel_awaiter, int> {
  const operation* m_target;
  explicit cancel_awaiter(const operation* target) : io_awaiter("cancel"), m_target(target) {}
  void submit(event_loop& l) { ext::submit_cancel(l, m_target, this); }
  result<int> value(int res) const noexcept { return res; }
};

struct poll_awaiter : io_awaiter<poll_awaiter, unsigned> {
  int m_fd;
  unsigned m_events;
  poll_awaiter(int fd, unsigned events) : io_awaiter("poll"), m_fd(fd), m_events(events) {}
  void submit(event_loop& l) { ext::submit_poll(l, this, m_fd, m_events); }
  result<unsigned> value(int res) const noexcept { return static_cast<unsigned>(res); }
};

struct close_awaiter : io_awaiter<close_awaiter, void> {
  int m_fd;
  explicit close_awaiter(int fd) : io_awaiter("close"), m_fd(fd) {}
  void submit(event_loop& l) { ext::submit_close(l, this, m_fd); }
  result<void> value(int) const noexcept { return {}; }
};

}  // namespace detail

/// Awaits an IORING_OP_NOP (a round trip through the ring).
inline detail::nop_awaiter nop() noexcept { return {}; }

/// Reads up to buf.size() bytes at `offset` (-1: the file position); the byte count, 0 at EOF.
inline detail::rw_awaiter read(int fd, std::span<std::byte> buf, std::uint64_t offset = ~std::uint64_t{0}) noexcept {
  return {"read", detail::rw_awaiter::k_read, fd, buf.data(), static_cast<unsigned>(buf.size()), offset, 0};
}
/// Writes up to buf.size() bytes at `offset` (-1: the file position); the byte count.
inline detail::rw_awaiter write(int fd, std::span<const std::byte> buf,
                                std::uint64_t offset = ~std::uint64_t{0}) noexcept {
  return {"write", detail::rw_awaiter::k_write, fd, const_cast<std::byte*>(buf.data()),
          static_cast<unsigned>(buf.size()), offset, 0};
}
/// Reads into registered buffer `buf_index` (event_loop::register_buffers).
inline detail::rw_awaiter read_fixed(int fd, std::span<std::byte> buf, std::uint64_t offset,
                                     unsigned buf_index) noexcept {
  return {"read_fixed", detail::rw_awaiter::k_read_fixed, fd, buf.data(), static_cast<unsigned>(buf.size()),
          offset, buf_index};
}
/// Writes from registered buffer `buf_index`.
inline detail::rw_awaiter write_fixed(int fd, std::span<const std::byte> buf, std::uint64_t offset,
                                      unsigned buf_index) noexcept {
  return {"write_fixed", detail::rw_awaiter::k_write_fixed, fd, const_cast<std::byte*>(buf.data()),
          static_cast<unsigned>(buf.size()), offset, buf_index};
}
/// readv(2); `iov` must stay alive until the await ends.
inline detail::rwv_awaiter readv(int fd, std::span<const ::iovec> iov, std::uint64_t offset = ~std::uint64_t{0}) noexcept {
  return {"readv", false, fd, iov.data(), static_cast<unsigned>(iov.size()), offset};
}
/// writev(2); `iov` must stay alive until the await ends.
inline detail::rwv_awaiter writev(int fd, std::span<const ::iovec> iov, std::uint64_t offset = ~std::uint64_t{0}) noexcept {
  return {"writev", true, fd, iov.data(), static_cast<unsigned>(iov.size()), offset};
}
/// A kernel timeout (IORING_OP_TIMEOUT): succeeds when it expires. Prefer sleep_for, which
/// keeps the timer in the loop; this exists for the kernel-timer semantics.
inline detail::timeout_awaiter kernel_timeout(std::chrono::nanoseconds d) noexcept { return detail::timeout_awaiter(d); }
/// Cancels another in-flight operation: 0 cancelled, or an error (ENOENT: already
/// completed or unknown; EALREADY: running and may still complete).
inline detail::cancel_awaiter cancel(const operation* target) noexcept { return detail::cancel_awaiter(target); }

/// Waits until `fd` is ready for one of `events` (POLLIN, POLLOUT, ... from <poll.h>)
/// through the ring (a one-shot IORING_OP_POLL_ADD), without reading or writing it: the
/// ready mask (POLLHUP/POLLERR may be set whatever was asked), or an error naming "poll".
/// For a descriptor some library reads itself (a resolver's socket) and for a pidfd
/// (POLLIN once the child has exited). Cancellation: a stop of the task's token cancels
/// the poll (std::errc::operation_canceled).
inline detail::poll_awaiter poll(int fd, unsigned events) noexcept { return detail::poll_awaiter(fd, events); }

/// Closes `fd` through the ring (IORING_OP_CLOSE). The descriptor is gone once the await
/// ends, whatever the result; an error (EBADF, EIO from a deferred write) names "close".
inline detail::close_awaiter close(int fd) noexcept { return detail::close_awaiter(fd); }

}  // namespace saturn
