/// \file
/// Cancellation of an in-flight leaf (ring operation or loop timer) by the std::stop_token
/// of its environment — the same token tier B's tasks carry — safe from any thread: tier
/// C's adapter of the one cancellation protocol (loop/detail/cancel_core.hpp), where
/// finishing means calling the receiver (Derived::deliver()). The std::stop_callback lives
/// inside the leaf, built only when the token can be stopped, so a pipeline started
/// without a stop token pays one test on start and one on completion.
#pragma once

#include <saturn/effect/core.hpp>
#include <saturn/loop/detail/cancel_core.hpp>

namespace saturn::effect::detail {

/// Derived provides `cancel_now()` (loop thread: ASYNC_CANCEL or drop the timer; the final
/// completion then delivers) and `deliver()`, and befriends this class. Threading: as
/// cancel_core.
template <class Derived>
class stop_link : public saturn::detail::cancel_core<stop_link<Derived>> {
  using core = saturn::detail::cancel_core<stop_link<Derived>>;
  friend core;

 protected:
  /// Registers for cancellation if `e` can be stopped. Call after the operation was
  /// submitted (the callback may run at once if a stop was already requested).
  void arm(event_loop* loop, const env& e) { core::arm(loop, e.token); }
  /// Called on completion (loop thread). False when a cross-thread request is in flight:
  /// its runnable delivers instead.
  bool complete_may_deliver() noexcept { return this->complete_may_proceed(); }
  using core::disarm;

 private:
  void core_cancel() noexcept { static_cast<Derived*>(this)->cancel_now(); }
  void core_after_post() noexcept { static_cast<Derived*>(this)->deliver(); }
};

}  // namespace saturn::effect::detail
