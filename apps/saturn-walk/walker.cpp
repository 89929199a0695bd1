// The walk engine (see walker.hpp for the design).
#include "walker.hpp"

#include "escape.hpp"
#include "fd_budget.hpp"
#include "level_stack.hpp"
#include "name_stack.hpp"
#include "open_dir.hpp"
#include "paths.hpp"
#include "shared_dir.hpp"

#include <saturn/fs/dir_reader.hpp>
#include <saturn/task/frame_allocator.hpp>

#include <dirent.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <utility>

namespace walk {
namespace {

constexpr std::size_t k_getdents_buf = 64 * 1024;
// A job splits off subdirectories while fewer than this many jobs per worker are
// outstanding (queued or running): enough queued work that a worker rarely finds the pool
// empty and parks — even while the other one waits for a directory block from disk —, few
// enough that most directories are walked inline. (16 parked and woke workers up to ~100
// times per walk of the wide tree; 64 keeps it near the fixed ~15 of start and exit.)
constexpr std::int64_t k_jobs_per_worker = 64;
// An idle worker searches this long before it parks (the pool's default is 50 us): a
// futex wake costs 20-50 us here, and a walker's idle gaps are short.
constexpr unsigned k_spin_before_park_us = 200;
constexpr std::uint16_t k_spawned_bit = 0x8000;  // marks a name record handed to a job
// Descriptors left out of the plan (fd_budget.hpp): ROOT's while its job waits, and slack.
constexpr unsigned k_reserved_fds = 4;

struct walk_state {
  saturn::thread_pool* pool = nullptr;
  const root_paths* paths = nullptr;  // spells paths in messages
  bool full_reads = false;            // SATURN_WALK_FULL_READS=1: no end-of-directory shortcut
  std::int64_t spawn_below = 8;
  unsigned window = k_max_window;     // levels a worker keeps open (fd_budget.hpp)
  std::int64_t shared_budget = 0;     // shared_dirs open at once, at most
  alignas(64) std::atomic<std::int64_t> outstanding{0};
  std::atomic<std::int64_t> shared_open{0};
  alignas(64) std::atomic<std::uint64_t> files{0};
  std::atomic<std::uint64_t> dirs{1};  // ROOT
  std::atomic<std::uint32_t> done{0};
  const std::function<void(const std::string&)>* on_error = nullptr;
  std::mutex error_mutex;  // serializes on_error; guards errors
  std::uint64_t errors = 0;
};

struct thread_ctx {
  name_stack names;
  level_stack levels;  // the running job's path; empty between jobs
  std::uint64_t files = 0;
  std::uint64_t dirs = 0;
};

thread_local thread_ctx t_ctx;

/// Reports that `path` could not be read; the walk goes on with everything else.
void report(walk_state& st, const std::string& path, int err) {
  const std::string message = "cannot read " + escape_name(path) + ": " + std::strerror(err);
  std::lock_guard lock(st.error_mutex);
  ++st.errors;
  if (*st.on_error)
    (*st.on_error)(message);
}

/// True when an error says the directory (or entry) is gone since it was listed: removed,
/// replaced by a file or a symlink, or removed after it was opened (getdents64 on a dead
/// directory). Nothing more to count and nothing to say, as find.
bool vanished(int err) noexcept { return err == ENOENT || err == ENOTDIR || err == ELOOP; }

/// Subdirectory `name` of `parent` could not be opened (error `err`); it was counted
/// as a directory when listed. False if it is gone (or no longer a directory) since:
/// nothing more to count, nothing to say. Else it is to be reported; like find, it stays
/// a directory only if it can be looked at (lstat). When its parent is listable but not
/// searchable it cannot: find lists it, `-type d` is false for it and `! -type d` true,
/// so it counts as a file.
bool unopenable_child(walk_state& st, int parent, const char* name, int err) noexcept {
  if (vanished(err))
    return false;
  struct ::stat sb;
  if (err == EACCES && ::fstatat(parent, name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
    // ordering: as the job-end fetch_adds
    st.dirs.fetch_sub(1, std::memory_order_relaxed);
    st.files.fetch_add(1, std::memory_order_relaxed);
  }
  return true;
}

void spawn_job(walk_state& st, shared_dir* parent, bool trusted, const char* name, std::size_t len);

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

/// Hands the subdirectory at record `rec` of the top level to a new job.
void hand_off(walk_state& st, thread_ctx& t, std::byte* rec, std::size_t len) {
  level& l = t.levels.top();
  l.sh->refs.fetch_add(1, std::memory_order_relaxed);
  spawn_job(st, l.sh, l.trusted, name_stack::record_name(rec), len);
  const auto marked = static_cast<std::uint16_t>(len | k_spawned_bit);
  std::memcpy(rec, &marked, 2);
}

/// Lists the top level: counts its entries and keeps its subdirectories' names (in the
/// name stack, [base, end)); then, while the pool is hungry, splits off its
/// subdirectories 2..k to new jobs.
void list_top(walk_state& st, thread_ctx& t) {
  name_stack& ns = t.names;
  const std::size_t k = t.levels.top_index();
  const int fd = t.levels[k].fd;
  const bool trusted = t.levels[k].trusted;
  const std::size_t base = ns.top();
  std::size_t end = base;
  std::size_t nsub = 0;
  std::uint64_t files = 0;
  for (;;) {
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
      if (!saturn::fs::is_dot_or_dotdot(name)) {
        if (type == DT_UNKNOWN) {
          struct ::stat sb;
          if (::fstatat(fd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0)
            type = S_ISDIR(sb.st_mode) ? DT_DIR : DT_REG;
          else if (!vanished(errno))
            report(st, join_path(t.levels.path(k, ns, *st.paths), name), errno);  // counted as a file
        }
        if (type == DT_DIR) {
          const std::size_t len = std::strlen(name);
          name_stack::write_record(out, name, len);
          out += name_stack::record_size(len);
          ++nsub;
        } else {
          ++files;
        }
      }
      p += reclen;
    }
    end = static_cast<std::size_t>(out - ns.at(0));
    // A batch that left room for the largest record ended at the end of the directory
    // (on the file systems fills_to_eof accepts): skip the getdents64 that returns 0.
    if (trusted && k_getdents_buf - static_cast<std::size_t>(n) >= saturn::fs::k_max_dirent_size)
      break;
  }
  ns.set_top(end);
  t.files += files;
  t.dirs += nsub;
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
    hand_off(st, t, rec, len);
    off += name_stack::record_size(len);
  }
}

/// Walks the tree below the open directory `fd` depth first (owned: closed, or left to
/// a shared_dir, on return). Levels are an explicit stack (level_stack.hpp): no depth
/// limit, and at most the window's descriptors of them open.
void walk_tree(walk_state& st, thread_ctx& t, int fd, bool trusted) {
  name_stack& ns = t.names;
  level_stack& levels = t.levels;
  levels.push(fd, trusted);
  list_top(st, t);
  while (!levels.empty()) {
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
    if (off != l.base && st.outstanding.load(std::memory_order_relaxed) < st.spawn_below && share_top(st, t)) {
      // The pool got hungry while this job walked the earlier subdirectories (leaf
      // directories give no other chance to split): hand this one off after all.
      hand_off(st, t, rec, len);
      continue;
    }
    if (l.fd < 0) {  // closed for the window while the walk was below it
      const int rfd = levels.reopen_top(ns, st.full_reads);
      if (rfd < 0) {  // the rest of this directory cannot be reached
        if (!vanished(-rfd))
          report(st, levels.path(k, ns, *st.paths), -rfd);
        l.next = l.end;
        continue;
      }
    }
    levels.make_room(1, k);
    bool child_trusted = l.trusted;
    const int cfd = levels.open_at(l.fd, name, child_trusted, k, st.full_reads);
    if (cfd < 0) {
      if (unopenable_child(st, l.fd, name, -cfd))
        report(st, join_path(levels.path(k, ns, *st.paths), name), -cfd);
      continue;
    }
    l.cur = off;
    levels.push(cfd, child_trusted);  // (invalidates l)
    list_top(st, t);
  }
}

/// Ends the running job's walk after an exception: closes and releases every level.
void abandon(thread_ctx& t) noexcept {
  while (!t.levels.empty()) {
    shared_dir* sh = t.levels.top().sh;
    t.names.set_top(t.levels.top().base);
    t.levels.pop();
    if (sh != nullptr)
      sh->release();
  }
}

/// One directory handed to the pool: opened relative to `parent` (or already open as
/// `fd` for ROOT). The name follows the struct in the same allocation.
struct dir_job final : saturn::runnable {
  walk_state* st;
  shared_dir* parent;
  int fd;
  bool trusted;
  std::size_t alloc_size;

