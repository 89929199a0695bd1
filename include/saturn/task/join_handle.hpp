/// \file
/// spawn() and join_handle<T>: start a task that runs on its own, and later await its
/// value (or exception). Dropping the handle detaches the task; it still runs to the end
/// and frees itself.
///
/// ```
/// auto h = saturn::spawn(fetch(url));        // inside a task: on the same scheduler
/// auto g = saturn::spawn_on(0, per_core());  // on worker 0 of that scheduler
/// int v = co_await std::move(h);
/// ```
#pragma once

#include <saturn/detail/atomic.hpp>
#include <saturn/task/task.hpp>

#include <bit>
#include <saturn/detail/spawn_site.hpp>
#include <stdexcept>
#include <type_traits>

namespace saturn {

/// Thrown from a join when the task was abandoned because its runtime shut down first.
class task_abandoned : public std::runtime_error {
 public:
  task_abandoned() : std::runtime_error("saturn: task abandoned: its runtime was destroyed before it finished") {}
};

namespace detail {

/// Run-queue entry of a spawned task: registers it as alive on its first run; when the
/// runtime shuts down (run_mode::discard) it abandons the task instead.
template <class P>
void spawned_entry(runnable* r, run_mode mode) noexcept {
  auto* p = static_cast<P*>(r);
  if (mode == run_mode::run) {
    // ordering: relaxed atomic read; another worker may rewrite the slot bits (not npos-ness).
    if (saturn::detail::atomic_ref<std::uint32_t>(p->m_live_index).load(std::memory_order_relaxed) == live_table::npos) [[unlikely]]
      p->track();
    std::coroutine_handle<P>::from_promise(*p).resume();
    return;
  }
  // Abandon: idempotent, single-threaded (shutdown).
  p->untrack();
  if (p->m_join.load(std::memory_order_acquire) & join_complete)
    return;
  p->leave_wait();  // the outcome goes into the wait node's bytes: unlink it first
  p->fail(std::make_exception_ptr(task_abandoned{}));
  const std::uint32_t old = p->m_join.fetch_or(join_complete, std::memory_order_acq_rel);
  if (old & join_detached)
    std::coroutine_handle<P>::from_promise(*p).destroy();
}

}  // namespace detail

/// The right to await a spawned task's result. Move-only.
///
/// Threading: may be awaited (once) from any task, on any thread; the task may finish on
/// another thread. The awaiting task continues on its own scheduler: inline on the
/// finishing thread when both run on one scheduler, queued back to its scheduler (a
/// cross-thread hand-off) when the task was spawned on another. Destroying the handle detaches the task. Must not outlive the
/// runtime that ran the task unless the task has finished.
template <class T>
class [[nodiscard]] join_handle {
 public:
  using promise_type = detail::task_promise<T>;

  join_handle() noexcept = default;
  explicit join_handle(std::coroutine_handle<promise_type> h) noexcept : m_h(h) {}
  join_handle(join_handle&& o) noexcept : m_h(std::exchange(o.m_h, {})) {}
  join_handle& operator=(join_handle&& o) noexcept {
    if (this != &o) {
      detach();
      m_h = std::exchange(o.m_h, {});
    }
    return *this;
  }
  ~join_handle() { detach(); }

  /// Lets the task run on without a handle; it frees itself when it ends.
  void detach() noexcept {
    if (!m_h)
      return;
    auto h = std::exchange(m_h, {});
    // ordering: acq_rel: if the task already completed we own the frame (acquire);
    // otherwise the task sees the bit and frees itself (release).
    const std::uint32_t old = h.promise().m_join.fetch_or(detail::join_detached, std::memory_order_acq_rel);
    if (old & detail::join_complete)
      h.destroy();
  }

  /// True once the task has finished (its result is ready).
  bool is_finished() const noexcept {
    return m_h && (m_h.promise().m_join.load(std::memory_order_acquire) & detail::join_complete);
  }
  explicit operator bool() const noexcept { return static_cast<bool>(m_h); }

  struct awaiter {
    join_handle* m_self;
    bool await_ready() const noexcept { return m_self->is_finished(); }
    template <class Q>
    bool await_suspend(std::coroutine_handle<Q> caller) noexcept {
      promise_type& p = m_self->m_h.promise();
      std::uint32_t bits = detail::join_waiting;
      p.m_continuation = caller;
      if constexpr (std::is_base_of_v<detail::promise_base, Q>) {
        // A joiner on another scheduler (a task of an io pool awaiting work it gave a
        // cpu_bound pool, or a runtime's task awaiting a pool's) goes back to its own:
        // resumed inline it would continue on the other scheduler's thread, without its
        // loop. Same context: the inline resume, as before.
        detail::promise_base& mine = caller.promise();
        const task_context* const theirs = p.m_ctx;
        if (mine.m_ctx != theirs && mine.m_ctx != nullptr && theirs != nullptr && mine.m_ctx->sched != theirs->sched) {
          p.m_continuation = std::coroutine_handle<>::from_address(static_cast<detail::promise_base*>(&mine));
          bits |= detail::join_foreign;
        }
      }
      // ordering: release publishes m_continuation to the finishing task; acquire sees
      // its result if it finished meanwhile (then we do not suspend).
      const std::uint32_t old = p.m_join.fetch_or(bits, std::memory_order_acq_rel);
      return (old & detail::join_complete) == 0;
    }
    T await_resume() {
      auto h = std::exchange(m_self->m_h, {});
      struct destroy_guard {
        std::coroutine_handle<promise_type> h;
        ~destroy_guard() { h.destroy(); }
      } guard{h};
      return h.promise().take();
    }
  };
  /// Waits for the task; returns its value or rethrows its exception. Consumes the handle.
  awaiter operator co_await() && noexcept { return awaiter{this}; }
  awaiter operator co_await() & noexcept { return awaiter{this}; }

