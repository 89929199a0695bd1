// The simulated kernel's disk model (saturn/sim/world.hpp): regular files written through a
// simulated ring keep an undo log of what is not yet fsynced, so sim::world::crash() can
// drop it as a power loss would; options::disk_space bounds how far files may grow (short
// writes, then ENOSPC). Files stay real: the model only remembers what to undo.
// Single-threaded: the world's thread.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace saturn::ring {

class sim_disk {
 public:
  explicit sim_disk(std::uint64_t space) noexcept : m_space(space) {}
  ~sim_disk();
  sim_disk(const sim_disk&) = delete;
  sim_disk& operator=(const sim_disk&) = delete;

  /// Before a write of `len` bytes to `fd` at `offset` (~0: the file position, or its end
  /// under O_APPEND). Returns how many bytes may be written (`len`, fewer when the disk
  /// fills), or -ENOSPC; 0 for nothing to do. Records the undo of what the write may
  /// change when `fd` is a regular file; other descriptors get `len` back untouched.
  long before_write(int fd, std::uint64_t offset, std::size_t len);
  /// After a write that moved `written` of the `allowed` bytes before_write() returned:
  /// gives back the space the write did not use.
  void after_write(int fd, long allowed, long written) noexcept;
  /// An fsync or fdatasync of `fd`: when it is a regular file, its writes so far become
  /// durable and true is returned (the sync succeeded); false for anything else (the
  /// caller syncs it for real).
  bool synced(int fd) noexcept;
  /// Undoes every write not yet synced, in every file written (see world::crash).
  /// Returns the number of files changed.
  std::size_t crash() noexcept;
  /// Bytes by which files grew through simulated writes (what disk_space bounds).
  std::uint64_t used() const noexcept { return m_used; }

 private:
  struct file_log {
    int fd = -1;  // our own read-write descriptor of the file (the program's may be closed)
    std::uint64_t synced_size = 0;  // the size durable on the "disk"
    /// Old bytes of ranges inside synced_size that writes overwrote, oldest first.
    std::vector<std::pair<std::uint64_t, std::vector<std::byte>>> undo;
  };
  using file_id = std::pair<dev_t, ino_t>;
  std::uint64_t m_space;
  std::uint64_t m_used = 0;
  std::uint64_t m_pending_growth = 0;  // reserved by before_write, settled by after_write
  std::map<file_id, file_log> m_files;
};

}  // namespace saturn::ring
