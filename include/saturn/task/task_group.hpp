/// \file
/// `task_group`: a nursery — a scope that children are spawned into and that cannot end
/// while one of them is still running.
///
/// ```
/// co_await saturn::task_group::run([&](saturn::task_group& g) -> saturn::task<> {
///   for (int fd : clients)
///     g.spawn(serve(fd));              // starts now, runs concurrently with the body
///   co_return;
/// });                                  // returns once every child has ended
/// ```
///
/// The only way to get a group is `task_group::run(body)`, and run() always joins: after
/// the body has ended — normally or by an exception — it waits for every child. So a
/// child cannot be leaked by forgetting a join, and references the body's children hold
/// to the caller's locals stay valid. Children share the group's stop token (chained to
/// the caller's); `cancel()` stops them all, and the first exception — of a child or of
/// the body — stops the rest and is rethrown from run() once everything has ended.
///
/// Join protocol (m_count, one atomic):
///   m_count starts at 1: the body's reference. spawn() adds 1 per child; the caller of
///   spawn is the body or a running child, so it holds a reference and the count cannot
///   touch zero meanwhile. A child, once ended, untracks itself, frees its frame (and the
///   child task it owns) and then drops its reference — its last touch of the group. The
///   join stores the parent's promise and drops the body's reference; if that was the
///   last one it does not suspend. Otherwise the child that drops the last reference
///   wakes the parent (promise_base::wake, any thread). acq_rel on every decrement makes
///   each child's outcome visible to the parent (a release sequence), and the parent's
///   m_parent visible to the last child.
#pragma once

#include <saturn/detail/atomic.hpp>
#include <saturn/task/detail/child_driver.hpp>
#include <saturn/task/detail/stop_scope.hpp>
#include <saturn/task/task.hpp>
#include <saturn/task/this_task.hpp>
#include <saturn/task/time.hpp>

#include <atomic>
#include <cassert>
#include <concepts>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <functional>
#include <stdexcept>
#include <stop_token>
#include <type_traits>

namespace saturn {

class task_group;

namespace detail {
/// The R of the task<R> a group body returns.
template <class F>
using group_body_result_t = typename std::invoke_result_t<F&, task_group&>::value_type;
}  // namespace detail

/// A nursery of concurrently running child tasks. Not constructible by users: obtain one
/// from task_group::run(), which owns it and joins it.
///
/// Threading: the group lives in run()'s frame. spawn(), cancel(), token() and
/// stop_requested() may be called from the body or from any child of the group, on
/// whatever thread they run; children may end on any thread of the scheduler.
class task_group : private detail::child_scope {
 public:
  task_group(const task_group&) = delete;
  task_group& operator=(const task_group&) = delete;

  /// Runs `body(group)` — a callable returning task<R> — under a new group, then waits
  /// for every child the body (or a child) spawned, and returns the body's value.
  ///
  /// The body runs under the group's context: a cancel() or a failing child also stops
  /// the body's own awaits. `body` is moved into run()'s frame and lives until run()
  /// returns. Threading: await from a saturn task; suspends until the body and all
  /// children have ended. Cancellation: a stop of the awaiter's token stops the body and
  /// every child; run() still waits for them all. Exceptions: the first exception thrown
  /// by the body or a child stops everything else, and is rethrown here once all have
  /// ended (later ones are dropped). Throws std::invalid_argument if the body returns an
  /// empty task.
  template <class F>
    requires std::invocable<F&, task_group&> && detail::is_task<std::invoke_result_t<F&, task_group&>>::value
  static task<detail::group_body_result_t<F>> run(F body) {
    using R = detail::group_body_result_t<F>;
    task_context& parent = co_await this_task::context();
    task_group group(parent);
    detail::task_result<R> out;
    try {
      task<R> t = std::invoke(body, group);
      if (!t)
        throw std::invalid_argument("task_group::run: the body returned an empty task; return the task of a coroutine");
      if constexpr (std::is_void_v<R>)
        co_await detail::in_context_awaiter<R>{t.handle(), &group.m_stop.context()};
      else
        out.return_value(co_await detail::in_context_awaiter<R>{t.handle(), &group.m_stop.context()});
    } catch (...) {
      group.fail(std::current_exception());
    }
    co_await join_awaiter{&group};
    if (group.m_error)
      std::rethrow_exception(group.m_error);
    if constexpr (std::is_void_v<R>)
      co_return;
    else
      co_return out.take();
  }

