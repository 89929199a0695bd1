// Opening directories (open_dir.hpp).
#include "open_dir.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>

namespace saturn::fs::walk_detail {

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

int open_child(int parent, const char* name, bool& trusted, bool full_reads, bool same_fs) noexcept {
  ::open_how how{};
  how.flags = k_dir_open_flags;
  how.resolve = RESOLVE_NO_XDEV;
  const long fd = ::syscall(SYS_openat2, parent, name, &how, sizeof how);
  if (fd >= 0)
    return static_cast<int>(fd);
  const int e = errno;
  if (e != EXDEV && e != ENOSYS)
    return -e;
  if (e == EXDEV && same_fs)
    return -EXDEV;
  // A mount point (or no openat2): open normally and look at the file system below.
  const int fd2 = ::openat(parent, name, k_dir_open_flags);
  if (fd2 < 0)
    return -errno;
  if (same_fs) {  // no openat2: compare the devices
    struct ::stat a;
    struct ::stat b;
    if (::fstat(parent, &a) != 0 || ::fstat(fd2, &b) != 0 || a.st_dev != b.st_dev) {
      ::close(fd2);
      return -EXDEV;
    }
  }
  trusted = e == EXDEV && !full_reads && fills_to_eof(fd2);  // no openat2: cannot tell, so no
  return fd2;
}

}  // namespace saturn::fs::walk_detail
