/// \file
/// The deadline of a timed receive: a loop timer that, when it fires, pushes a time-out
/// marker into the process's own mailbox (so a time-out wakes the process exactly like a
/// message, through the one wake-up path). Heap-allocated and reference-counted (the
/// receive and the armed timer each hold a ref), because the process may be woken by a
/// message on another worker than the one whose loop holds the timer: the disarm then
/// travels to that loop through its inbox. A stale marker (its receive already ended) is
/// recognized by its sequence number and dropped.
#pragma once

#include <saturn/loop/event_loop.hpp>
#include <saturn/proc/pid.hpp>

#include <saturn/detail/atomic.hpp>

#include <atomic>
#include <chrono>

namespace saturn::detail {

struct receive_timer : timer_node {
  pid m_target;
  std::uint32_t m_seq = 0;
  event_loop* m_loop = nullptr;
  saturn::detail::atomic<int> m_refs{2};
  struct disarm_node : runnable {
    receive_timer* self;
  } m_disarm;

  /// Arms a timer on the calling thread's loop (a worker or runtime thread).
  static receive_timer* arm(pid target, std::uint32_t seq, clock::time_point deadline);
  /// The receive is done with the timer (any thread): cancels it if it has not fired.
  void finish() noexcept;

 private:
  void release() noexcept;
  static void fire(timer_node* n, run_mode mode) noexcept;
  static void run_disarm(runnable* r, run_mode mode) noexcept;
};

}  // namespace saturn::detail