 private:
  std::coroutine_handle<promise_type> m_h{};
};

namespace detail {
/// Takes `t`'s frame and makes it a spawned task of `ctx`, not yet queued: the caller
/// hands the promise (a runnable) to a scheduler, then wraps the handle in a join_handle.
/// `site` is where the spawn was written (kept for task dumps, saturn/sched/task_dump.hpp).
template <class T>
std::coroutine_handle<typename task<T>::promise_type> prepare_spawn(task_context& ctx, task<T>& t,
                                                                   saturn::spawn_site site) noexcept {
  static_assert(sizeof(saturn::spawn_site) == sizeof(std::uintptr_t), "a spawn_site is one pointer");
  auto h = t.release();
  auto& p = h.promise();
  p.m_ctx = &ctx;
  p.stash_spawn_site(std::bit_cast<std::uintptr_t>(site));
  p.m_join.store(join_spawned | join_sited, std::memory_order_relaxed);
  p.m_fn = &spawned_entry<typename task<T>::promise_type>;
  return h;
}
}  // namespace detail

/// Starts `t` on the scheduler of `ctx` and returns its handle. Any thread. `site` (leave
/// it defaulted) is the spawn site a task dump shows.
template <class T>
join_handle<T> spawn_in(task_context& ctx, task<T> t, saturn::spawn_site site = saturn::spawn_site::current()) {
  auto h = detail::prepare_spawn(ctx, t, site);
  ctx.sched->spawn(&h.promise());
  return join_handle<T>(h);
}

/// As spawn_in(ctx, t), but the task starts on worker `worker` of ctx's scheduler (see
/// thread_pool::spawn_on). Any thread. Throws std::out_of_range when the scheduler has no
/// such worker; `t` is then destroyed unstarted.
template <class T>
join_handle<T> spawn_in(task_context& ctx, unsigned worker, task<T> t,
                        saturn::spawn_site site = saturn::spawn_site::current()) {
  auto h = detail::prepare_spawn(ctx, t, site);
  try {
    ctx.sched->spawn_on(worker, &h.promise());
  } catch (...) {
    h.destroy();  // never queued: nobody else knows the frame
    throw;
  }
  return join_handle<T>(h);
}

namespace detail {
/// The root context of the calling thread's scheduler (scheduler::current()). Throws
/// std::logic_error naming `op` (and what to call instead) when the thread has none.
task_context& calling_root_context(const char* op);
}  // namespace detail

/// Starts `t` on the scheduler the caller runs on — inside a task, its own runtime or
/// pool — and returns its handle. The task gets the scheduler's root context, like
/// `pool.spawn(t)`: it does not inherit the caller's stop token, so cancelling the caller
/// does not cancel it, and it may outlive the caller (detach the handle or drop it).
/// Threading: from a saturn task, or from any thread whose scheduler::current() is set (a
/// pool's worker, the thread that created a runtime); never suspends. From any other
/// thread it is a programming error and throws std::logic_error (`t` is then destroyed
/// unstarted): name the scheduler there, `pool.spawn(t)` or `rt.spawn(t)`. `site` (leave
/// it defaulted) is the spawn site a task dump shows (saturn/sched/task_dump.hpp).
template <class T>
join_handle<T> spawn(task<T> t, saturn::spawn_site site = saturn::spawn_site::current()) {
  task_context& root = detail::calling_root_context("spawn");
  auto h = detail::prepare_spawn(root, t, site);
  root.sched->spawn(&h.promise());
  return join_handle<T>(h);
}

/// Like spawn(t), but the task starts on worker `worker` of the caller's scheduler (see
/// thread_pool::spawn_on for what that placement guarantees; a single-threaded runtime
/// has worker 0 only). Threading: as spawn(). Throws std::out_of_range when the scheduler
/// has no such worker, std::logic_error when the calling thread has no scheduler; `t` is
/// then destroyed unstarted.
template <class T>
join_handle<T> spawn_on(unsigned worker, task<T> t, saturn::spawn_site site = saturn::spawn_site::current()) {
  task_context& root = detail::calling_root_context("spawn_on");
  auto h = detail::prepare_spawn(root, t, site);
  try {
    root.sched->spawn_on(worker, &h.promise());
  } catch (...) {
    h.destroy();  // never queued: nobody else knows the frame
    throw;
  }
  return join_handle<T>(h);
}

}  // namespace saturn