  char* name() noexcept { return reinterpret_cast<char*>(this + 1); }

  static dir_job* make(walk_state& st, shared_dir* parent, int fd, bool trusted, const char* name,
                       std::size_t len) {
    const std::size_t size = sizeof(dir_job) + len + 1;
    auto* j = ::new (saturn::detail::frame_allocate(size)) dir_job;
    j->m_fn = &run;
    j->st = &st;
    j->parent = parent;
    j->fd = fd;
    j->trusted = trusted;
    j->alloc_size = size;
    std::memcpy(j->name(), name, len);
    j->name()[len] = '\0';
    return j;
  }

  static void destroy(dir_job* j) noexcept {
    const std::size_t size = j->alloc_size;
    j->~dir_job();
    saturn::detail::frame_deallocate(j, size);
  }

  static void run(saturn::runnable* r, saturn::run_mode mode) noexcept {
    auto* j = static_cast<dir_job*>(r);
    walk_state& st = *j->st;
    if (mode != saturn::run_mode::run) {  // pool shutdown: only release what we hold
      if (j->parent != nullptr)
        j->parent->release();
      else if (j->fd >= 0)
        ::close(j->fd);
      destroy(j);
      return;
    }
    thread_ctx& t = t_ctx;
    t.levels.set_window(st.window);
    int fd = j->fd;
    bool trusted = j->trusted;
    if (j->parent != nullptr) {
      fd = t.levels.open_at(j->parent->fd, j->name(), trusted, 0, st.full_reads);
      if (fd < 0 && unopenable_child(st, j->parent->fd, j->name(), -fd))
        report(st, join_path(st.paths->of_fd(j->parent->fd), j->name()), -fd);
      j->parent->release();
    }
    if (fd >= 0) {
      try {
        walk_tree(st, t, fd, trusted);
      } catch (const std::bad_alloc&) {
        abandon(t);
        report(st, "(out of memory)", ENOMEM);
      }
    }
    // ordering: relaxed counts, published by the acq_rel decrement of `outstanding` below
    // (the last decrement acquires every earlier one, then releases to the main thread).
    if (t.files != 0)
      st.files.fetch_add(std::exchange(t.files, 0), std::memory_order_relaxed);
    if (t.dirs != 0)
      st.dirs.fetch_add(std::exchange(t.dirs, 0), std::memory_order_relaxed);
    destroy(j);
    if (st.outstanding.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      st.done.store(1, std::memory_order_release);
      saturn::detail::futex_wake_all(&st.done);
    }
  }
};

void spawn_job(walk_state& st, shared_dir* parent, bool trusted, const char* name, std::size_t len) {
  // ordering: counted before it can run (and end); the spawning job is itself still
  // outstanding, so the count cannot reach 0 in between.
  st.outstanding.fetch_add(1, std::memory_order_relaxed);
  st.pool->spawn_runnable(dir_job::make(st, parent, -1, trusted, name, len));
}

/// The pool's size: `requested`, or for 0 the CPUs this process may run on, capped at
/// the pool's 255 workers (a bigger machine still gets a working walk).
unsigned worker_count(unsigned requested) noexcept {
  if (requested != 0)
    return requested;
  ::cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0)
    return 1;
  return static_cast<unsigned>(std::clamp(CPU_COUNT(&set), 1, static_cast<int>(k_max_threads)));
}

}  // namespace

