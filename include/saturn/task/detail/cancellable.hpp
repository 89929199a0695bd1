/// \file
/// Cancellation of a suspended await by the task's std::stop_token, safe from any
/// thread: tier B's adapter of the one cancellation protocol (loop/detail/cancel_core.hpp),
/// where finishing means resuming the task. The std::stop_callback is boxed (from the
/// frame allocator) only when the task can actually be cancelled, so an uncancellable
/// await stays small in the task's frame.
#pragma once

#include <saturn/loop/detail/cancel_core.hpp>
#include <saturn/task/detail/promise_base.hpp>

#include <cstddef>

namespace saturn::detail {

/// cancel_core's Box for tier B: the callback comes from the frame allocator.
struct frame_box {
  static void* allocate(std::size_t n) { return frame_allocate(n); }
  static void deallocate(void* p, std::size_t n) noexcept { frame_deallocate(p, n); }
};

/// Derived provides `cancel_now()` (loop thread: cancel the operation; its completion
/// then resumes the task as usual). Threading: as cancel_core.
template <class Derived>
class cancellable : public cancel_core<cancellable<Derived>, frame_box> {
  using core = cancel_core<cancellable<Derived>, frame_box>;
  friend core;

 protected:
  /// Registers for cancellation if the task's token can be stopped. Call after the
  /// operation was started (the callback may run at once if a stop was already requested).
  void arm_cancellation(promise_base* p, event_loop* loop) {
    m_promise = p;
    this->arm(loop, &p->token());
  }
  /// Drops the registration; call in await_resume.
  void disarm_cancellation() noexcept { this->disarm(); }
  /// Called by Derived on completion (loop thread). Returns false when the task must not
  /// be resumed now (a cross-thread cancel request is in flight and will resume it).
  bool complete_may_resume() noexcept { return this->complete_may_proceed(); }

  promise_base* m_promise = nullptr;

 private:
  void core_cancel() noexcept { static_cast<Derived*>(this)->cancel_now(); }
  void core_after_post() noexcept { m_promise->wake(); }  // resume here, exactly once
};

}  // namespace saturn::detail
