/// \file
/// `runtime`: runs tasks on one event loop, on the thread that created it. The
/// multi-threaded work-stealing runtime (saturn/sched) offers the same surface.
///
/// ```
/// saturn::runtime rt;
/// int v = rt.block_on(compute());          // run a task to completion
/// ```
#pragma once

#include <saturn/loop/event_loop.hpp>
#include <saturn/task/join_handle.hpp>
#include <saturn/task/scheduler.hpp>
#include <saturn/task/task.hpp>

#include <optional>
#include <stdexcept>
#include <vector>

namespace saturn {

class runtime;
namespace detail {
/// Adds a runtime to live_runtime_stats() and returns its id / removes it. Any thread.
unsigned register_runtime_stats(const runtime& rt);
void unregister_runtime_stats(const runtime& rt) noexcept;
struct runtime_access;  // the task dump's view of a runtime (src/task/runtime_dump.cpp)
}  // namespace detail

/// How to build a runtime.
struct runtime_options {
  loop_options loop{};
};

/// A single-threaded runtime: one event loop, tasks run on the creating thread.
///
/// Threading: construct, block_on and destroy on one thread. spawn() may be called from
/// any thread (the task is handed over lock-free and runs on the runtime's thread).
/// Destroying the runtime cancels in-flight I/O, waits for it, and destroys every task
/// still suspended; join handles to unfinished tasks then report task_abandoned. Like any
/// io_uring user's, the ring's close interrupts the thread once a few milliseconds later:
/// a blocking call with a timeout made then may fail once with EINTR (see ~event_loop).
class runtime final : public scheduler {
 public:
  explicit runtime(const runtime_options& opts = {});
  ~runtime() override;
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  /// Runs `t` (and everything it spawns that is ready) on the calling thread until `t`
  /// finishes; returns its value or rethrows its exception. Not reentrant.
  template <class T>
  T block_on(task<T> t);

  /// Starts `t` on this runtime; any thread. `site`: leave it defaulted (the spawn site).
  template <class T>
  join_handle<T> spawn(task<T> t, saturn::spawn_site site = saturn::spawn_site::current()) {
    return spawn_in(m_root, std::move(t), site);
  }

  /// The runtime's event loop (its thread only).
  event_loop& loop() noexcept { return m_loop; }
  /// Number of spawned tasks alive (started and not finished). The runtime's thread.
  std::size_t live_tasks() const noexcept { return m_live.size(); }
  /// The same, from any thread (may lag by the tasks starting or ending meanwhile).
  std::size_t live_task_count() const noexcept { return m_live.size_hint(); }
  /// The runtime's number in live_runtime_stats() (saturn/task/runtime_stats.hpp). Any thread.
  unsigned stats_id() const noexcept { return m_stats_id; }
  /// A copy of its event loop's counters. Any thread (see loop_stats).
  loop_stats loop_stats_snapshot() const noexcept { return m_loop.stats(); }

  void schedule(runnable* r) noexcept override;
  /// Worker 0 is the runtime's thread: like spawn(). Throws std::out_of_range for any
  /// other index. Any thread.
  void spawn_on(unsigned worker, runnable* r) override;
  void track(detail::promise_base* p) noexcept override { m_live.add(p); }
  void untrack(detail::promise_base* p) noexcept override { m_live.remove(p); }
  task_context& root_context() noexcept override { return m_root; }

 private:
  friend struct detail::runtime_access;
  void run_until(const std::coroutine_handle<>& h);

  event_loop m_loop;
  task_context m_root;
  detail::live_table m_live;
  scheduler* m_prev = nullptr;
  unsigned m_stats_id = 0;
  /// Programs of a block_on the loop threw out of (a failed io_uring_enter; a simulated
  /// deadlock): their operations may still be in the kernel, so their frames are
  /// destroyed by ~runtime, after it cancelled and reaped everything, not while block_on
  /// unwinds.
  std::vector<std::coroutine_handle<>> m_unwound;
};

namespace detail {
template <class T>
task<void> block_on_driver(task<T> t, std::optional<task_result<T>>& out, event_loop& loop) {
  out.emplace();
  try {
    if constexpr (std::is_void_v<T>) {
      co_await std::move(t);
    } else {
      out->return_value(co_await std::move(t));
    }
  } catch (...) {
    out->m_exception = std::current_exception();
  }
  loop.stop();
}
}  // namespace detail

template <class T>
T runtime::block_on(task<T> t) {
  std::optional<detail::task_result<T>> out;
  task<void> driver = detail::block_on_driver<T>(std::move(t), out, m_loop);
  auto h = driver.handle();
  h.promise().m_ctx = &m_root;
  m_loop.post(&h.promise());
  try {
    run_until(h);
  } catch (...) {
    m_unwound.push_back(driver.release());  // see m_unwound; `out` is never written again
    throw;
  }
  return out->take();
}

}  // namespace saturn
