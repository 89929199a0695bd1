/// \file
/// `latch`: a single-use countdown. Tasks (or threads) count it down; once it reaches
/// zero every waiting task is woken and later waits complete at once.
///
/// ```
/// saturn::latch started(n);
/// // each of n workers:  started.count_down();
/// // the coordinator:    co_await started.wait();
/// ```
#pragma once

#include <saturn/sync/event.hpp>

#include <cstddef>

namespace saturn {

/// A countdown latch (like std::latch, for tasks).
///
/// Threading: count_down(), try_wait() and count() may be called from any thread,
/// including plain OS threads; wait() is awaited from a saturn task. Counting down below
/// zero is a programming error: the process aborts with a message. Lifetime: see
/// saturn/sync/detail/waiter.hpp.
class latch {
 public:
  /// A latch that opens after `count` count-downs (at once when 0).
  explicit latch(std::size_t count) noexcept : m_count(count), m_open(count == 0) {}
  latch(const latch&) = delete;
  latch& operator=(const latch&) = delete;

  /// Decrements the count by `n`; the count-down that reaches zero wakes every waiter.
  /// Any thread; never suspends.
  void count_down(std::size_t n = 1) noexcept;
  /// True once the count is zero. Any thread.
  bool try_wait() const noexcept { return m_open.is_set(); }
  /// The current count (a snapshot). Any thread.
  std::size_t count() const noexcept {
    // ordering: relaxed: a diagnostic snapshot; try_wait() is the synchronizing query.
    return m_count.load(std::memory_order_relaxed);
  }
  /// `co_await l.wait()` suspends until the count reaches zero (at once if it has).
  /// Returns ok, or std::errc::operation_canceled if the task's stop token stopped the wait
  /// first. Await from a saturn task, directly.
  detail::event_awaiter<wait_op::latch_wait> wait() noexcept { return detail::event_awaiter<wait_op::latch_wait>(&m_open); }

 private:
  detail::atomic<std::size_t> m_count;
  detail::event_core m_open;  ///< the gate: set by the last count-down
};

}  // namespace saturn
