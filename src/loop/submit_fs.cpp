// event_loop::submit_* for files: one SQE each, user_data = the operation. Like
// submit.cpp, nothing here allocates or makes a syscall.
#include <saturn/loop/event_loop.hpp>

#include "ring/ring.hpp"

namespace saturn {

namespace {
inline void tag(io_uring_sqe* sqe, operation* op) { io_uring_sqe_set_data64(sqe, reinterpret_cast<std::uint64_t>(op)); }
}  // namespace

void event_loop::submit_openat(operation* op, int dirfd, const char* path, int flags, unsigned mode) {
  io_uring_sqe* sqe = m_ring->get_sqe();
  // lifetime: the kernel copies `path` when it consumes the SQE (io_uring_enter), which
  // happens before completion; the caller keeps it alive until then.
  io_uring_prep_openat(sqe, dirfd, path, flags, mode);
  tag(sqe, op);
  ++m_in_flight;
}

void event_loop::submit_statx(operation* op, int dirfd, const char* path, int flags, unsigned mask,
                              struct ::statx* out) {
  io_uring_sqe* sqe = m_ring->get_sqe();
  io_uring_prep_statx(sqe, dirfd, path, flags, mask, out);
  tag(sqe, op);
  ++m_in_flight;
}

void event_loop::submit_fsync(operation* op, int fd, bool datasync) {
  io_uring_sqe* sqe = m_ring->get_sqe();
  io_uring_prep_fsync(sqe, fd, datasync ? IORING_FSYNC_DATASYNC : 0);
  tag(sqe, op);
  ++m_in_flight;
}

}  // namespace saturn
