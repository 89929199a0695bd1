/// \file
/// The one cancellation protocol of saturn's awaits: an operation in flight on a loop,
/// stopped by a std::stop_token from any thread. Tier B's awaits (task/detail/
/// cancellable.hpp: resume the task) and tier C's leaves (effect/detail/stop_link.hpp:
/// call the receiver) are thin adapters over it; they differ only in what "finish" means
/// and where the std::stop_callback lives.
///
/// Protocol (one byte of state):
///   idle ──completion──▶ done                        (the normal path; finish)
///   idle ──stop on the loop thread──▶ requested; cancel() (e.g. ASYNC_CANCEL), and the
///        final completion then finishes
///   idle ──stop on another thread──▶ posted; a runnable embedded here goes to the loop,
///        which moves posted ──▶ requested and cancels, or, if the operation completed
///        meanwhile (posted ──completion──▶ done), finishes itself (after_post()).
///   arming: the callback is being registered; a stop on the loop thread during it (even
///        inline, from the stop_callback constructor) is only recorded (stop_while_arming)
///        and acted on once the registration is stored, so the owner is never finished —
///        and its frame freed — under arm()'s feet.
/// Exactly one side finishes, and nothing here is touched after it did. Nothing is armed
/// — not even constructed: the state byte, the posted node and the callback are raw
/// storage built by arm() or a cross-thread stop — when the token cannot be stopped, so
/// an uncancellable operation pays one test on start and one on completion.
#pragma once

#include <saturn/loop/event_loop.hpp>

#include <saturn/detail/atomic.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <stop_token>
#include <type_traits>

namespace saturn::detail {

/// The cancellation state machine, CRTP over `Hooks`, which provides (callable by this
/// class: befriend it) `core_cancel()` — cancel the operation, loop thread — and
/// `core_after_post()` — finish after a cross-thread request found the operation
/// complete, loop thread. `Box` is void to keep the std::stop_callback inside this object,
/// or a type with `static void* allocate(std::size_t)` and `static void deallocate(void*,
/// std::size_t) noexcept` to allocate it only when armed (a small object while the token
/// cannot be stopped). Threading: arm, complete_may_proceed and disarm on the operation's
/// loop thread; the registered callback runs on whichever thread requests the stop.
template <class Hooks, class Box = void>
class cancel_core {
 public:
  cancel_core(const cancel_core&) = delete;
  cancel_core& operator=(const cancel_core&) = delete;

 protected:
  enum : std::uint8_t { idle, requested, posted, done, arming, stop_while_arming };

  cancel_core() noexcept {}
  ~cancel_core() { disarm(); }

  /// Registers for cancellation by `*tok` when it can be stopped (`tok` may be null). Call
  /// after the operation was started: the callback may run at once if a stop was already
  /// requested, and then cancels it.
  void arm(event_loop* loop, const std::stop_token* tok) {
    m_loop = loop;
    if (tok == nullptr || !tok->stop_possible()) [[likely]]
      return;
    void* where;
    if constexpr (boxed)
      where = Box::allocate(sizeof(callback));  // before anything is marked: it may throw
    else
      where = m_cb.bytes;
    ::new (static_cast<void*>(&m_state)) saturn::detail::atomic<std::uint8_t>(arming);
    m_armed = true;
    // lifetime: destroyed by disarm() (before finishing) or the destructor.
    callback* cb = ::new (where) callback(*tok, request{this});
    if constexpr (boxed)
      m_cb.ptr = cb;
    std::uint8_t expected = arming;
    if (m_state.compare_exchange_strong(expected, idle, std::memory_order_acq_rel))
      return;
    if (expected == stop_while_arming) {
      m_state.store(requested, std::memory_order_release);
      hooks().core_cancel();
    }
    // expected == posted: a request from another thread is already on its way.
  }

  /// Called on completion (loop thread). False when the owner must not finish now: a
  /// cross-thread request is in flight, and its runnable finishes instead.
  bool complete_may_proceed() noexcept {
    if (!m_armed) [[likely]]
      return true;
    // ordering: acq_rel pairs with the requesting thread's CAS.
    return m_state.exchange(done, std::memory_order_acq_rel) != posted;
  }

  /// Drops the registration; call just before finishing. (If the callback is running on
  /// another thread this waits for it to return: it only posts, so briefly.)
  void disarm() noexcept {
    if (!m_armed)
      return;
    m_armed = false;
    callback* cb = current_callback();
    std::destroy_at(cb);
    if constexpr (boxed)
      Box::deallocate(cb, sizeof(callback));
  }

  event_loop* m_loop = nullptr;

 private:
  static constexpr bool boxed = !std::is_void_v<Box>;

  struct request {
    cancel_core* self;
    void operator()() const noexcept { self->on_stop(); }
  };
  using callback = std::stop_callback<request>;
  struct posted_node : runnable {
    cancel_core* self = nullptr;
  };
  struct inline_home {
    alignas(callback) unsigned char bytes[sizeof(callback)];
  };
  struct boxed_home {
    callback* ptr;
  };

  Hooks& hooks() noexcept { return *static_cast<Hooks*>(this); }
  callback* current_callback() noexcept {
    if constexpr (boxed)
      return m_cb.ptr;
    else
      return std::launder(reinterpret_cast<callback*>(m_cb.bytes));
  }

  void on_stop() noexcept {
    std::uint8_t expected = arming;
    const bool on_loop = event_loop::current() == m_loop;
    if (on_loop && m_state.compare_exchange_strong(expected, stop_while_arming, std::memory_order_acq_rel))
      return;  // arm() acts on it once registered
    expected = idle;
    if (on_loop) {
      if (m_state.compare_exchange_strong(expected, requested, std::memory_order_acq_rel))
        hooks().core_cancel();
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
    cancel_core* self = static_cast<posted_node*>(r)->self;
    if (mode == run_mode::discard)
      return;
    std::uint8_t expected = posted;
    if (self->m_state.compare_exchange_strong(expected, requested, std::memory_order_acq_rel))
      self->hooks().core_cancel();
    else  // completed while the request travelled: finish here, exactly once
      self->hooks().core_after_post();
  }

  union {
    saturn::detail::atomic<std::uint8_t> m_state;  // constructed by arm()
  };
  bool m_armed = false;
  alignas(posted_node) unsigned char m_node[sizeof(posted_node)];  // built when a stop is posted
  std::conditional_t<boxed, boxed_home, inline_home> m_cb;
};

}  // namespace saturn::detail
