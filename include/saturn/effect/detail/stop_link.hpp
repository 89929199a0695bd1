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
/// Exactly one side delivers. Nothing is armed — not even initialized: the callback and
/// the posted node are raw storage constructed only by arm() / a cross-thread stop — when
/// the token cannot be stopped, so a pipeline started without a stop token pays one test
/// on start and one on completion.
#pragma once

#include <saturn/effect/core.hpp>
#include <saturn/loop/event_loop.hpp>

#include <saturn/detail/atomic.hpp>
#include <cstdint>
#include <memory>
#include <new>
#include <stop_token>

namespace saturn::effect::detail {

template <class Derived>
class stop_link {
 public:
  stop_link(const stop_link&) = delete;
  stop_link& operator=(const stop_link&) = delete;

 protected:
  enum : std::uint8_t { idle, requested, posted, done, done_after_post, arming, stop_while_arming };

  /// Registers for cancellation if `e` can be stopped. Call after the operation was
  /// submitted (the callback may run at once if a stop was already requested).
  void arm(event_loop* loop, const env& e) {
    m_loop = loop;
    if (!e.stoppable()) [[likely]]
      return;
    ::new (static_cast<void*>(&m_state)) saturn::detail::atomic<std::uint8_t>(arming);
    m_armed = true;
    // lifetime: destroyed by disarm() (before delivering) or the destructor.
    ::new (static_cast<void*>(m_cb)) callback(*e.token, request{this});
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
    if (!m_armed) [[likely]]
      return true;
    // ordering: acq_rel pairs with the requesting thread's CAS.
    return m_state.exchange(done, std::memory_order_acq_rel) != posted;
  }

  /// Drops the registration; call just before delivering. (If the callback is running on
  /// another thread this waits for it to return: it only posts, so briefly.)
  void disarm() noexcept {
    if (m_armed) {
      m_armed = false;
      std::destroy_at(std::launder(reinterpret_cast<callback*>(m_cb)));
    }
  }

  stop_link() noexcept {}
  ~stop_link() { disarm(); }

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
      auto* node = ::new (static_cast<void*>(m_node)) posted_node;
      node->m_fn = &run_posted;
      node->self = this;
      m_loop->post_remote(node);
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

  using callback = std::stop_callback<request>;
  union {
    saturn::detail::atomic<std::uint8_t> m_state;  // constructed by arm()
  };
  bool m_armed = false;
  alignas(posted_node) unsigned char m_node[sizeof(posted_node)];  // built when a stop is posted
  alignas(callback) unsigned char m_cb[sizeof(callback)];            // built by arm()
};

}  // namespace saturn::effect::detail
