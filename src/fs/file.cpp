// fs::file: open/close (the other operations are header-only awaiters).
#include <saturn/fs/file.hpp>

#include <unistd.h>

namespace saturn::fs {

file& file::operator=(file&& o) noexcept {
  if (this != &o) {
    if (m_fd >= 0)
      ::close(m_fd);
    m_fd = o.m_fd;
    m_path = std::move(o.m_path);
    o.m_fd = -1;
  }
  return *this;
}

file::~file() {
  if (m_fd >= 0)
    ::close(m_fd);
}

task<fs_result<file>> file::open(std::string path, int flags, unsigned mode) {
  co_return co_await open_at(AT_FDCWD, std::move(path), flags, mode);
}

task<fs_result<file>> file::open_at(int dirfd, std::string path, int flags, unsigned mode) {
  // lifetime: `path` lives in this frame until the CQE, so the kernel may read it at submit.
  detail::openat_awaiter aw(dirfd, path.c_str(), flags | O_CLOEXEC, mode);
  result<int> fd = co_await aw;
  if (!fd)
    co_return with_path(fd.err(), std::move(path));
  co_return file(*fd, std::move(path));
}

task<fs_result<file>> file::open_at2(int dirfd, std::string path, int flags, std::uint64_t resolve, unsigned mode) {
  // lifetime: `path` and `how` live in this frame until the CQE.
  ::open_how how{};
  how.flags = static_cast<std::uint64_t>(static_cast<unsigned>(flags | O_CLOEXEC));
  how.mode = (flags & (O_CREAT | O_TMPFILE)) != 0 ? mode : 0;  // openat2 refuses a mode without them
  how.resolve = resolve;
  detail::openat2_awaiter aw(dirfd, path.c_str(), &how);
  result<int> fd = co_await aw;
  if (!fd)
    co_return with_path(fd.err(), std::move(path));
  co_return file(*fd, std::move(path));
}

task<fs_result<void>> file::close() {
  const int fd = release();
  saturn::detail::close_awaiter aw(fd);
  result<void> r = co_await aw;
  if (!r)
    co_return with_path(r.err(), m_path);
  co_return fs_result<void>{};
}

}  // namespace saturn::fs