  /// Starts `child` in this group: it is queued on the group's scheduler and runs
  /// concurrently with the body and the other children, under the group's stop token.
  /// Does not suspend. A group collects no values, so the child must be a task<void>
  /// (store a value where the body can read it after run(), or use when_all).
  ///
  /// Threading: call from the body or from a running child of this group (they hold the
  /// group open), on any thread. Spawning after run() has joined is a programming error.
  /// A child spawned into a cancelled group still starts; its first cancellable await
  /// ends with operation_canceled. Throws std::invalid_argument for an empty task.
  template <class T>
  void spawn(task<T> child) {
    static_assert(std::is_void_v<T>,
                  "task_group::spawn takes a task<void>: a group does not collect values; have the child store "
                  "its value, or use saturn::when_all");
    if (!child)
      throw std::invalid_argument("task_group::spawn: an empty task (moved-from or default-constructed) was passed");
    auto h = child.handle();
    detail::child_driver d = detail::drive_owned<void>(std::move(child));
    d.bind(*this, 0, h.promise(), m_stop.context());
    d.promise().m_fn = &child_entry;
    // ordering: relaxed: the caller holds a reference (body or running child), so the
    // count cannot reach zero concurrently (like copying a shared_ptr).
    [[maybe_unused]] const std::size_t before = m_count.fetch_add(1, std::memory_order_relaxed);
    assert(before != 0 && "task_group::spawn after the group has joined: spawn only from its body or children");
    m_stop.context().sched->spawn(&d.release().promise());
  }

  /// Stops the body and every child (their cancellable awaits end with
  /// std::errc::operation_canceled); run() still waits for them. Idempotent; any thread;
  /// does not suspend. Not an error: run() returns normally unless something threw.
  void cancel() noexcept { m_stop.request_stop(); }
  /// True once the group was cancelled (by cancel(), a failure, or the caller's token).
  bool stop_requested() const noexcept { return m_stop.stop_requested(); }
  /// The group's stop token, for code outside saturn's awaits. Any thread.
  std::stop_token token() const noexcept { return m_stop.token(); }

 private:
  explicit task_group(const task_context& parent) : m_stop(parent) { m_on_child_done = &on_done; }
  // lifetime: after run()'s join m_count is 0. Only when a runtime shutdown abandons the
  // frame of run() is a group destroyed with children left; the runtime then destroys
  // those itself (child_entry, run_mode::discard), and nothing here touches them.
  ~task_group() = default;

  struct join_awaiter {
    task_group* m_group;
    bool await_ready() const noexcept { return false; }
    template <class P>
    bool await_suspend(std::coroutine_handle<P> h) noexcept {
      static_assert(detail::saturn_promise<P>, "a task_group is joined from a saturn::task");
      m_group->m_parent = &h.promise();
      // ordering: acq_rel: release publishes m_parent to the child that drops the last
      // reference; acquire (when we drop it ourselves) sees every child's outcome.
      return m_group->m_count.fetch_sub(1, std::memory_order_acq_rel) != 1;
    }
    void await_resume() const noexcept {}
  };

  /// Records the first failure and stops everything. Any thread.
  void fail(std::exception_ptr e) noexcept {
    bool expected = false;
    // ordering: relaxed: m_error is read by the parent only after the join hand-off.
    if (m_failed.compare_exchange_strong(expected, true, std::memory_order_relaxed))
      m_error = std::move(e);
    m_stop.request_stop();
  }

  /// Run-queue entry of a child's driver: tracked as a live task while it runs, so a
  /// runtime shutdown can destroy it (run_mode::discard) like any spawned task.
  static void child_entry(runnable* r, run_mode mode) noexcept {
    auto* p = static_cast<detail::child_promise*>(r);
    auto h = std::coroutine_handle<detail::child_promise>::from_promise(*p);
    if (mode == run_mode::run) [[likely]] {
      if (p->m_live_index == detail::live_table::npos)
        p->track();
      h.resume();
      return;
    }
    // The runtime is shutting down: the group's run() is abandoned too and will never
    // join. Free the child here (m_own_ctx keeps m_ctx valid even if the group is gone).
    p->untrack();
    h.destroy();
  }

  static std::coroutine_handle<> on_done(detail::child_scope* scope,
                                         std::coroutine_handle<detail::child_promise> driver) noexcept {
    auto* self = static_cast<task_group*>(scope);
    detail::child_promise& p = driver.promise();
    p.untrack();
    if (p.m_child->has_failed())
      self->fail(p.child_error());
    // lifetime: free the driver and the child task it owns now, so the child's
    // parameters are destroyed inside the scope, before the group can end.
    driver.destroy();
    // ordering: acq_rel: release publishes this child's outcome (m_error, its effects);
    // acquire, for the last reference, sees the parent's m_parent.
    // lifetime: after a decrement that is not the last, the group may be gone at once.
    if (self->m_count.fetch_sub(1, std::memory_order_acq_rel) == 1)
      self->m_parent->wake();  // the parent cannot resume (or end the group) before this
    return std::noop_coroutine();
  }

  detail::stop_scope m_stop;
  saturn::detail::atomic<std::size_t> m_count{1};
  saturn::detail::atomic<bool> m_failed{false};
  std::exception_ptr m_error;
  detail::promise_base* m_parent = nullptr;
};

}  // namespace saturn