walk_result run_walk(const std::string& root, const walk_options& opts) {
  walk_result out;
  // ROOT as find takes it: lstat, so a symlink is one file unless a trailing slash asks
  // to follow it ("ld/"), and anything but a directory is one file. A non-directory is
  // never opened: opening a fifo would block.
  walk_state st;
  st.on_error = &opts.on_error;
  struct ::stat sb;
  if (::lstat(root.c_str(), &sb) != 0) {  // nothing to count
    report(st, root, errno);
    out.errors = st.errors;
    return out;
  }
  out.counted = true;
  if (!S_ISDIR(sb.st_mode)) {
    out.files = 1;
    return out;
  }
  // Raise the descriptor limit and plan its use before the walk opens anything.
  const fd_plan plan = plan_descriptors(worker_count(opts.threads), k_jobs_per_worker, k_reserved_fds);
  // O_NOFOLLOW, O_DIRECTORY: if ROOT was swapped for a symlink or a fifo since, fail here.
  const int rfd = ::open(root.c_str(), k_dir_open_flags);
  if (rfd < 0) {  // ROOT is a directory, its contents unknown
    report(st, root, errno);
    out.dirs = 1;
    out.errors = st.errors;
    return out;
  }
  const char* full = std::getenv("SATURN_WALK_FULL_READS");
  st.full_reads = full != nullptr && full[0] == '1';
  st.window = plan.window;
  st.shared_budget = plan.shared;

  const root_paths paths(root, rfd);
  st.paths = &paths;
  auto pool = std::make_unique<saturn::thread_pool>(saturn::pool_options{
      .threads = plan.threads, .mode = saturn::pool_mode::cpu_bound, .spin_before_park_us = k_spin_before_park_us});
  st.pool = pool.get();
  st.spawn_below = static_cast<std::int64_t>(pool->threads()) * k_jobs_per_worker;
  st.outstanding.store(1, std::memory_order_relaxed);
  pool->spawn_runnable(dir_job::make(st, nullptr, rfd, !st.full_reads && fills_to_eof(rfd), "", 0));
  saturn::detail::futex_wait_while_zero(&st.done);
  // ordering: futex_wait_while_zero returned after an acquire load of done == 1.
  out.files = st.files.load(std::memory_order_relaxed);
  out.dirs = st.dirs.load(std::memory_order_relaxed);
  {
    std::lock_guard lock(st.error_mutex);
    out.errors = st.errors;
  }
  if (opts.leave_pool_running) {
    // lifetime: every job has ended (done == 1), so no worker touches `st` again; the
    // idle workers end with the process (the caller calls std::_Exit).
    static_cast<void>(pool.release());
  }
  return out;
}

}  // namespace walk
