// The walk engine (see engine.hpp for the design).
#include "engine.hpp"

#include "level_stack.hpp"
#include "name_stack.hpp"
#include "open_dir.hpp"
#include "shared_dir.hpp"

#include <saturn/fs/dir_reader.hpp>
#include <saturn/task/frame_allocator.hpp>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

namespace saturn::fs::walk_detail {
namespace {

constexpr std::size_t k_getdents_buf = 64 * 1024;
constexpr std::uint16_t k_spawned_bit = 0x8000;  // marks a name record handed to a job

struct thread_ctx {
  name_stack names;
  level_stack levels;  // the running job's path; empty between jobs
  std::uint64_t files = 0;
  std::uint64_t dirs = 0;
  // Full walks only: the path of the current directory (each level notes its length in
  // level::path_len) and the depth of the job's own directory.
  std::string path;
  unsigned base_depth = 0;
};

thread_local thread_ctx t_ctx;

/// True when an error says the directory (or entry) is gone since it was listed: removed,
/// replaced by a file or a symlink, or removed after it was opened (getdents64 on a dead
/// directory). Nothing more to count and nothing to say, as find.
bool vanished(int err) noexcept { return err == ENOENT || err == ENOTDIR || err == ELOOP; }

/// Subdirectory `name` of `parent` could not be opened (error `err`); it was counted
/// as a directory when listed. False if it is gone (or no longer a directory) since, or
/// is a mount point the walk does not enter (EXDEV, walk_options::same_file_system):
/// nothing more to count, nothing to say. Else it is to be reported; like find, it stays
/// a directory only if it can be looked at (lstat). When its parent is listable but not
/// searchable it cannot: find lists it, `-type d` is false for it and `! -type d` true,
/// so it counts as a file.
bool unopenable_child(walk_state& st, int parent, const char* name, int err) noexcept {
  if (vanished(err) || err == EXDEV)
    return false;
  struct ::stat sb;
  if (err == EACCES && ::fstatat(parent, name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
    // ordering: as the job-end fetch_adds
    st.dirs.fetch_sub(1, std::memory_order_relaxed);
    st.files.fetch_add(1, std::memory_order_relaxed);
  }
  return true;
}

/// Appends `name` to `path` as join_path does (no second "/" after one that ends it).
void append_name(std::string& path, std::string_view name) {
  if (path.empty() || path.back() != '/')
    path += '/';
  path += name;
}

bool spawn_job(walk_state& st, shared_dir* parent, bool trusted, const char* name, std::size_t len,
               std::string_view parent_path, unsigned depth);

/// Lets jobs share the top level's descriptor (once per level), if the shared budget
/// allows and the level is open; false otherwise (the job walks the rest itself).
bool share_top(walk_state& st, thread_ctx& t) {
  level& l = t.levels.top();
  if (l.sh != nullptr)
    return true;
  if (l.fd < 0 || st.shared_open.load(std::memory_order_relaxed) >= st.shared_budget)
    return false;
  // ordering: relaxed: a budget; exceeding it by a racing worker's one is harmless.
  if (st.shared_open.fetch_add(1, std::memory_order_relaxed) >= st.shared_budget) {
    st.shared_open.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  t.levels.share(l, new shared_dir{{1}, l.fd, &st.shared_open});
  return true;
}

/// Hands the subdirectory at record `rec` of the top level to a new job; false if the
/// job limit was reached meanwhile (the caller walks it itself).
bool hand_off(walk_state& st, thread_ctx& t, std::byte* rec, std::size_t len) {
  const std::size_t k = t.levels.top_index();
  level& l = t.levels.top();
  l.sh->refs.fetch_add(1, std::memory_order_relaxed);
  const std::string_view parent_path = st.plain ? std::string_view{} : std::string_view(t.path.data(), l.path_len);
  if (!spawn_job(st, l.sh, l.trusted, name_stack::record_name(rec), len, parent_path,
                 t.base_depth + static_cast<unsigned>(k) + 1)) {
    l.sh->refs.fetch_sub(1, std::memory_order_relaxed);  // ours stays: the count is at least 2
    return false;
  }
  const auto marked = static_cast<std::uint16_t>(len | k_spawned_bit);
  std::memcpy(rec, &marked, 2);
  return true;
}

/// What a full walk does with one entry of level `k` (of type `type`, DT_* resolved):
/// visits it, and tells whether to keep it as a subdirectory to walk. Sets `stop` when
/// the visitor ends the walk.
bool visit_entry(walk_state& st, thread_ctx& t, int fd, const char* name, entry_type type, unsigned depth,
                 bool& stop) {
  walk_action a = walk_action::proceed;
  if (st.visitor != nullptr) {
    const std::size_t plen = t.path.size();
    append_name(t.path, name);
    const std::string_view p(t.path);
    const walk_entry e{p, p.substr(p.size() - std::strlen(name)), type, depth, fd};
    a = (*st.visitor)(e);
    t.path.resize(plen);
  }
  if (a == walk_action::stop) {
    st.visitor_stopped.store(true, std::memory_order_relaxed);
    st.stopping.store(true, std::memory_order_relaxed);  // ordering: a flag, no data behind it
    stop = true;
    return false;
  }
  return type == entry_type::directory && a == walk_action::proceed && depth < st.max_depth;
}

/// Lists the top level: counts its entries and keeps its subdirectories' names (in the
/// name stack, [base, end)); then, while the pool is hungry, splits off its
/// subdirectories 2..k to new jobs. `Plain`: no visitor and no depth limit.
template <bool Plain>
void list_top(walk_state& st, thread_ctx& t) {
  name_stack& ns = t.names;
  const std::size_t k = t.levels.top_index();
  const int fd = t.levels[k].fd;
  const bool trusted = t.levels[k].trusted;
  const std::size_t base = ns.top();
  const unsigned depth = t.base_depth + static_cast<unsigned>(k) + 1;  // of the entries (full walks)
  std::size_t end = base;
  std::size_t nsub = 0;
  std::uint64_t files = 0;
  std::uint64_t dirs = 0;  // full walks: directories counted but not kept (skipped, too deep)
  bool stop = false;
  while (!stop) {  // NOLINT(bugprone-infinite-loop): visit_entry sets it through its bool&
    // The batch goes at the next 8-byte boundary (dirent64 alignment); records are
    // written from `end`, at most 7 bytes below it.
    ns.set_top((end + 7) & ~std::size_t{7});
    std::byte* buf = ns.reserve(k_getdents_buf);
    const ::ssize_t n = ::getdents64(fd, buf, k_getdents_buf);
    if (n < 0) {
      // What was listed before is counted and walked; the rest of this directory is not.
      if (!vanished(errno))
        report(st, t.levels.path(k, ns, *st.paths), errno);
      break;
    }
    if (n == 0)
      break;
    // Keep only the subdirectories' names, compacted in place: a record is at least 17
    // bytes shorter than the dirent it comes from, so starting up to 7 bytes lower it
    // never overwrites a dirent not yet read.
    std::byte* out = ns.at(end);
    for (std::byte* p = buf; p < buf + n;) {
      const auto* d = reinterpret_cast<const struct ::dirent64*>(p);
      const std::size_t reclen = d->d_reclen;
      unsigned char type = d->d_type;
      const char* name = d->d_name;
      if (!is_dot_or_dotdot(name)) {
        bool keep = false;
        if constexpr (Plain) {
          if (type == DT_UNKNOWN) {
            struct ::stat sb;
            if (::fstatat(fd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0)
              type = S_ISDIR(sb.st_mode) ? DT_DIR : DT_REG;
            else if (!vanished(errno))
              report(st, join_path(t.levels.path(k, ns, *st.paths), name), errno);  // counted as a file
          }
          keep = type == DT_DIR;
          if (!keep)
            ++files;
        } else {
          entry_type et = type_of_dtype(type);
          bool gone = false;  // counted as a file, as the plain walk does, and not visited
          if (type == DT_UNKNOWN) {
            struct ::stat sb;
            if (::fstatat(fd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0)
              et = type_of_mode(sb.st_mode);
            else if (vanished(errno))
              gone = true;
            else
              report(st, join_path(t.levels.path(k, ns, *st.paths), name), errno);  // unknown, a file
          }
          if (et == entry_type::directory)
            ++dirs;
          else
            ++files;
          if (!gone) {
            keep = visit_entry(st, t, fd, name, et, depth, stop);
            if (stop)
              break;
          }
        }
        if (keep) {
          const std::size_t len = std::strlen(name);
          name_stack::write_record(out, name, len);
          out += name_stack::record_size(len);
          ++nsub;
        }
      }
      p += reclen;
    }
    end = static_cast<std::size_t>(out - ns.at(0));
    // A batch that left room for the largest record ended at the end of the directory
    // (on the file systems fills_to_eof accepts): skip the getdents64 that returns 0.
    if (trusted && k_getdents_buf - static_cast<std::size_t>(n) >= k_max_dirent_size)
      break;
  }
  ns.set_top(end);
  t.files += files;
  t.dirs += Plain ? nsub : dirs;
  level& l = t.levels[k];
  l.base = l.next = base;
  l.end = end;
  if (nsub < 2)
    return;
  // Split off subdirectories 2..k while the pool is hungry; the first is walked here.
  for (std::size_t off = base + name_stack::record_size(name_stack::record_len(ns.at(base))); off < end;) {
    if (st.outstanding.load(std::memory_order_relaxed) >= st.spawn_below || !share_top(st, t))
      break;  // the pool is busy (or no descriptor to share): the rest is walked here
    std::byte* rec = ns.at(off);
    const std::size_t len = name_stack::record_len(rec);
    if (!hand_off(st, t, rec, len))
      break;
    off += name_stack::record_size(len);
  }
}

/// Ends the running job's walk: closes and releases every level.
void abandon(thread_ctx& t) noexcept {
  while (!t.levels.empty()) {
    shared_dir* sh = t.levels.top().sh;
    t.names.set_top(t.levels.top().base);
    t.levels.pop();
    if (sh != nullptr)
      sh->release();
  }
}

/// Walks the tree below the open directory `fd` depth first (owned: closed, or left to
/// a shared_dir, on return). Levels are an explicit stack (level_stack.hpp): no depth
/// limit, and at most the window's descriptors of them open. A full walk starts with
/// t.path spelling `fd`'s directory.
template <bool Plain>
void walk_tree(walk_state& st, thread_ctx& t, int fd, bool trusted) {
  name_stack& ns = t.names;
  level_stack& levels = t.levels;
  levels.push(fd, trusted);
  levels.top().path_len = t.path.size();
  list_top<Plain>(st, t);
  while (!levels.empty()) {
    // ordering: relaxed: a flag; seen a directory later at worst.
    if (st.stopping.load(std::memory_order_relaxed)) {
      abandon(t);
      return;
    }
    const std::size_t k = levels.top_index();
    level& l = levels.top();
    if (l.next == l.end) {  // done with this directory
      shared_dir* sh = l.sh;
      ns.set_top(l.base);
      levels.pop();
      if (sh != nullptr)
        sh->release();
      continue;
    }
    const std::size_t off = l.next;
    // lifetime: re-derive the record from its offset: listing a level may move the buffer.
    std::byte* rec = ns.at(off);
    const std::size_t raw = name_stack::record_len(rec);
    const std::size_t len = raw & ~std::size_t{k_spawned_bit};
    l.next = off + name_stack::record_size(len);
    if ((raw & k_spawned_bit) != 0)
      continue;
    const char* name = name_stack::record_name(rec);
    if (off != l.base && st.outstanding.load(std::memory_order_relaxed) < st.spawn_below && share_top(st, t) &&
        hand_off(st, t, rec, len)) {
      // The pool got hungry while this job walked the earlier subdirectories (leaf
      // directories give no other chance to split): handed off after all.
      continue;
    }
    if (l.fd < 0) {  // closed for the window while the walk was below it
      const int rfd = levels.reopen_top(ns, st.full_reads, st.same_fs);
      if (rfd < 0) {  // the rest of this directory cannot be reached
        if (!vanished(-rfd))
          report(st, levels.path(k, ns, *st.paths), -rfd);
        l.next = l.end;
        continue;
      }
    }
    levels.make_room(1, k);
    bool child_trusted = l.trusted;
    const int cfd = levels.open_at(l.fd, name, child_trusted, k, st.full_reads, st.same_fs);
    if (cfd < 0) {
      if (unopenable_child(st, l.fd, name, -cfd))
        report(st, join_path(levels.path(k, ns, *st.paths), name), -cfd);
      continue;
    }
    l.cur = off;
    if constexpr (!Plain) {
      t.path.resize(l.path_len);
      append_name(t.path, std::string_view(name, len));
    }
    levels.push(cfd, child_trusted);  // (invalidates l)
    levels.top().path_len = t.path.size();
    list_top<Plain>(st, t);
  }
}

/// One directory handed to the scheduler: opened relative to `parent` (or already open
/// as `fd` for ROOT). The name (and for full walks, the path) follow the struct in the
/// same allocation, each NUL-terminated.
struct dir_job final : runnable {
  walk_state* st;
  shared_dir* parent;
  int fd;
  bool trusted;
  unsigned depth;
  std::size_t name_len;
  std::size_t path_len;
  std::size_t alloc_size;

  char* name() noexcept { return reinterpret_cast<char*>(this + 1); }
  char* path() noexcept { return name() + name_len + 1; }

  static dir_job* make(walk_state& st, shared_dir* parent, int fd, bool trusted, std::string_view name,
                       std::string_view path, unsigned depth) {
    const std::size_t size = sizeof(dir_job) + name.size() + 1 + path.size() + 1;
    auto* j = ::new (saturn::detail::frame_allocate(size)) dir_job;
    j->m_fn = &run;
    j->st = &st;
    j->parent = parent;
    j->fd = fd;
    j->trusted = trusted;
    j->depth = depth;
    j->name_len = name.size();
    j->path_len = path.size();
    j->alloc_size = size;
    // (memcpy only non-empty views: an empty one's data() may be null.)
    if (!name.empty())
      std::memcpy(j->name(), name.data(), name.size());
    j->name()[name.size()] = '\0';
    if (!path.empty())
      std::memcpy(j->path(), path.data(), path.size());
    j->path()[path.size()] = '\0';
    return j;
  }

  static void destroy(dir_job* j) noexcept {
    const std::size_t size = j->alloc_size;
    j->~dir_job();
    saturn::detail::frame_deallocate(j, size);
  }

  static void run(runnable* r, run_mode mode) noexcept {
    auto* j = static_cast<dir_job*>(r);
    walk_state& st = *j->st;
    // Scheduler shutdown, or the walk is stopping: only release what the job holds.
    // ordering: relaxed: a flag.
    if (mode != run_mode::run || st.stopping.load(std::memory_order_relaxed)) {
      if (j->parent != nullptr)
        j->parent->release();
      else if (j->fd >= 0)
        ::close(j->fd);
      destroy(j);
      if (mode == run_mode::run)
        finish(st);
      return;
    }
    thread_ctx& t = t_ctx;
    t.levels.set_window(st.window);
    int fd = j->fd;
    bool trusted = j->trusted;
    if (j->parent != nullptr) {
      fd = t.levels.open_at(j->parent->fd, j->name(), trusted, 0, st.full_reads, st.same_fs);
      if (fd < 0 && unopenable_child(st, j->parent->fd, j->name(), -fd))
        report(st, join_path(st.paths->of_fd(j->parent->fd), j->name()), -fd);
      j->parent->release();
    }
    if (fd >= 0) {
      try {
        if (st.plain) {
          walk_tree<true>(st, t, fd, trusted);
        } else {
          t.base_depth = j->depth;
          t.path.assign(j->path(), j->path_len);
          walk_tree<false>(st, t, fd, trusted);
        }
      } catch (const std::bad_alloc&) {
        abandon(t);
        report(st, "(out of memory)", ENOMEM);
      }
    }
    // ordering: relaxed counts, published by the acq_rel decrement of `outstanding` below
    // (the last decrement acquires every earlier one, then releases to the walking task).
    if (t.files != 0)
      st.files.fetch_add(std::exchange(t.files, 0), std::memory_order_relaxed);
    if (t.dirs != 0)
      st.dirs.fetch_add(std::exchange(t.dirs, 0), std::memory_order_relaxed);
    destroy(j);
    finish(st);
  }

  /// Ends one job; the last one schedules the walking task (which then frees `st`).
  static void finish(walk_state& st) noexcept {
    if (st.outstanding.fetch_sub(1, std::memory_order_acq_rel) == 1)
      st.sched->schedule(st.waiter);  // lifetime: `st` lives until the waiter runs
  }
};

bool spawn_job(walk_state& st, shared_dir* parent, bool trusted, const char* name, std::size_t len,
               std::string_view parent_path, unsigned depth) {
  // ordering: counted before it can run (and end); the spawning job is itself still
  // outstanding, so the count cannot reach 0 in between. The limit holds exactly: a
  // racing spawner that went over takes its count back.
  if (st.outstanding.fetch_add(1, std::memory_order_relaxed) >= st.spawn_below) {
    st.outstanding.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  std::string path;
  if (!st.plain) {
    path.assign(parent_path);
    append_name(path, std::string_view(name, len));
  }
  st.sched->spawn(dir_job::make(st, parent, -1, trusted, std::string_view(name, len), path, depth));
  return true;
}

}  // namespace

void report(walk_state& st, const std::string& path, int err) {
  walk_error e{path, err};
  std::lock_guard lock(st.error_mutex);
  ++st.errors;
  if (*st.on_error)
    (*st.on_error)(e);
  else
    st.error_list.push_back(std::move(e));
}

runnable* make_root_job(walk_state& st, int fd, bool trusted, const std::string& root) {
  return dir_job::make(st, nullptr, fd, trusted, "", st.plain ? std::string_view{} : std::string_view(root), 0);
}

}  // namespace saturn::fs::walk_detail
