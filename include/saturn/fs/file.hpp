/// \file
/// `fs::file`: an open file whose operations are io_uring awaitables (openat, read/write at
/// an offset — plain or from a registered buffer —, readv/writev, fsync/fdatasync, statx,
/// close). Every failure is an fs_error naming the operation and the file's path:
///
/// ```
/// auto f = co_await fs::file::open("/var/log/app.log", O_RDONLY);
/// if (!f) { log(f.err().message()); co_return; }   // "open /var/log/app.log: No such file..."
/// std::byte buf[4096];
/// auto n = co_await f->read_at(buf, 0);             // fs_result<std::size_t>
/// ```
///
/// Threading: a file is a value owned by one task at a time; await its operations only from
/// a saturn task on a thread with an event loop (runtime, or a thread_pool in io mode). The
/// file (and the buffers) must outlive an await on it. Cancellation: every await is
/// cancellable through the task's stop token (IORING_OP_ASYNC_CANCEL); it then ends with
/// std::errc::operation_canceled once the kernel has let go of the buffers.
#pragma once

#include <saturn/ext/submit_fs.hpp>
#include <saturn/fs/fs_error.hpp>
#include <saturn/task/io.hpp>
#include <saturn/task/task.hpp>

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>

#include <cstdint>
#include <span>
#include <string>

namespace saturn::fs {
namespace detail {

/// Wraps a ring awaitable so its error carries the file's path.
template <class Inner, class T>
struct path_awaiter {
  Inner m_inner;
  const std::string* m_path;

  bool await_ready() const noexcept { return false; }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) {
    return m_inner.await_suspend(h);
  }
  fs_result<T> await_resume() {
    auto r = m_inner.await_resume();
    if (!r)
      return with_path(r.err(), *m_path);
    if constexpr (std::is_void_v<T>)
      return {};
    else
      return std::move(*r);
  }
};

/// IORING_OP_FSYNC (optionally DATASYNC).
struct fsync_awaiter : saturn::detail::io_awaiter<fsync_awaiter, void> {
  int m_fd;
  bool m_datasync;
  fsync_awaiter(int fd, bool datasync) : io_awaiter(datasync ? "fdatasync" : "fsync"), m_fd(fd), m_datasync(datasync) {}
  void submit(event_loop& l) { ext::submit_fsync(l, this, m_fd, m_datasync); }
  result<void> value(int) const noexcept { return {}; }
};

/// IORING_OP_STATX of the descriptor itself (AT_EMPTY_PATH); the awaiter owns the buffer.
struct statx_awaiter : saturn::detail::io_awaiter<statx_awaiter, struct ::statx> {
  int m_fd;
  unsigned m_mask;
  struct ::statx m_buf {};
  statx_awaiter(int fd, unsigned mask) : io_awaiter("statx"), m_fd(fd), m_mask(mask) {}
  void submit(event_loop& l) { ext::submit_statx(l, this, m_fd, "", AT_EMPTY_PATH, m_mask, &m_buf); }
  result<struct ::statx> value(int) const noexcept { return m_buf; }
};

/// IORING_OP_OPENAT; `path` must outlive the await.
struct openat_awaiter : saturn::detail::io_awaiter<openat_awaiter, int> {
  int m_dirfd;
  const char* m_path;
  int m_flags;
  unsigned m_mode;
  openat_awaiter(int dirfd, const char* path, int flags, unsigned mode)
      : io_awaiter("open"), m_dirfd(dirfd), m_path(path), m_flags(flags), m_mode(mode) {}
  void submit(event_loop& l) { ext::submit_openat(l, this, m_dirfd, m_path, m_flags, m_mode); }
  result<int> value(int fd) const noexcept { return fd; }
};

/// IORING_OP_OPENAT2; `path` and `how` must outlive the await.
struct openat2_awaiter : saturn::detail::io_awaiter<openat2_awaiter, int> {
  int m_dirfd;
  const char* m_path;
  ::open_how* m_how;
  openat2_awaiter(int dirfd, const char* path, ::open_how* how)
      : io_awaiter("open"), m_dirfd(dirfd), m_path(path), m_how(how) {}
  void submit(event_loop& l) { ext::submit_openat2(l, this, m_dirfd, m_path, m_how); }
  result<int> value(int fd) const noexcept { return fd; }
};

}  // namespace detail

/// An open file descriptor plus the path it was opened with (for error messages).
class file {
 public:
  using rw_awaiter = detail::path_awaiter<saturn::detail::rw_awaiter, std::size_t>;
  using rwv_awaiter = detail::path_awaiter<saturn::detail::rwv_awaiter, std::size_t>;
  using sync_awaiter = detail::path_awaiter<detail::fsync_awaiter, void>;
  using stat_awaiter = detail::path_awaiter<detail::statx_awaiter, struct ::statx>;

