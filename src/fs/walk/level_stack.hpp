// The directories on one worker's depth-first path, and the descriptors they hold.
//
// A job walks its directory depth first; each level is a directory listed (its
// subdirectories' names are in the worker's name_stack) and being walked. A level keeps
// its descriptor to openat its subdirectories, but at most `window` levels of a worker
// keep one (fd_budget.hpp): going deeper closes the oldest (never level 0, the job's own
// directory), after noting its device and inode. When the walk comes back to a closed
// level that still has subdirectories to walk, it reopens it by name from the nearest
// open ancestor and checks it is the same directory (if not, the one listed is gone).
// So a chain of any depth is walked with `window` descriptors, and trees that fit in the
// window (all usual ones) never close or reopen anything.
//
// EMFILE/ENFILE can still happen (ENFILE is system-wide; another process may lower our
// limit): open_at then closes this worker's levels, and waits for other workers to close
// theirs, up to 5 s, before it gives up (and from then on, no open waits again).
#pragma once

#include "name_stack.hpp"
#include "paths.hpp"

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace saturn::fs::walk_detail {

struct shared_dir;

struct level {
  int fd = -1;               ///< -1: closed to stay within the window
  bool trusted = false;      ///< the end-of-directory shortcut applies (engine.hpp)
  shared_dir* sh = nullptr;  ///< set once subdirectories were handed to jobs: fd is sh's
  std::size_t base = 0;      ///< this directory's subdirectory records, [base, end) in the names
  std::size_t end = 0;
  std::size_t next = 0;      ///< the next record to walk
  std::size_t cur = 0;       ///< the record walked below: the name of the next level
  std::size_t path_len = 0;  ///< full walks: the length of this level's path (thread_ctx::path)
  ::dev_t dev = 0;           ///< identity noted when closed, checked when reopened
  ::ino_t ino = 0;
};

/// One worker's levels (thread-local: only its own thread touches it).
class level_stack {
 public:
  void set_window(unsigned window) noexcept { m_window = window; }
  bool empty() const noexcept { return m_levels.empty(); }
  std::size_t top_index() const noexcept { return m_levels.size() - 1; }
  level& operator[](std::size_t i) noexcept { return m_levels[i]; }
  level& top() noexcept { return m_levels.back(); }

  /// Adds the open directory `fd` as the new top level (it counts against the window).
  /// Throws std::bad_alloc only, with `fd` then closed.
  void push(int fd, bool trusted);
  /// Removes the top level, closing its descriptor unless it is shared (the caller
  /// releases the shared_dir).
  void pop() noexcept;
  /// `l`'s descriptor now belongs to `sh`: it no longer counts against the window.
  void share(level& l, shared_dir* sh) noexcept;

  /// Closes old levels until `n` more descriptors fit in the window; never level 0, the
  /// top level or level `pin`.
  void make_room(unsigned n, std::size_t pin) noexcept {
    while (m_open + n > m_window && evict_one(pin)) {
    }
  }
  /// open_child below `parent` (level `pin`'s descriptor, kept open meanwhile). On
  /// EMFILE/ENFILE closes levels and waits for descriptors; -errno on failure.
  int open_at(int parent, const char* name, bool& trusted, std::size_t pin, bool full_reads, bool same_fs) noexcept;
  /// Reopens the top level, closed for the window, by name from its nearest open
  /// ancestor: its new descriptor, or -errno (-ENOENT if another directory is there now).
  int reopen_top(name_stack& names, bool full_reads, bool same_fs) noexcept;
  /// The path of level `k` for a message: level 0's (paths.of_fd) and the names below it.
  std::string path(std::size_t k, name_stack& names, const root_paths& paths);

 private:
  bool evict_one(std::size_t pin) noexcept;

  std::vector<level> m_levels;
  unsigned m_open = 0;           // levels whose descriptor is open and not shared
  std::size_t m_evict_from = 1;  // no level below this may be closed (level 0 never)
  unsigned m_window = 128;
};

}  // namespace saturn::fs::walk_detail
