// Paths in messages (paths.hpp).
#include "paths.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <mutex>
#include <vector>

namespace saturn::fs::walk_detail {
namespace {

/// What /proc/self/fd/<fd> says, or "" (no /proc, or longer than PATH_MAX).
std::string proc_fd_link(int fd) {
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char buf[PATH_MAX];
  const ::ssize_t n = ::readlink(link, buf, sizeof buf);
  if (n <= 0 || static_cast<std::size_t>(n) == sizeof buf)  // a full buffer may be cut short
    return {};
  return std::string(buf, static_cast<std::size_t>(n));
}

/// Closes a descriptor at scope exit.
struct fd_guard {
  int fd;
  ~fd_guard() {
    if (fd >= 0)
      ::close(fd);
  }
};

/// The name under which directory `parent` holds the directory (dev, ino), or "" if none
/// does (it moved meanwhile, or `parent` cannot be listed).
std::string name_in(int parent, const struct ::stat& child) {
  const int dfd = ::openat(parent, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return {};
  DIR* d = ::fdopendir(dfd);
  if (d == nullptr) {
    ::close(dfd);
    return {};
  }
  std::string found;
  // First the entries whose d_ino matches; then, for a mount point (whose d_ino is the
  // inode it covers, not the mounted root), every directory entry by lstat.
  for (int pass = 0; pass < 2 && found.empty(); ++pass) {
    ::rewinddir(d);
    while (const ::dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || (e->d_name[1] == '.' && e->d_name[2] == '\0')))
        continue;
      if ((e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) || (pass == 0 && e->d_ino != child.st_ino))
        continue;
      struct ::stat st{};
      if (::fstatat(parent, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_ino == child.st_ino &&
          st.st_dev == child.st_dev) {
        found = e->d_name;
        break;
      }
    }
  }
  ::closedir(d);
  return found;
}

}  // namespace

std::string root_paths::by_parents(int fd) const {
  if (!m_root_known)
    return {};
  // Climbs from `fd` to ROOT through "..", naming each level by its inode in its parent
  // (getcwd's method): slow, but only error messages below PATH_MAX's reach need it. The
  // last climb's first parent is remembered, so errors in sibling directories (a fan of
  // unreadable ones) climb one level, not the whole chain again.
  std::vector<std::string> names;
  std::string base = m_root;
  struct ::stat first_parent{};
  fd_guard cur{::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  for (std::size_t level = 0; cur.fd >= 0; ++level) {
    struct ::stat st{};
    if (::fstat(cur.fd, &st) != 0 || level > (1u << 20))
      return {};
    if (st.st_dev == m_root_dev && st.st_ino == m_root_ino)
      break;
    if (level > 0) {
      std::lock_guard lock(m_cache_mutex);
      if (!m_cache_path.empty() && st.st_dev == m_cache_dev && st.st_ino == m_cache_ino) {
        base = m_cache_path;
        break;
      }
    }
    fd_guard up{::openat(cur.fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    struct ::stat ust{};
    if (up.fd < 0 || ::fstat(up.fd, &ust) != 0 || (ust.st_dev == st.st_dev && ust.st_ino == st.st_ino))
      return {};  // the top of the file system: `fd` is not below ROOT (any more)
    std::string name = name_in(up.fd, st);
    if (name.empty())
      return {};
    if (level == 0)
      first_parent = ust;
    names.push_back(std::move(name));
    std::swap(cur.fd, up.fd);
  }
  if (cur.fd < 0)
    return {};
  std::string p = std::move(base);
  for (std::size_t i = names.size(); i-- > 0;) {
    if (i == 0 && names.size() > 1) {  // p is fd's parent now
      std::lock_guard lock(m_cache_mutex);
      m_cache_dev = first_parent.st_dev;
      m_cache_ino = first_parent.st_ino;
      m_cache_path = p;
    }
    if (p.empty() || p.back() != '/')
      p += '/';
    p += names[i];
  }
  return p;
}

std::string join_path(const std::string& dir, std::string_view name) {
  std::string p;
  p.reserve(dir.size() + 1 + name.size());
  p = dir;
  if (p.empty() || p.back() != '/')
    p += '/';
  p += name;
  return p;
}

root_paths::root_paths(std::string root, int root_fd) : m_root(std::move(root)), m_root_abs(proc_fd_link(root_fd)) {
  struct ::stat st{};
  if (::fstat(root_fd, &st) == 0) {
    m_root_known = true;
    m_root_dev = st.st_dev;
    m_root_ino = st.st_ino;
  }
}

std::string root_paths::of_fd(int fd) const {
  std::string p = proc_fd_link(fd);  // not const: `return p` moves
  if (p.empty()) {
    std::string climbed = by_parents(fd);  // no /proc, or longer than PATH_MAX
    return climbed.empty() ? join_path(m_root, "...") : climbed;  // else the best we can say
  }
  const std::string& ra = m_root_abs;
  // ROOT's own path, or one below it (a whole component: ROOT /a is no prefix of /ab).
  if (!ra.empty() && p.compare(0, ra.size(), ra) == 0 &&
      (p.size() == ra.size() || p[ra.size()] == '/' || ra.back() == '/')) {
    std::size_t rest = ra.size();
    while (rest < p.size() && p[rest] == '/')
      ++rest;
    return rest == p.size() ? m_root : join_path(m_root, std::string_view(p).substr(rest));
  }
  return p;
}

}  // namespace saturn::fs::walk_detail