  /// A closed file.
  file() noexcept = default;
  /// Adopts `fd` (closed by the destructor unless close() or release() is called first).
  file(int fd, std::string path) noexcept : m_fd(fd), m_path(std::move(path)) {}
  file(file&& o) noexcept : m_fd(o.m_fd), m_path(std::move(o.m_path)) { o.m_fd = -1; }
  file& operator=(file&& o) noexcept;
  file(const file&) = delete;
  file& operator=(const file&) = delete;
  /// Closes the descriptor synchronously if it is still open (close(2) cannot be awaited
  /// here; await close() to see its error).
  ~file();

  /// Opens `path` (relative to the working directory) with open(2) `flags` (O_CLOEXEC is
  /// always added) through IORING_OP_OPENAT. Errors: "open <path>: ...". Suspends.
  static task<fs_result<file>> open(std::string path, int flags = O_RDONLY, unsigned mode = 0644);
  /// Opens `path` relative to the directory descriptor `dirfd` (AT_FDCWD: the working directory).
  static task<fs_result<file>> open_at(int dirfd, std::string path, int flags = O_RDONLY, unsigned mode = 0644);
  /// Opens `path` relative to `dirfd` through IORING_OP_OPENAT2 (Linux >= 5.6) with the
  /// path-resolution restrictions `resolve` (RESOLVE_BENEATH, RESOLVE_NO_MAGICLINKS, ...:
  /// see openat2(2)); O_CLOEXEC is always added. A lookup the restrictions refuse fails
  /// with EXDEV (or ELOOP for magic links); a kernel without openat2 fails with EINVAL or
  /// ENOSYS. Errors: "open <path>: ...". Suspends.
  static task<fs_result<file>> open_at2(int dirfd, std::string path, int flags, std::uint64_t resolve,
                                        unsigned mode = 0);

  /// Reads up to buf.size() bytes at `offset`; the count (0 at end of file). May be short.
  rw_awaiter read_at(std::span<std::byte> buf, std::uint64_t offset) const noexcept {
    return {saturn::read(m_fd, buf, offset), &m_path};
  }
  /// Writes up to buf.size() bytes at `offset`; the count. May be short.
  rw_awaiter write_at(std::span<const std::byte> buf, std::uint64_t offset) const noexcept {
    return {saturn::write(m_fd, buf, offset), &m_path};
  }
  /// read_at into registered buffer `buf_index` (event_loop::register_buffers of the
  /// awaiting thread's loop); `buf` must lie inside that buffer.
  rw_awaiter read_fixed_at(std::span<std::byte> buf, std::uint64_t offset, unsigned buf_index) const noexcept {
    return {saturn::read_fixed(m_fd, buf, offset, buf_index), &m_path};
  }
  /// write_at from registered buffer `buf_index`.
  rw_awaiter write_fixed_at(std::span<const std::byte> buf, std::uint64_t offset, unsigned buf_index) const noexcept {
    return {saturn::write_fixed(m_fd, buf, offset, buf_index), &m_path};
  }
  /// preadv(2); `iov` and its buffers must outlive the await.
  rwv_awaiter readv_at(std::span<const ::iovec> iov, std::uint64_t offset) const noexcept {
    return {saturn::readv(m_fd, iov, offset), &m_path};
  }
  /// pwritev(2); `iov` and its buffers must outlive the await.
  rwv_awaiter writev_at(std::span<const ::iovec> iov, std::uint64_t offset) const noexcept {
    return {saturn::writev(m_fd, iov, offset), &m_path};
  }
  /// fsync(2): data and metadata reach stable storage.
  sync_awaiter sync() const noexcept { return {detail::fsync_awaiter(m_fd, false), &m_path}; }
  /// fdatasync(2): data (and the metadata needed to read it back) reach stable storage.
  sync_awaiter datasync() const noexcept { return {detail::fsync_awaiter(m_fd, true), &m_path}; }
  /// statx(2) of the open file (`mask`: STATX_* fields wanted).
  stat_awaiter stat(unsigned mask = STATX_BASIC_STATS) const noexcept {
    return {detail::statx_awaiter(m_fd, mask), &m_path};
  }
  /// Closes through the ring (IORING_OP_CLOSE). The descriptor is gone afterwards whatever
  /// the result; an error (EIO from a deferred write) is "close <path>: ...".
  task<fs_result<void>> close();

  /// The descriptor (-1 when closed).
  int fd() const noexcept { return m_fd; }
  /// The path given to open (for messages; the file may since have been renamed).
  const std::string& path() const noexcept { return m_path; }
  bool is_open() const noexcept { return m_fd >= 0; }
  /// Gives up ownership of the descriptor and returns it.
  int release() noexcept {
    int fd = m_fd;
    m_fd = -1;
    return fd;
  }

 private:
  int m_fd = -1;
  std::string m_path;
};

}  // namespace saturn::fs
