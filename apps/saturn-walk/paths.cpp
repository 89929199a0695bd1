// Paths in messages (paths.hpp).
#include "paths.hpp"

#include <unistd.h>

#include <climits>
#include <cstdio>

namespace walk {
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

}  // namespace

std::string join_path(const std::string& dir, std::string_view name) {
  std::string p;
  p.reserve(dir.size() + 1 + name.size());
  p = dir;
  if (p.empty() || p.back() != '/')
    p += '/';
  p += name;
  return p;
}

root_paths::root_paths(std::string root, int root_fd) : m_root(std::move(root)), m_root_abs(proc_fd_link(root_fd)) {}

std::string root_paths::of_fd(int fd) const {
  const std::string p = proc_fd_link(fd);
  if (p.empty())
    return join_path(m_root, "...");  // the best we can say
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

}  // namespace walk
