// Opening a directory below another one, the way the walk does it.
#pragma once

#include <fcntl.h>

namespace saturn::fs::walk_detail {

/// The flags of every directory the walk opens: never a symlink, never a non-directory
/// (so never a fifo, which would block).
inline constexpr int k_dir_open_flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

/// True if the file system of `fd` fills a getdents64 buffer up to the end of the
/// directory (ext2/3/4, tmpfs, xfs, btrfs), so a batch with room left is the last.
bool fills_to_eof(int fd) noexcept;

/// Opens `name` below `parent` without following a symlink; -errno on failure. When the
/// child is a mount point, `trusted` (the end-of-directory shortcut) is re-decided for
/// its file system, and cleared if `full_reads`; with `same_fs` a mount point is not
/// opened (-EXDEV). Any thread; blocks in the kernel only.
int open_child(int parent, const char* name, bool& trusted, bool full_reads, bool same_fs) noexcept;

}  // namespace saturn::fs::walk_detail
