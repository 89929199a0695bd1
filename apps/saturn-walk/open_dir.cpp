// Opening directories (open_dir.hpp).
#include "open_dir.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>

namespace walk {

bool fills_to_eof(int fd) noexcept {
  struct ::statfs s;
  if (::fstatfs(fd, &s) != 0)
    return false;
  switch (static_cast<unsigned long>(s.f_type)) {
    case EXT4_SUPER_MAGIC:  // also ext2/ext3
    case TMPFS_MAGIC:
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
      return true;
    default:
      return false;
  }
}

int open_child(int parent, const char* name, bool& trusted, bool full_reads) noexcept {
  ::open_how how{};
  how.flags = k_dir_open_flags;
  how.resolve = RESOLVE_NO_XDEV;
  const long fd = ::syscall(SYS_openat2, parent, name, &how, sizeof how);
  if (fd >= 0)
    return static_cast<int>(fd);
  const int e = errno;
  if (e != EXDEV && e != ENOSYS)
    return -e;
  // A mount point (or no openat2): open normally and look at the file system below.
  const int fd2 = ::openat(parent, name, k_dir_open_flags);
  if (fd2 < 0)
    return -errno;
  trusted = e == EXDEV && !full_reads && fills_to_eof(fd2);  // no openat2: cannot tell, so no
  return fd2;
}

}  // namespace walk
