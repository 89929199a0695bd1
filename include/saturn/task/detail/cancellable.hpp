/// \file
/// Cancellation of a suspended await by a std::stop_token, safe from any thread.
///
/// Protocol (one byte of state, `m_state`):
///   idle ──completion──▶ done                       (the normal path)
///   idle ──stop on the awaiter's loop thread──▶ requested; Derived::cancel_now() runs
///   idle ──stop on another thread──▶ posted; a runnable embedded here is handed to the
///        loop, which then moves posted ──▶ requested and calls cancel_now(), or, if the
///        operation completed meanwhile (posted ──completion──▶ done-after-post), resumes
///        the task itself.
/// The awaiter (and so this runnable) lives in the task's frame, and the task is resumed
/// exactly once, by whichever side sees the other's mark, so nothing is touched after the
/// frame moves on.
#pragma once

#include <saturn/loop/event_loop.hpp>
#include <saturn/task/detail/promise_base.hpp>

#include <saturn/detail/atomic.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <stop_token>

namespace saturn::detail {

template <class Derived>
class cancellable {
 protected:
  enum : std::uint8_t { idle, requested, posted, done, done_after_post, arming, stop_while_arming };

  /// Registers for cancellation if the task's token can be stopped. Call after the
  /// operation was started (the callback may run at once if a stop was already requested).
  void arm_cancellation(promise_base* p, event_loop* loop) {
    m_promise = p;
    m_loop = loop;
    const std::stop_token& tok = p->token();
    if (!tok.stop_possible())
      return;
    // A stop may arrive while the callback is being registered (even inline, from the
    // stop_callback constructor): it is only recorded then, and acted on once the box is
    // stored — otherwise the task could be resumed, and its frame freed, under our feet.
    m_state.store(arming, std::memory_order_relaxed);
    m_callback.reset(new callback_box{std::stop_callback<request>(tok, request{this})});
    std::uint8_t expected = arming;
    if (m_state.compare_exchange_strong(expected, idle, std::memory_order_acq_rel))
      return;
    if (expected == stop_while_arming) {
      m_state.store(requested, std::memory_order_release);
      static_cast<Derived*>(this)->cancel_now();
    }
    // expected == posted: a request from another thread is already on its way.
  }
  /// Drops the registration; call in await_resume.
  void disarm_cancellation() noexcept { m_callback.reset(); }

  /// Called by Derived on completion (loop thread). Returns false when the task must not
  /// be resumed now (a cross-thread cancel request is in flight and will resume it).
  bool complete_may_resume() noexcept {
    if (!m_callback)
      return true;
    // ordering: acq_rel pairs with the requesting thread's CAS.
    return m_state.exchange(done, std::memory_order_acq_rel) != posted;
  }

  promise_base* m_promise = nullptr;
  event_loop* m_loop = nullptr;

 private:
  struct request {
    cancellable* self;
    void operator()() const noexcept { self->on_stop(); }
  };

  void on_stop() noexcept {
    std::uint8_t expected = arming;
    if (event_loop::current() == m_loop &&
        m_state.compare_exchange_strong(expected, stop_while_arming, std::memory_order_acq_rel))
      return;  // arm_cancellation acts on it once registered
    expected = idle;
    if (event_loop::current() == m_loop) {
      if (m_state.compare_exchange_strong(expected, requested, std::memory_order_acq_rel))
        static_cast<Derived*>(this)->cancel_now();
      return;
    }
    if (m_state.compare_exchange_strong(expected, posted, std::memory_order_acq_rel) ||
        (expected == arming && m_state.compare_exchange_strong(expected, posted, std::memory_order_acq_rel))) {
      m_node.m_fn = &run_posted;
      m_node.self = this;
      m_loop->post_remote(&m_node);
    }
  }

  static void run_posted(runnable* r, run_mode mode) noexcept {
    cancellable* self = static_cast<posted_node*>(r)->self;
    if (mode == run_mode::discard)
      return;
    std::uint8_t expected = posted;
    if (self->m_state.compare_exchange_strong(expected, requested, std::memory_order_acq_rel))
      static_cast<Derived*>(self)->cancel_now();
    else  // completed while the request travelled: resume here, exactly once
      self->m_promise->wake();
  }
  struct posted_node : runnable {
    cancellable* self = nullptr;
  };

  /// std::stop_callback is ~88 bytes; it is boxed (from the frame allocator) only when the
  /// task can actually be cancelled, so an uncancellable await stays small in the frame.
  struct callback_box {
    std::stop_callback<request> cb;
    static void* operator new(std::size_t n) { return frame_allocate(n); }
    static void operator delete(void* p, std::size_t n) noexcept { frame_deallocate(p, n); }
  };
  saturn::detail::atomic<std::uint8_t> m_state{idle};
  posted_node m_node;
  std::unique_ptr<callback_box> m_callback;
};

}  // namespace saturn::detail
