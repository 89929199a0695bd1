// event_loop::submit_*: turn a request into one SQE whose user_data is the operation.
// Nothing here allocates or makes a syscall; the SQEs go to the kernel in the loop's
// single io_uring_enter per iteration.
#include <saturn/loop/event_loop.hpp>

#include "loop/sqe.hpp"
#include "loop/user_data.hpp"
#include "ring/ring.hpp"

namespace saturn {

static_assert(sizeof(kernel_timespec) == sizeof(__kernel_timespec));
static_assert(alignof(kernel_timespec) == alignof(__kernel_timespec));


void event_loop::submit_nop(operation* op) {
  io_uring_sqe* sqe = m_ring->try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&event_loop::submit_nop>(*m_ring, this, op);
  io_uring_prep_nop(sqe);
  detail::tag(sqe, op);
  ++m_in_flight;
}

void event_loop::submit_read(operation* op, int fd, void* buf, unsigned len, std::uint64_t offset) {
  io_uring_sqe* sqe = m_ring->try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&event_loop::submit_read>(*m_ring, this, op, fd, buf, len, offset);
  io_uring_prep_read(sqe, fd, buf, len, offset);
  detail::tag(sqe, op);
  ++m_in_flight;
}

void event_loop::submit_write(operation* op, int fd, const void* buf, unsigned len, std::uint64_t offset) {
  io_uring_sqe* sqe = m_ring->try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&event_loop::submit_write>(*m_ring, this, op, fd, buf, len, offset);
  io_uring_prep_write(sqe, fd, buf, len, offset);
  detail::tag(sqe, op);
  ++m_in_flight;
}

void event_loop::submit_read_fixed(operation* op, int fd, void* buf, unsigned len, std::uint64_t offset,
                                   unsigned buf_index) {
  io_uring_sqe* sqe = m_ring->try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&event_loop::submit_read_fixed>(*m_ring, this, op, fd, buf, len, offset, buf_index);
  io_uring_prep_read_fixed(sqe, fd, buf, len, offset, static_cast<int>(buf_index));
  detail::tag(sqe, op);
  ++m_in_flight;
}

void event_loop::submit_write_fixed(operation* op, int fd, const void* buf, unsigned len, std::uint64_t offset,
                                    unsigned buf_index) {
  io_uring_sqe* sqe = m_ring->try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&event_loop::submit_write_fixed>(*m_ring, this, op, fd, buf, len, offset, buf_index);
  io_uring_prep_write_fixed(sqe, fd, buf, len, offset, static_cast<int>(buf_index));
  detail::tag(sqe, op);
  ++m_in_flight;
}

void event_loop::submit_readv(operation* op, int fd, const ::iovec* iov, unsigned count, std::uint64_t offset) {
  io_uring_sqe* sqe = m_ring->try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&event_loop::submit_readv>(*m_ring, this, op, fd, iov, count, offset);
  io_uring_prep_readv(sqe, fd, iov, count, offset);
  detail::tag(sqe, op);
  ++m_in_flight;
}

void event_loop::submit_writev(operation* op, int fd, const ::iovec* iov, unsigned count, std::uint64_t offset) {
  io_uring_sqe* sqe = m_ring->try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&event_loop::submit_writev>(*m_ring, this, op, fd, iov, count, offset);
  io_uring_prep_writev(sqe, fd, iov, count, offset);
  detail::tag(sqe, op);
  ++m_in_flight;
}

void event_loop::submit_timeout(operation* op, const kernel_timespec* ts, bool absolute) {
  io_uring_sqe* sqe = m_ring->try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&event_loop::submit_timeout>(*m_ring, this, op, ts, absolute);
  // lifetime: the kernel reads *ts when it consumes the SQE; the caller keeps it alive
  // until completion, which is later.
  io_uring_prep_timeout(sqe, reinterpret_cast<__kernel_timespec*>(const_cast<kernel_timespec*>(ts)), 0,
                        absolute ? IORING_TIMEOUT_ABS : 0);
  detail::tag(sqe, op);
  ++m_in_flight;
}

void event_loop::submit_poll(operation* op, int fd, unsigned events) {
  io_uring_sqe* sqe = m_ring->try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&event_loop::submit_poll>(*m_ring, this, op, fd, events);
  io_uring_prep_poll_add(sqe, fd, events);
  detail::tag(sqe, op);
  ++m_in_flight;
}

void event_loop::submit_waitid(operation* op, int idtype, int id, ::siginfo_t* info, int options) {
  io_uring_sqe* sqe = m_ring->try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&event_loop::submit_waitid>(*m_ring, this, op, idtype, id, info, options);
  // liburing 2.3 has no io_uring_prep_waitid: the fields as io_uring/waitid.c reads them
  // (ring.hpp, op_waitid). io_uring_prep_rw zeroes addr/buf_index/addr3 and the op flags.
  io_uring_prep_rw(ring::op_waitid, sqe, id, nullptr, static_cast<unsigned>(idtype), 0);
  sqe->file_index = static_cast<unsigned>(options);
  sqe->addr2 = reinterpret_cast<std::uint64_t>(info);
  detail::tag(sqe, op);
  ++m_in_flight;
}

bool event_loop::supports_waitid() const noexcept { return m_ring->supports(ring::op_waitid); }

void event_loop::submit_close(operation* op, int fd) {
  io_uring_sqe* sqe = m_ring->try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&event_loop::submit_close>(*m_ring, this, op, fd);
  io_uring_prep_close(sqe, fd);
  detail::tag(sqe, op);
  ++m_in_flight;
}

void event_loop::submit_cancel(const operation* target, operation* op) {
  io_uring_sqe* sqe = m_ring->try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&event_loop::submit_cancel>(*m_ring, this, target, op);
  io_uring_prep_cancel64(sqe, reinterpret_cast<std::uint64_t>(target), 0);
  if (op != nullptr) {
    detail::tag(sqe, op);
    ++m_in_flight;
  } else {
    io_uring_sqe_set_data64(sqe, detail::ud_ignore);
  }
}

void event_loop::link_timeout(const kernel_timespec* ts, operation* op) {
  io_uring_sqe* sqe = m_ring->get_linked_sqe();
  io_uring_prep_link_timeout(sqe, reinterpret_cast<__kernel_timespec*>(const_cast<kernel_timespec*>(ts)), 0);
  if (op != nullptr) {
    detail::tag(sqe, op);
    ++m_in_flight;
  } else {
    io_uring_sqe_set_data64(sqe, detail::ud_ignore);
  }
}

std::error_code event_loop::register_buffers(std::span<const ::iovec> buffers) {
  int r = m_ring->register_buffers(buffers.data(), static_cast<unsigned>(buffers.size()));
  return r < 0 ? std::error_code(-r, std::system_category()) : std::error_code{};
}

void event_loop::unregister_buffers() noexcept { m_ring->unregister_buffers(); }

}  // namespace saturn
