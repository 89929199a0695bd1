// ext::submit_*: turn a request into one SQE whose user_data is the operation.
// Nothing here allocates or makes a syscall; the SQEs go to the kernel in the loop's
// single io_uring_enter per iteration.
#include <saturn/ext/submit.hpp>
#include <saturn/loop/event_loop.hpp>

#include "loop/sqe.hpp"
#include "loop/user_data.hpp"
#include "ring/ring.hpp"

namespace saturn {

static_assert(sizeof(kernel_timespec) == sizeof(__kernel_timespec));
static_assert(alignof(kernel_timespec) == alignof(__kernel_timespec));

void ext::submit_nop(event_loop& l, operation* op) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_nop>(r, l, op);
  io_uring_prep_nop(sqe);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_read(event_loop& l, operation* op, int fd, void* buf, unsigned len, std::uint64_t offset) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_read>(r, l, op, fd, buf, len, offset);
  io_uring_prep_read(sqe, fd, buf, len, offset);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_write(event_loop& l, operation* op, int fd, const void* buf, unsigned len, std::uint64_t offset) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_write>(r, l, op, fd, buf, len, offset);
  io_uring_prep_write(sqe, fd, buf, len, offset);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_read_fixed(event_loop& l, operation* op, int fd, void* buf, unsigned len, std::uint64_t offset,
                            unsigned buf_index) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_read_fixed>(r, l, op, fd, buf, len, offset, buf_index);
  io_uring_prep_read_fixed(sqe, fd, buf, len, offset, static_cast<int>(buf_index));
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_write_fixed(event_loop& l, operation* op, int fd, const void* buf, unsigned len, std::uint64_t offset,
                             unsigned buf_index) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_write_fixed>(r, l, op, fd, buf, len, offset, buf_index);
  io_uring_prep_write_fixed(sqe, fd, buf, len, offset, static_cast<int>(buf_index));
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_readv(event_loop& l, operation* op, int fd, const ::iovec* iov, unsigned count, std::uint64_t offset) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_readv>(r, l, op, fd, iov, count, offset);
  io_uring_prep_readv(sqe, fd, iov, count, offset);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_writev(event_loop& l, operation* op, int fd, const ::iovec* iov, unsigned count,
                        std::uint64_t offset) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_writev>(r, l, op, fd, iov, count, offset);
  io_uring_prep_writev(sqe, fd, iov, count, offset);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_timeout(event_loop& l, operation* op, const kernel_timespec* ts, bool absolute) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_timeout>(r, l, op, ts, absolute);
  // lifetime: the kernel reads *ts when it consumes the SQE; the caller keeps it alive
  // until completion, which is later.
  io_uring_prep_timeout(sqe, reinterpret_cast<__kernel_timespec*>(const_cast<kernel_timespec*>(ts)), 0,
                        absolute ? IORING_TIMEOUT_ABS : 0);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_poll(event_loop& l, operation* op, int fd, unsigned events) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_poll>(r, l, op, fd, events);
  io_uring_prep_poll_add(sqe, fd, events);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_waitid(event_loop& l, operation* op, int idtype, int id, ::siginfo_t* info, int options) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_waitid>(r, l, op, idtype, id, info, options);
  // liburing 2.3 has no io_uring_prep_waitid: the fields as io_uring/waitid.c reads them
  // (ring.hpp, op_waitid). io_uring_prep_rw zeroes addr/buf_index/addr3 and the op flags.
  io_uring_prep_rw(ring::op_waitid, sqe, id, nullptr, static_cast<unsigned>(idtype), 0);
  sqe->file_index = static_cast<unsigned>(options);
  sqe->addr2 = reinterpret_cast<std::uint64_t>(info);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

bool ext::supports_waitid(const event_loop& l) noexcept {
  return detail::loop_internals::ring(l).supports(ring::op_waitid);
}

void ext::submit_close(event_loop& l, operation* op, int fd) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_close>(r, l, op, fd);
  io_uring_prep_close(sqe, fd);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_cancel(event_loop& l, const operation* target, operation* op) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_cancel>(r, l, target, op);
  io_uring_prep_cancel64(sqe, reinterpret_cast<std::uint64_t>(target), 0);
  if (op != nullptr) {
    detail::tag(sqe, op);
    detail::count_in_flight(l);
  } else {
    io_uring_sqe_set_data64(sqe, detail::ud_ignore);
  }
}

void ext::link_timeout(event_loop& l, const kernel_timespec* ts, operation* op) {
  io_uring_sqe* sqe = detail::loop_internals::ring(l).get_linked_sqe();
  io_uring_prep_link_timeout(sqe, reinterpret_cast<__kernel_timespec*>(const_cast<kernel_timespec*>(ts)), 0);
  if (op != nullptr) {
    detail::tag(sqe, op);
    detail::count_in_flight(l);
  } else {
    io_uring_sqe_set_data64(sqe, detail::ud_ignore);
  }
}

std::error_code ext::register_buffers(event_loop& l, std::span<const ::iovec> buffers) {
  int r = detail::loop_internals::ring(l).register_buffers(buffers.data(), static_cast<unsigned>(buffers.size()));
  return r < 0 ? std::error_code(-r, std::system_category()) : std::error_code{};
}

void ext::unregister_buffers(event_loop& l) noexcept { detail::loop_internals::ring(l).unregister_buffers(); }

}  // namespace saturn
