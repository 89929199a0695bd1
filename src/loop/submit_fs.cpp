// ext::submit_* for files: one SQE each, user_data = the operation. Like
// submit.cpp, nothing here allocates or makes a syscall.
#include <saturn/ext/submit_fs.hpp>
#include <saturn/loop/event_loop.hpp>

#include "loop/sqe.hpp"
#include "ring/ring.hpp"

namespace saturn {

void ext::submit_openat(event_loop& l, operation* op, int dirfd, const char* path, int flags, unsigned mode) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_openat>(r, l, op, dirfd, path, flags, mode);
  // lifetime: the kernel copies `path` when it consumes the SQE (io_uring_enter), which
  // happens before completion; the caller keeps it alive until then.
  io_uring_prep_openat(sqe, dirfd, path, flags, mode);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_openat2(event_loop& l, operation* op, int dirfd, const char* path, ::open_how* how) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_openat2>(r, l, op, dirfd, path, how);
  // lifetime: like openat, the kernel copies `path` and `*how` when it consumes the SQE.
  io_uring_prep_openat2(sqe, dirfd, path, how);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_statx(event_loop& l, operation* op, int dirfd, const char* path, int flags, unsigned mask,
                       struct ::statx* out) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_statx>(r, l, op, dirfd, path, flags, mask, out);
  io_uring_prep_statx(sqe, dirfd, path, flags, mask, out);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

void ext::submit_fsync(event_loop& l, operation* op, int fd, bool datasync) {
  ring::uring& r = detail::loop_internals::ring(l);
  io_uring_sqe* sqe = r.try_get_sqe();
  if (sqe == nullptr) [[unlikely]]
    return detail::after_flush<&ext::submit_fsync>(r, l, op, fd, datasync);
  io_uring_prep_fsync(sqe, fd, datasync ? IORING_FSYNC_DATASYNC : 0);
  detail::tag(sqe, op);
  detail::count_in_flight(l);
}

}  // namespace saturn
