// list_dir: dir_reader plus fstatat for DT_UNKNOWN, into owned entries.
#include <saturn/fs/dir_reader.hpp>

#include <unistd.h>

#include <memory>

namespace saturn::fs {

fs_result<std::vector<dir_listing_entry>> list_dir(const std::string& path, int dirfd) {
  const int fd = ::openat(dirfd, path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return fs_errno_error(-errno, "open", path);
  constexpr std::size_t k_buf = 32 * 1024;
  // lifetime: heap buffer (not the stack): callers may run on small coroutine-driven stacks.
  std::unique_ptr<std::byte[]> buf(new std::byte[k_buf]);
  dir_reader reader(fd, std::span<std::byte>(buf.get(), k_buf));
  std::vector<dir_listing_entry> out;
  for (;;) {
    const long n = reader.read_raw();
    if (n < 0) {
      ::close(fd);
      return fs_errno_error(static_cast<int>(n), "getdents64", path);
    }
    if (n == 0)
      break;
    for (dir_entry e : reader.batch(n)) {
      entry_type t = e.type;
      if (t == entry_type::unknown) {
        if (int r = resolve_type(fd, e.name.data(), t); r < 0) {
          ::close(fd);
          return fs_errno_error(r, "fstatat", path + "/" + std::string(e.name));
        }
      }
      out.push_back({std::string(e.name), t});
    }
  }
  ::close(fd);
  return out;
}

}  // namespace saturn::fs
