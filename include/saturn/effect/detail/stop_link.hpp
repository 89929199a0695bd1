/// \file
/// Cancellation of an in-flight leaf (ring operation or loop timer) by the std::stop_token
/// of its environment — the same token tier B's tasks carry — safe from any thread.
///
/// The protocol is tier B's (task/detail/cancellable.hpp), with "resume the task" replaced
/// by "call the receiver" (Derived::deliver()). One byte of state:
///   idle ──completion──▶ done                        (the normal path; deliver)
///   idle ──stop on the loop thread──▶ requested; Derived::cancel_now() (ASYNC_CANCEL);
///        the final completion then delivers
///   idle ──stop on another thread──▶ posted; a runnable embedded here goes to the loop,
///        which moves posted ──▶ requested and cancels, or, if the operation completed
///        meanwhile (done_after_post), delivers itself.
/// Exactly one side delivers. Nothing is armed when the token cannot be stopped (the
/// fast path costs one test), so a pipeline started without a stop token pays nothing.
#pragma once

#include <saturn/effect/core.hpp>
#include <saturn/loop/event_loop.hpp>

#include <atomic>
#include <cstdint>
#include <optional>
#include <stop_token>

namespace saturn::effect::detail {

template <class Derived>
class stop_link {
 protected:
  enum : std::uint8_t { idle, requested, posted, done, done_after_post, arming, stop_while_arming };

  /// Registers for cancellation if `e` can be stopped. Call after the operation was
  /// submitted (the callback may run at once if a stop was already requested).
  void arm(event_loop* loop, const env& e) {
    m_loop = loop;
    if (!e.stoppable()) [[likely]]
      return;
    m_state.store(arming, std::memory_order_relaxed);
    m_cb.emplace(*e.token, request{this});
    std::uint8_t expected = arming;
    if (m_state.compare_exchange_strong(expected, idle, std::memory_order_acq_rel))
      return;
    if (expected == stop_while_arming) {
      m_state.store(requested, std::memory_order_release);
      static_cast<Derived*>(this)->cancel_now();
    }
    // expected == posted: a request from another thread is on its way.
  }

  /// Called on completion (loop thread). False when a cross-thread request is in flight:
  /// its runnable delivers instead.
  bool complete_may_deliver() noexcept {
    if (!m_cb) [[likely]]
      return true;
    // ordering: acq_rel pairs with the requesting thread's CAS.
    return m_state.exchange(done, std::memory_order_acq_rel) != posted;
  }

  /// Drops the registration; call just before delivering. (If the callback is running on
  /// another thread this waits for it to return: it only posts, so briefly.)
  void disarm() noexcept { m_cb.reset(); }

  event_loop* m_loop = nullptr;

 private:
  struct request {
    stop_link* self;
    void operator()() const noexcept { self->on_stop(); }
  };

  void on_stop() noexcept {
    std::uint8_t expected = arming;
    const bool on_loop = event_loop::current() == m_loop;
    if (on_loop && m_state.compare_exchange_strong(expected, stop_while_arming, std::memory_order_acq_rel))
      return;  // arm() acts on it once registered
    expected = idle;
    if (on_loop) {
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
    stop_link* self = static_cast<posted_node*>(r)->self;
    if (mode == run_mode::discard)
      return;
    std::uint8_t expected = posted;
    if (self->m_state.compare_exchange_strong(expected, requested, std::memory_order_acq_rel))
      static_cast<Derived*>(self)->cancel_now();
    else  // completed while the request travelled: deliver here, exactly once
      static_cast<Derived*>(self)->deliver();
  }
  struct posted_node : runnable {
    stop_link* self = nullptr;
  };

  std::atomic<std::uint8_t> m_state{idle};
  posted_node m_node;
  std::optional<std::stop_callback<request>> m_cb;
};

}  // namespace saturn::effect::detail
