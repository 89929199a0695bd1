/// \file
/// Directory listing with getdents64(2) directly (io_uring has no readdir opcode): the
/// caller's buffer receives as many entries as fit per call, the type comes from d_type,
/// and only entries whose file system leaves d_type unknown cost an fstatat.
///
/// ```
/// alignas(8) std::byte buf[32 * 1024];
/// fs::dir_reader r(fd, buf);
/// for (;;) {
///   long n = r.read_raw();                   // bytes of the next batch, or -errno
///   if (n <= 0) break;                       // 0: the end of the directory
///   for (fs::dir_entry e : r.batch(n)) use(e.name);   // "." and ".." are skipped
/// }
/// ```
///
/// Threading: a dir_reader is used by one thread at a time; its calls block in the kernel
/// (no suspension), so from an io-mode task prefer spawn_blocking for huge directories.
#pragma once

#include <saturn/fs/fs_error.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace saturn::fs {

/// What a directory entry is (without following a symlink).
enum class entry_type : std::uint8_t { unknown, regular, directory, symlink, block, character, fifo, socket };

/// The entry_type of a d_type value (DT_UNKNOWN -> unknown).
constexpr entry_type type_of_dtype(unsigned char d) noexcept {
  switch (d) {
    case DT_REG: return entry_type::regular;
    case DT_DIR: return entry_type::directory;
    case DT_LNK: return entry_type::symlink;
    case DT_BLK: return entry_type::block;
    case DT_CHR: return entry_type::character;
    case DT_FIFO: return entry_type::fifo;
    case DT_SOCK: return entry_type::socket;
    default: return entry_type::unknown;
  }
}

/// The entry_type of an st_mode.
constexpr entry_type type_of_mode(unsigned mode) noexcept {
  switch (mode & S_IFMT) {
    case S_IFREG: return entry_type::regular;
    case S_IFDIR: return entry_type::directory;
    case S_IFLNK: return entry_type::symlink;
    case S_IFBLK: return entry_type::block;
    case S_IFCHR: return entry_type::character;
    case S_IFIFO: return entry_type::fifo;
    case S_IFSOCK: return entry_type::socket;
    default: return entry_type::unknown;
  }
}

/// One entry of a batch; `name` points into the reader's buffer (valid until the next read).
struct dir_entry {
  std::string_view name;
  entry_type type;  ///< unknown when the file system did not fill d_type (see resolve_type)
  std::uint64_t inode;
};

/// The type of `name` inside the directory `dirfd` by fstatat(AT_SYMLINK_NOFOLLOW), for
/// entries whose d_type is DT_UNKNOWN. Returns -errno on failure. Blocks.
inline int resolve_type(int dirfd, const char* name, entry_type& out) noexcept {
  struct ::stat st;
  if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return -errno;
  out = type_of_mode(st.st_mode);
  return 0;
}

/// True for "." and "..".
inline bool is_dot_or_dotdot(const char* n) noexcept {
  return n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'));
}

/// The entries returned by one getdents64 call.
class dirent_batch {
 public:
  class iterator {
   public:
    iterator(const std::byte* p, const std::byte* end) noexcept : m_p(p), m_end(end) { skip_dots(); }
    dir_entry operator*() const noexcept {
      const auto* d = reinterpret_cast<const struct ::dirent64*>(m_p);
      return {std::string_view(d->d_name), type_of_dtype(d->d_type), d->d_ino};
    }
    iterator& operator++() noexcept {
      advance();
      skip_dots();
      return *this;
    }
    bool operator==(const iterator& o) const noexcept { return m_p == o.m_p; }

   private:
    void advance() noexcept { m_p += reinterpret_cast<const struct ::dirent64*>(m_p)->d_reclen; }
    void skip_dots() noexcept {
      while (m_p < m_end && is_dot_or_dotdot(reinterpret_cast<const struct ::dirent64*>(m_p)->d_name))
        advance();
    }
    const std::byte* m_p;
    const std::byte* m_end;
  };

  dirent_batch(const std::byte* data, std::size_t len) noexcept : m_data(data), m_len(len) {}
  iterator begin() const noexcept { return {m_data, m_data + m_len}; }
  iterator end() const noexcept { return {m_data + m_len, m_data + m_len}; }
  /// Bytes the kernel returned (0: end of directory).
  std::size_t size_bytes() const noexcept { return m_len; }
  bool empty() const noexcept { return m_len == 0; }

 private:
  const std::byte* m_data;
  std::size_t m_len;
};

/// Largest record getdents64 can return (a 255-byte name), so a batch that leaves at
/// least this much of the buffer unused was not cut short by the buffer size.
inline constexpr std::size_t k_max_dirent_size = (offsetof(struct ::dirent64, d_name) + 256 + 7) & ~std::size_t{7};

/// Reads one directory descriptor (not owned) batch by batch.
class dir_reader {
 public:
  /// `buf` must be 8-byte aligned and at least k_max_dirent_size bytes.
  dir_reader(int fd, std::span<std::byte> buf) noexcept : m_fd(fd), m_buf(buf) {}
  /// Raw getdents64: the next batch (empty at the end of the directory) or -errno.
  long read_raw() noexcept {
    const ::ssize_t n = ::getdents64(m_fd, m_buf.data(), m_buf.size());
    return n < 0 ? -errno : static_cast<long>(n);
  }
  /// The batch starting at the buffer after read_raw returned `n` > 0.
  dirent_batch batch(long n) const noexcept { return {m_buf.data(), static_cast<std::size_t>(n)}; }

 private:
  int m_fd;
  std::span<std::byte> m_buf;
};

/// An owned entry of list_dir.
struct dir_listing_entry {
  std::string name;
  entry_type type;  ///< never unknown: DT_UNKNOWN entries are resolved with fstatat
};

/// Lists the directory `path` (unsorted, without "." and ".."), opening it relative to
/// `dirfd`. Errors: "open <path>", "getdents64 <path>", "fstatat <path>/<name>".
/// Threading: any thread. BLOCKS the calling thread (openat, getdents64 and fstatat are
/// plain system calls: io_uring has no getdents opcode) and never suspends, so called
/// from a task it stalls that worker — on a cold cache or a network file system for as
/// long as the disk takes. From a task on a thread_pool, run it on the blocking pool:
/// `co_await pool.spawn_blocking([p] { return fs::list_dir(p); })`; for a whole tree use
/// fs::walk (saturn/fs/walk.hpp), which spreads directories over the pool's workers.
fs_result<std::vector<dir_listing_entry>> list_dir(const std::string& path, int dirfd = AT_FDCWD);

}  // namespace saturn::fs
