// Paths in fs::walk's error reports, spelled from ROOT as the caller gave it (as find does).
#pragma once

#include <sys/types.h>

#include <mutex>
#include <string>
#include <string_view>

namespace saturn::fs::walk_detail {

/// `dir` + "/" + `name`, without doubling a slash `dir` already ends with (as find
/// spells it: ROOT "a/" gives "a/b", ROOT "a//" gives "a//b").
std::string join_path(const std::string& dir, std::string_view name);

/// Spells the path of an open directory from ROOT. Set once before the walk, then
/// read-only: any thread.
class root_paths {
 public:
  /// `root` as given; `root_fd` its open descriptor (what /proc/self/fd calls it).
  root_paths(std::string root, int root_fd);

  const std::string& root() const noexcept { return m_root; }
  /// The path of `fd`: ROOT as given + the rest, or the absolute path if it is not below
  /// ROOT (moved meanwhile). When /proc cannot say (no /proc, or longer than PATH_MAX),
  /// the path found by climbing ".." to ROOT, or ROOT/... if that fails too.
  std::string of_fd(int fd) const;

 private:
  /// ROOT as given + the names found by climbing from `fd` to ROOT, or "".
  std::string by_parents(int fd) const;

  std::string m_root;
  std::string m_root_abs;  // /proc's spelling of ROOT, "" if unknown
  bool m_root_known = false;  // ROOT's identity below, for by_parents
  dev_t m_root_dev = 0;
  ino_t m_root_ino = 0;
  // by_parents' last climb: the path of one directory (its dev, ino), any thread.
  mutable std::mutex m_cache_mutex;
  mutable dev_t m_cache_dev = 0;
  mutable ino_t m_cache_ino = 0;
  mutable std::string m_cache_path;
};

}  // namespace saturn::fs::walk_detail
