/// \file
/// The raw file operations on the ring (the implementer part of the loop, used by
/// saturn/fs): openat, openat2, statx, fsync. read/write/close are in saturn/ext/submit.hpp.
///
/// Threading, lifetime and cost as in saturn/ext/submit.hpp: call on `loop`'s own thread;
/// none blocks or suspends; `op` and everything the request names stay alive until
/// `op->m_complete` has run.
#pragma once

#include <saturn/ext/operation.hpp>

struct statx;
struct open_how;

namespace saturn {

class event_loop;

namespace ext {

/// openat(2) of `path` relative to `dirfd` (AT_FDCWD: the working directory). `path`
/// must stay alive until completion. Completes with the new descriptor or -errno.
void submit_openat(event_loop& loop, operation* op, int dirfd, const char* path, int flags, unsigned mode);
/// openat2(2) (IORING_OP_OPENAT2, Linux >= 5.6) of `path` relative to `dirfd` with `*how`
/// (flags, mode, RESOLVE_* restrictions). `path` and `how` must stay alive until
/// completion. Completes with the new descriptor or -errno (-EINVAL from a kernel without
/// the opcode).
void submit_openat2(event_loop& loop, operation* op, int dirfd, const char* path, ::open_how* how);
/// statx(2) of `path` relative to `dirfd` (empty path + AT_EMPTY_PATH: `dirfd` itself)
/// into `*out`. `path` and `out` must stay alive until completion. Completes with 0 or -errno.
void submit_statx(event_loop& loop, operation* op, int dirfd, const char* path, int flags, unsigned mask,
                  struct ::statx* out);
/// fsync(2), or fdatasync(2) when `datasync`. Completes with 0 or -errno.
void submit_fsync(event_loop& loop, operation* op, int fd, bool datasync);

}  // namespace ext
}  // namespace saturn
