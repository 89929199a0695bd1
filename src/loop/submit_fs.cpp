// event_loop::submit_* for files: one SQE each, user_data = the operation. Like
// submit.cpp, nothing here allocates or makes a syscall.
#include <saturn/loop/event_loop.hpp>

#include "loop/sqe.hpp"
#include "ring/ring.hpp"

namespace saturn {


void event_loop::submit_openat(operation* op, int dirfd, const char* path, int flags, unsigned mode) {
  io_uring_sqe* sqe = m_ring->try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&event_loop::submit_openat>(*m_ring, this, op, dirfd, path, flags, mode);
  // lifetime: the kernel copies `path` when it consumes the SQE (io_uring_enter), which
  // happens before completion; the caller keeps it alive until then.
  io_uring_prep_openat(sqe, dirfd, path, flags, mode);
  detail::tag(sqe, op);
  ++m_in_flight;
}

void event_loop::submit_openat2(operation* op, int dirfd, const char* path, ::open_how* how) {
  io_uring_sqe* sqe = m_ring->try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&event_loop::submit_openat2>(*m_ring, this, op, dirfd, path, how);
  // lifetime: like openat, the kernel copies `path` and `*how` when it consumes the SQE.
  io_uring_prep_openat2(sqe, dirfd, path, how);
  detail::tag(sqe, op);
  ++m_in_flight;
}

void event_loop::submit_statx(operation* op, int dirfd, const char* path, int flags, unsigned mask,
                              struct ::statx* out) {
  io_uring_sqe* sqe = m_ring->try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&event_loop::submit_statx>(*m_ring, this, op, dirfd, path, flags, mask, out);
  io_uring_prep_statx(sqe, dirfd, path, flags, mask, out);
  detail::tag(sqe, op);
  ++m_in_flight;
}

void event_loop::submit_fsync(operation* op, int fd, bool datasync) {
  io_uring_sqe* sqe = m_ring->try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&event_loop::submit_fsync>(*m_ring, this, op, fd, datasync);
  io_uring_prep_fsync(sqe, fd, datasync ? IORING_FSYNC_DATASYNC : 0);
  detail::tag(sqe, op);
  ++m_in_flight;
}

}  // namespace saturn
