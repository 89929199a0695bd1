/// \file
/// Tier A: the callback face of event_loop — nop, read, write (plain and fixed), timeout,
/// read_with_timeout, cancel, after / cancel_after, defer, defer_remote. Each call stores
/// the callable in a pool-allocated operation (no malloc in steady state) whose address is
/// the SQE's user_data; the completion calls it on the loop thread and returns the slot to
/// the pool. Built on the implementer part (saturn/ext/submit.hpp) like any other tier.
///
/// Threading: every call on the loop's own thread, except defer_remote (any thread). None
/// blocks; a callable never runs inside the call that queued it, always later on the loop
/// thread. Cancellation: cancel(handle, fn) for ring operations, cancel_after for timers;
/// a loop's shutdown completes what is in flight with -ECANCELED and frees queued
/// callables without calling them.
///
/// The member templates are declared in event_loop (so `loop.read(fd, ..., fn)` reads as
/// it always did) and defined here. event_loop.hpp includes this file at its end, so a
/// declared member is never left undefined; included first, this file pulls
/// event_loop.hpp in (whose own include of this file is then skipped) so it stands alone.
#pragma once

#include <saturn/loop/event_loop.hpp>
#include <saturn/ext/operation.hpp>
#include <saturn/ext/submit.hpp>

#include <cerrno>
#include <concepts>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace saturn {
namespace detail {

/// What every after() timer carries: the sequence number its handle must match.
struct callback_timer_base : timer_node {
  std::uint64_t m_seq = 0;
};

/// Calls fn with (res, flags) or (res), whichever it accepts.
template <class F>
void invoke_completion(F& fn, int res, unsigned flags) {
  if constexpr (std::is_invocable_v<F&, int, unsigned>)
    fn(res, flags);
  else
    fn(res);
}

template <class F>
concept completion_callable = std::is_invocable_v<F&, int, unsigned> || std::is_invocable_v<F&, int>;

/// What a callback_op without a timeout keeps instead of one: nothing.
struct no_timespec {};

/// An operation that owns a callable. For kernel timeouts (`IsTimeout`) -ETIME, the normal
/// expiry, is reported as 0. Only operations that carry a timeout (`HasTimespec`) hold
/// its timespec: the others fit the pool's 32-byte class, which halves the cache lines a
/// batch of small operations touches.
template <class F, bool IsTimeout = false, bool HasTimespec = IsTimeout>
struct callback_op final : operation {
  event_loop* m_loop;
  F m_fn;
  // lifetime: timeout ops point their SQE here
  [[no_unique_address]] std::conditional_t<HasTimespec, kernel_timespec, no_timespec> m_ts{};

  template <class G>
  callback_op(event_loop* loop, G&& fn) : m_loop(loop), m_fn(std::forward<G>(fn)) {
    m_complete = &complete;
  }

  static void complete(operation* self, int res, unsigned flags) noexcept {
    auto* op = static_cast<callback_op*>(self);
    if constexpr (IsTimeout)
      res = res == -ETIME ? 0 : res;
    detail::invoke_completion(op->m_fn, res, flags);
    event_loop* loop = op->m_loop;
    op->~callback_op();
    detail::loop_internals::pool(*loop).deallocate(op, sizeof(callback_op), alignof(callback_op));
  }

  template <class G>
  static callback_op* make(event_loop* loop, G&& fn) {
    void* mem = detail::loop_internals::pool(*loop).allocate(sizeof(callback_op), alignof(callback_op));
    return ::new (mem) callback_op(loop, std::forward<G>(fn));
  }
};

/// A posted callable (defer / defer_remote).
template <class F, bool Remote>
struct callback_runnable final : runnable {
  event_loop* m_loop;
  F m_call;
  template <class G>
  callback_runnable(event_loop* loop, G&& fn) : m_loop(loop), m_call(std::forward<G>(fn)) {
    m_fn = &run;
  }

  static void run(runnable* self, run_mode mode) noexcept {
    auto* r = static_cast<callback_runnable*>(self);
    if (mode == run_mode::run)
      r->m_call();
    if constexpr (Remote) {
      delete r;
    } else {
      event_loop* loop = r->m_loop;
      r->~callback_runnable();
      detail::loop_internals::pool(*loop).deallocate(r, sizeof(callback_runnable), alignof(callback_runnable));
    }
  }
};

/// A callable fired by a loop timer (after()). Discarding it frees it without a call.
template <class F>
struct callback_timer final : callback_timer_base {
  event_loop* m_loop;
  F m_call;
  template <class G>
  callback_timer(event_loop* loop, G&& fn) : m_loop(loop), m_call(std::forward<G>(fn)) {
    m_fire = &fire;
  }

  static void fire(timer_node* self, run_mode mode) noexcept {
    auto* t = static_cast<callback_timer*>(self);
    if (mode == run_mode::run)
      t->m_call();
    event_loop* loop = t->m_loop;
    t->~callback_timer();
    detail::loop_internals::pool(*loop).deallocate(t, sizeof(callback_timer), alignof(callback_timer));
  }
};

}  // namespace detail

