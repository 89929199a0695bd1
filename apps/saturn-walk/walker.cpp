// The walk engine (see walker.hpp for the design).
#include "walker.hpp"

#include "escape.hpp"
#include "name_stack.hpp"
#include "paths.hpp"

#include <saturn/fs/dir_reader.hpp>
#include <saturn/task/frame_allocator.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string_view>

namespace walk {
namespace {

constexpr std::size_t k_getdents_buf = 64 * 1024;
// Below this depth a job walks subdirectories itself; deeper ones are always spawned, which
// bounds both the C stack and the descriptors one job holds open.
constexpr unsigned k_max_inline_depth = 128;
constexpr int k_open_flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
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

/// A directory descriptor that spawned jobs still need (to openat their child).
struct shared_dir {
  std::atomic<std::uint32_t> refs;
  int fd;
  void release() noexcept {
    // ordering: acq_rel: the last holder closes after every other holder's openat on fd.
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      ::close(fd);
      delete this;
    }
  }
};

struct walk_state {
  saturn::thread_pool* pool = nullptr;
  const root_paths* paths = nullptr;  // spells paths in messages
  std::int64_t spawn_below = 8;
  alignas(64) std::atomic<std::int64_t> outstanding{0};
  alignas(64) std::atomic<std::uint64_t> files{0};
  std::atomic<std::uint64_t> dirs{1};  // ROOT
  std::atomic<std::uint32_t> done{0};
  const std::function<void(const std::string&)>* on_error = nullptr;
  std::mutex error_mutex;  // serializes on_error; guards errors
  std::uint64_t errors = 0;
};

struct thread_ctx {
  name_stack names;
  std::uint64_t files = 0;
  std::uint64_t dirs = 0;
};

thread_local thread_ctx t_ctx;

bool fills_to_eof(int fd) noexcept {
  struct ::statfs s;
  if (::fstatfs(fd, &s) != 0)
    return false;
  switch (static_cast<unsigned long>(s.f_type)) {
    case EXT4_SUPER_MAGIC:  // also ext2/ext3
    case TMPFS_MAGIC:
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
      return true;
    default:
      return false;
  }
}

bool g_full_reads = false;  // SATURN_WALK_FULL_READS=1: always read until getdents64 returns 0

/// Opens `name` below `parent` without following a symlink; -errno on failure. `trusted`
/// (the end-of-directory shortcut) is re-decided when the child is a mount point.
int open_child(int parent, const char* name, bool& trusted) noexcept {
  ::open_how how{};
  how.flags = k_open_flags;
  how.resolve = RESOLVE_NO_XDEV;
  const long fd = ::syscall(SYS_openat2, parent, name, &how, sizeof how);
  if (fd >= 0)
    return static_cast<int>(fd);
  const int e = errno;
  if (e != EXDEV && e != ENOSYS)
    return -e;
  // A mount point (or no openat2): open normally and look at the file system below.
  const int fd2 = ::openat(parent, name, k_open_flags);
  if (fd2 < 0)
    return -errno;
  trusted = e == EXDEV && !g_full_reads && fills_to_eof(fd2);
  return fd2;
}

/// Reports that `path` could not be read; the walk goes on with everything else.
void report(walk_state& st, const std::string& path, int err) {
  const std::string message = "cannot read " + escape_name(path) + ": " + std::strerror(err);
  std::lock_guard lock(st.error_mutex);
  ++st.errors;
  if (*st.on_error)
    (*st.on_error)(message);
}

/// Subdirectory `name` of `parent` could not be opened (error `err`). It was counted
/// when listed. If it is gone (or no longer a directory) since, there is nothing more to
/// count: skip it silently. Otherwise report it; like find, it stays counted only if it
/// can be looked at (lstat): not when its parent is listable but not searchable.
void report_child(walk_state& st, int parent, const char* name, int err) {
  if (err == ENOENT || err == ENOTDIR || err == ELOOP)
    return;
  struct ::stat sb;
  if (err == EACCES && ::fstatat(parent, name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
    st.dirs.fetch_sub(1, std::memory_order_relaxed);  // ordering: as the job-end fetch_add
  report(st, join_path(st.paths->of_fd(parent), name), err);
}

void spawn_job(walk_state& st, shared_dir* parent, bool trusted, const char* name, std::size_t len);

/// Walks the open directory `fd` (owned: closed, or left to its shared_dir, on return).
void walk_dir(walk_state& st, thread_ctx& t, int fd, bool trusted, unsigned depth) {
  name_stack& ns = t.names;
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
      report(st, st.paths->of_fd(fd), errno);
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
          else if (errno != ENOENT)  // (gone since listed: nothing to say)
            report(st, join_path(st.paths->of_fd(fd), name), errno);  // counted as a file
        }
        if (type == DT_DIR) {
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

  shared_dir* sh = nullptr;
  if (nsub > 1 || depth >= k_max_inline_depth) {
    // Split off subdirectories 2..k while the pool is hungry (all of them when too deep).
    const bool must = depth >= k_max_inline_depth;
    bool first = true;
    for (std::size_t off = base; off < end;) {
      std::byte* rec = ns.at(off);
      const std::size_t len = name_stack::record_len(rec);
      const std::size_t next = off + name_stack::record_size(len);
      if (!first || must) {
        if (!must && st.outstanding.load(std::memory_order_relaxed) >= st.spawn_below)
          break;  // the pool is busy: the rest is walked here
        if (sh == nullptr)
          sh = new shared_dir{{1}, fd};
        sh->refs.fetch_add(1, std::memory_order_relaxed);
        spawn_job(st, sh, trusted, name_stack::record_name(rec), len);
        const auto marked = static_cast<std::uint16_t>(len | k_spawned_bit);
        std::memcpy(rec, &marked, 2);
      }
      first = false;
      off = next;
    }
  }
  for (std::size_t off = base; off < end;) {
    // lifetime: re-derive the record from its offset: the recursion may move the buffer.
    const std::byte* rec = ns.at(off);
    const std::size_t raw = name_stack::record_len(rec);
    const std::size_t len = raw & ~std::size_t{k_spawned_bit};
    const std::size_t next = off + name_stack::record_size(len);
    if ((raw & k_spawned_bit) == 0) {
      if (off != base && st.outstanding.load(std::memory_order_relaxed) < st.spawn_below) {
        // The pool got hungry while this job walked the earlier subdirectories (leaf
        // directories give no other chance to split): hand this one off after all.
        if (sh == nullptr)
          sh = new shared_dir{{1}, fd};
        sh->refs.fetch_add(1, std::memory_order_relaxed);
        spawn_job(st, sh, trusted, name_stack::record_name(rec), len);
        off = next;
        continue;
      }
      bool child_trusted = trusted;
      const int cfd = open_child(fd, name_stack::record_name(rec), child_trusted);
      if (cfd >= 0)
        walk_dir(st, t, cfd, child_trusted, depth + 1);
      else
        report_child(st, fd, name_stack::record_name(rec), -cfd);
    }
    off = next;
  }
  ns.set_top(base);
  if (sh != nullptr)
    sh->release();
  else
    ::close(fd);
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
    int fd = j->fd;
    bool trusted = j->trusted;
    if (j->parent != nullptr) {
      fd = open_child(j->parent->fd, j->name(), trusted);
      if (fd < 0)
        report_child(st, j->parent->fd, j->name(), -fd);
      j->parent->release();
    }
    if (fd >= 0) {
      try {
        walk_dir(st, t, fd, trusted, 0);
      } catch (const std::bad_alloc&) {
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
  // O_NOFOLLOW, O_DIRECTORY: if ROOT was swapped for a symlink or a fifo since, fail here.
  const int rfd = ::open(root.c_str(), k_open_flags);
  if (rfd < 0) {  // ROOT is a directory, its contents unknown
    report(st, root, errno);
    out.dirs = 1;
    out.errors = st.errors;
    return out;
  }
  const char* full = std::getenv("SATURN_WALK_FULL_READS");
  g_full_reads = full != nullptr && full[0] == '1';

  const root_paths paths(root, rfd);
  st.paths = &paths;
  auto pool = std::make_unique<saturn::thread_pool>(saturn::pool_options{
      .threads = worker_count(opts.threads), .mode = saturn::pool_mode::cpu_bound, .spin_before_park_us = k_spin_before_park_us});
  st.pool = pool.get();
  st.spawn_below = static_cast<std::int64_t>(pool->threads()) * k_jobs_per_worker;
  st.outstanding.store(1, std::memory_order_relaxed);
  pool->spawn_runnable(dir_job::make(st, nullptr, rfd, !g_full_reads && fills_to_eof(rfd), "", 0));
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
