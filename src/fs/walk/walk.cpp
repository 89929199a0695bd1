// fs::walk (saturn/fs/walk.hpp): looks ROOT up, plans descriptors, starts the jobs of
// engine.hpp on the calling task's scheduler and waits for the last one.
#include "engine.hpp"
#include "fd_budget.hpp"
#include "open_dir.hpp"

#include <saturn/sched/thread_pool.hpp>
#include <saturn/task/this_task.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <coroutine>
#include <cstring>
#include <stop_token>
#include <system_error>

namespace saturn::fs {

std::string walk_error::message() const { return "cannot read " + path + ": " + std::strerror(code); }

namespace walk_detail {
namespace {

/// Suspends the walking task and starts the first job; the last job schedules the task.
struct jobs_awaiter {
  walk_state* st;
  runnable* root_job;
  bool await_ready() const noexcept { return false; }
  template <class P>
  void await_suspend(std::coroutine_handle<P> h) noexcept {
    st->waiter = &h.promise();
    st->sched = h.promise().sched();
    // lifetime: from here on the jobs own the wake-up; nothing below touches the frame.
    st->sched->spawn(root_job);
  }
  void await_resume() const noexcept {}
};

/// The workers that may run jobs: a thread_pool's, or the one thread of anything else.
unsigned scheduler_threads(scheduler* s) noexcept {
  if (auto* pool = dynamic_cast<thread_pool*>(s))
    return pool->threads();
  return 1;
}

/// Counts and errors of `st` after the last job ended.
walk_stats collect(walk_state& st) {
  walk_stats out;
  out.files = st.files.load(std::memory_order_relaxed);
  out.dirs = st.dirs.load(std::memory_order_relaxed);
  out.stopped = st.visitor_stopped.load(std::memory_order_relaxed);
  std::lock_guard lock(st.error_mutex);
  out.errors = st.errors;
  out.error_list = std::move(st.error_list);
  return out;
}

}  // namespace
}  // namespace walk_detail

task<fs_result<walk_stats>> walk(std::string root, walk_options opts, walk_visitor visitor) {
  using namespace walk_detail;
  task_context& ctx = co_await this_task::context();
  walk_state st;
  st.on_error = &opts.on_error;
  st.visitor = visitor ? &visitor : nullptr;
  st.max_depth = opts.max_depth;
  st.plain = st.visitor == nullptr && opts.max_depth == k_walk_unlimited_depth;
  st.full_reads = opts.full_reads;
  st.same_fs = opts.same_file_system;
  // ROOT as find takes it: lstat, so a symlink is one entry unless a trailing slash asks
  // to follow it ("ld/"), and anything but a directory is one entry. A non-directory is
  // never opened: opening a fifo would block.
  struct ::stat sb;
  if (::lstat(root.c_str(), &sb) != 0)
    co_return fs_errno_error(-errno, "lstat", root);
  const bool is_dir = S_ISDIR(sb.st_mode);
  walk_stats out;
  if (st.visitor != nullptr) {
    const walk_entry e{root, root, type_of_mode(sb.st_mode), 0, -1};
    const walk_action a = visitor(e);
    out.stopped = a == walk_action::stop;
    if (a != walk_action::proceed) {
      (is_dir ? out.dirs : out.files) = 1;
      co_return out;
    }
  }
  if (!is_dir || opts.max_depth == 0) {
    (is_dir ? out.dirs : out.files) = 1;
    co_return out;
  }
  if (ctx.token.stop_requested())
    co_return fs_error{std::make_error_code(std::errc::operation_canceled), "walk", root};
  // Plan the descriptors before the walk opens anything. A plan for fewer workers than
  // the scheduler has (few descriptors) caps the jobs at that many: a queued job holds
  // no levels, a running one up to the window.
  const unsigned threads = scheduler_threads(ctx.sched);
  const fd_plan plan = plan_descriptors(threads, k_jobs_per_worker, k_reserved_fds);
  std::int64_t spawn_below = static_cast<std::int64_t>(threads) * k_jobs_per_worker;
  if (plan.threads < threads)
    spawn_below = plan.threads;
  if (opts.max_parallel != 0)
    spawn_below = std::min<std::int64_t>(spawn_below, opts.max_parallel);
  st.spawn_below = spawn_below;
  st.window = plan.window;
  st.shared_budget = plan.shared;
  // O_NOFOLLOW, O_DIRECTORY: if ROOT was swapped for a symlink or a fifo since, fail here.
  const int rfd = ::open(root.c_str(), k_dir_open_flags);
  if (rfd < 0) {  // ROOT is a directory, its contents unknown
    report(st, root, errno);
    out = collect(st);
    out.dirs = 1;
    co_return out;
  }
  const root_paths paths(root, rfd);
  st.paths = &paths;
  st.outstanding.store(1, std::memory_order_relaxed);
  runnable* first = make_root_job(st, rfd, !st.full_reads && fills_to_eof(rfd), root);
  {
    // ordering: relaxed: the jobs poll the flag; stopping is prompt, not synchronized.
    std::stop_callback on_stop(ctx.token, [&st]() noexcept { st.stopping.store(true, std::memory_order_relaxed); });
    jobs_awaiter jobs{&st, first};
    co_await jobs;
  }
  // ordering: the last job's acq_rel decrement of `outstanding`, then the scheduler's
  // hand-off, publish every job's counts to this thread.
  if (ctx.token.stop_requested() && !st.visitor_stopped.load(std::memory_order_relaxed))
    co_return fs_error{std::make_error_code(std::errc::operation_canceled), "walk", root};
  co_return collect(st);
}

}  // namespace saturn::fs