template <class F>
event_loop::op_handle event_loop::nop(F&& fn) {
  static_assert(detail::completion_callable<std::decay_t<F>>, "nop(fn): fn must be callable as fn(int res) or fn(int res, unsigned flags)");
  auto* op = detail::callback_op<std::decay_t<F>>::make(this, std::forward<F>(fn));
  ext::submit_nop(*this, op);
  return {op};
}

template <class F>
event_loop::op_handle event_loop::read(int fd, void* buf, unsigned len, std::uint64_t offset, F&& fn) {
  static_assert(detail::completion_callable<std::decay_t<F>>, "read(..., fn): fn must be callable as fn(int res) or fn(int res, unsigned flags)");
  auto* op = detail::callback_op<std::decay_t<F>>::make(this, std::forward<F>(fn));
  ext::submit_read(*this, op, fd, buf, len, offset);
  return {op};
}

template <class F>
event_loop::op_handle event_loop::write(int fd, const void* buf, unsigned len, std::uint64_t offset, F&& fn) {
  static_assert(detail::completion_callable<std::decay_t<F>>, "write(..., fn): fn must be callable as fn(int res) or fn(int res, unsigned flags)");
  auto* op = detail::callback_op<std::decay_t<F>>::make(this, std::forward<F>(fn));
  ext::submit_write(*this, op, fd, buf, len, offset);
  return {op};
}

template <class F>
event_loop::op_handle event_loop::read_fixed(int fd, void* buf, unsigned len, std::uint64_t offset,
                                             unsigned buf_index, F&& fn) {
  static_assert(detail::completion_callable<std::decay_t<F>>, "read_fixed(..., fn): fn must be callable as fn(int res)");
  auto* op = detail::callback_op<std::decay_t<F>>::make(this, std::forward<F>(fn));
  ext::submit_read_fixed(*this, op, fd, buf, len, offset, buf_index);
  return {op};
}

template <class F>
event_loop::op_handle event_loop::write_fixed(int fd, const void* buf, unsigned len, std::uint64_t offset,
                                              unsigned buf_index, F&& fn) {
  static_assert(detail::completion_callable<std::decay_t<F>>, "write_fixed(..., fn): fn must be callable as fn(int res)");
  auto* op = detail::callback_op<std::decay_t<F>>::make(this, std::forward<F>(fn));
  ext::submit_write_fixed(*this, op, fd, buf, len, offset, buf_index);
  return {op};
}

template <class F>
event_loop::op_handle event_loop::timeout(std::chrono::nanoseconds d, F&& fn) {
  static_assert(detail::completion_callable<std::decay_t<F>>, "timeout(d, fn): fn must be callable as fn(int res)");
  using op_t = detail::callback_op<std::decay_t<F>, true>;
  auto* op = op_t::make(this, std::forward<F>(fn));
  op->m_ts = kernel_timespec::from(d);
  ext::submit_timeout(*this, op, &op->m_ts);
  return {op};
}

template <class F>
event_loop::op_handle event_loop::read_with_timeout(int fd, void* buf, unsigned len, std::uint64_t offset,
                                                    std::chrono::nanoseconds d, F&& fn) {
  static_assert(detail::completion_callable<std::decay_t<F>>, "read_with_timeout(..., fn): fn must be callable as fn(int res)");
  auto* op = detail::callback_op<std::decay_t<F>, false, true>::make(this, std::forward<F>(fn));
  op->m_ts = kernel_timespec::from(d);
  ext::submit_read(*this, op, fd, buf, len, offset);
  ext::link_timeout(*this, &op->m_ts);
  return {op};
}

template <class F>
void event_loop::cancel(op_handle h, F&& fn) {
  static_assert(detail::completion_callable<std::decay_t<F>>, "cancel(h, fn): fn must be callable as fn(int res)");
  auto* op = detail::callback_op<std::decay_t<F>>::make(this, std::forward<F>(fn));
  ext::submit_cancel(*this, h.op, op);
}

template <class F>
event_loop::timer_handle event_loop::after(std::chrono::nanoseconds d, F&& fn) {
  static_assert(std::is_invocable_v<std::decay_t<F>&>, "after(d, fn): fn must be callable as fn()");
  using t_t = detail::callback_timer<std::decay_t<F>>;
  auto* t = ::new (m_pool.allocate(sizeof(t_t), alignof(t_t))) t_t(this, std::forward<F>(fn));
  t->m_seq = ++m_timer_seq;
  add_timer(t, clock::now() + d);
  return timer_handle{t, t->m_seq};
}

template <class F>
void event_loop::defer(F&& fn) {
  static_assert(std::is_invocable_v<std::decay_t<F>&>, "defer(fn): fn must be callable as fn()");
  using r_t = detail::callback_runnable<std::decay_t<F>, false>;
  post(::new (m_pool.allocate(sizeof(r_t), alignof(r_t))) r_t(this, std::forward<F>(fn)));
}

template <class F>
void event_loop::defer_remote(F&& fn) {
  static_assert(std::is_invocable_v<std::decay_t<F>&>, "defer_remote(fn): fn must be callable as fn()");
  using r_t = detail::callback_runnable<std::decay_t<F>, true>;
  post_remote(new r_t(this, std::forward<F>(fn)));
}

}  // namespace saturn
