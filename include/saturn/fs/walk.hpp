/// \file
/// `fs::walk`: a parallel recursive directory walk (the engine of saturn-walk).
///
/// ```
/// fs::walk_options opts;
/// opts.on_error = [](const fs::walk_error& e) { log(e.message()); };   // any worker
/// auto r = co_await fs::walk("/srv/data", opts, [&](const fs::walk_entry& e) {
///   if (e.type == fs::entry_type::directory && e.name == ".git")
///     return fs::walk_action::skip;                  // do not descend
///   if (e.name.ends_with(".tmp"))
///     log(std::string(e.name));                      // any worker, concurrently
///   return fs::walk_action::proceed;
/// });
/// if (!r) { log(r.err().message()); co_return; }     // ROOT not found, or cancelled
/// std::uint64_t seen = r->files + r->dirs;              // r->errors: entries not read
/// ```
///
/// How it runs: the walk is split into *jobs*, each a runnable on the scheduler of the
/// calling task (a thread_pool: any worker may run, and steal, them; a runtime: they run
/// on its one thread between its other tasks). A job reads one directory with
/// getdents64 and walks what lies below it depth first; while fewer jobs are queued than
/// the workers can use (64 per worker, or walk_options::max_parallel), it hands
/// subdirectories to new jobs instead. The system calls (getdents64, openat2, fstatat
/// for DT_UNKNOWN) are made directly by the job and block the worker running it: use a
/// cpu_bound thread_pool, or accept that an io-mode worker or a runtime does no other
/// work while it runs a job (a job can be a whole subtree). The calling task itself
/// only suspends until the last job ends.
///
/// Below ROOT no symbolic link is ever followed (a symlink is an entry of type symlink,
/// and a loop of them is no loop for the walk). ROOT is taken as find takes it: lstat,
/// so a ROOT that is a symlink is one entry of type symlink unless spelled with a
/// trailing slash ("link/"), and a ROOT that is not a directory is one entry.
///
/// Descriptors: a walk keeps at most what the soft RLIMIT_NOFILE leaves free when it
/// starts (a window of open directories per worker, older ones closed and reopened by
/// name), so no tree runs it out of descriptors at any depth; it does not raise the
/// limit (a program that wants more raises it at start, as saturn-walk does).
#pragma once

#include <saturn/fs/dir_reader.hpp>
#include <saturn/fs/fs_error.hpp>
#include <saturn/task/task.hpp>

#include <climits>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace saturn::fs {

/// What a visitor tells the walk to do after an entry.
enum class walk_action : std::uint8_t {
  proceed,  ///< go on (into the entry, if it is a directory)
  skip,     ///< a directory: do not read it (it is still counted); otherwise as proceed
  stop,     ///< end the walk soon: no further directory is read (walk_stats::stopped)
};

/// One entry as the visitor sees it. The views point into the worker's buffers and are
/// valid only during the visitor's call.
struct walk_entry {
  /// ROOT as given, joined with the names below it by "/" ("root/a/b"; a ROOT that
  /// ends with "/" is not given a second one, as find spells it). For ROOT, ROOT.
  std::string_view path;
  /// The last component of `path` (for ROOT, ROOT as given).
  std::string_view name;
  /// From getdents64's d_type, or fstatat when the file system leaves it unknown (then
  /// unknown only if that fstatat failed, which is also reported as an error).
  entry_type type = entry_type::unknown;
  /// 0 for ROOT, 1 for its entries, and so on.
  unsigned depth = 0;
  /// The directory holding the entry, open for the call (openat/fstatat relative to it
  /// with `name`); -1 for ROOT. The visitor must not close it.
  int parent_fd = -1;
};

/// A directory (or entry) the walk could not read; the walk went on without it.
struct walk_error {
  std::string path;  ///< as walk_entry::path spells it (the path as given, unescaped)
  int code = 0;      ///< the errno value
  /// "cannot read <path>: <strerror(code)>".
  std::string message() const;
};

/// Counts of a walk. A directory that could not be read counts as a directory (its
/// contents do not); one whose parent can be listed but not searched counts as a file,
/// as find's `-type d` sees it.
struct walk_stats {
  std::uint64_t files = 0;   ///< entries that are not directories (a symlink is one)
  std::uint64_t dirs = 0;    ///< directories, ROOT included, skipped ones included
  std::uint64_t errors = 0;  ///< walk_errors reported: the counts miss what they hid
  bool stopped = false;      ///< a visitor returned walk_action::stop
  /// The errors, when walk_options::on_error is empty (else empty), in no set order.
  std::vector<walk_error> error_list;
};

/// No depth limit.
inline constexpr unsigned k_walk_unlimited_depth = UINT_MAX;

/// How to walk.
struct walk_options {
  /// Entries deeper than this are not visited or counted: directories at this depth are
  /// not read (0: ROOT only).
  unsigned max_depth = k_walk_unlimited_depth;
  /// Do not descend into a directory on another file system than its parent (a mount
  /// point is still visited and counted, as find -xdev does).
  bool same_file_system = false;
  /// At most this many jobs (so at most this many workers walking) at once; 0: up to
  /// 64 per worker queued, which keeps every worker busy. 1 walks in one job.
  unsigned max_parallel = 0;
  /// Read every directory until getdents64 returns 0. By default, on file systems that
  /// fill the buffer to the end of a directory (ext2/3/4, tmpfs, xfs, btrfs), a batch
  /// that leaves room for one more record is taken as the last.
  bool full_reads = false;
  /// Called once for each directory or entry that cannot be read (not for entries that
  /// vanish while the walk runs, as find). Runs on a worker, one call at a time (calls
  /// are serialized by a lock). Empty: errors go to walk_stats::error_list.
  std::function<void(const walk_error&)> on_error;
};

/// Called for each entry, ROOT first, on whichever worker read it: concurrently from
/// several workers on a thread_pool, so it must be thread-safe. It must not block for
/// long (it holds up its job) and must not throw (std::terminate).
using walk_visitor = std::function<walk_action(const walk_entry&)>;

/// Walks the tree at `root` (see the file comment for how), calling `visitor` (if not
/// empty) for every entry and counting them. Unreadable directories are reported
/// (walk_options::on_error) and the walk goes on past them.
/// Threading: a saturn task on any scheduler (thread_pool or runtime); suspends until the
/// walk ends. Errors: ROOT cannot be looked up (fs_error "lstat ROOT"); stop requested
/// through the task's stop token (operation_canceled, "walk ROOT"): the walk ends soon,
/// no further directory is read, and the jobs under way finish their current directory.
/// An unreadable ROOT directory is not an error of the walk: it is reported, counted,
/// and the result holds the counts. Throws std::bad_alloc only if the walk cannot start.
task<fs_result<walk_stats>> walk(std::string root, walk_options opts = {}, walk_visitor visitor = {});

}  // namespace saturn::fs
