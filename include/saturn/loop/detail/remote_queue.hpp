/// \file
/// The loop's inbox for work handed over by other threads: a lock-free intrusive
/// multi-producer, single-consumer queue of `runnable`s.
///
/// Protocol: producers push onto a Treiber stack (one CAS on `m_head`); the loop thread
/// takes the whole stack with one exchange and reverses it, so each hand-off costs the
/// producer one CAS and the consumer one exchange per batch, and arrival order per producer
/// is kept. No lock anywhere, and the loop's hot path only does a relaxed load to see if
/// anything arrived.
#pragma once

#include <saturn/detail/atomic.hpp>
#include <saturn/loop/runnable.hpp>

#include <atomic>

namespace saturn::detail {

/// Threading: `push` from any thread; `take_all`/`maybe_nonempty` on the consumer thread.
class alignas(64) remote_queue {
 public:
  /// Adds `r`. Returns true when the queue was empty before (the consumer may need a wake).
  bool push(runnable* r) noexcept {
    // ordering: the seq_cst CAS publishes r (release) and orders the push before the
    // producer's seq_cst read of the loop's sleeping flag (the wake protocol).
    runnable* head = m_head.load(std::memory_order_relaxed);
    do {
      r->m_next_runnable = head;
    } while (!m_head.compare_exchange_weak(head, r, std::memory_order_seq_cst, std::memory_order_relaxed));
    return head == nullptr;
  }

  /// Cheap check for the loop's hot path (may be stale; a stale "empty" is caught by the
  /// sleep protocol in event_loop).
  bool maybe_nonempty() const noexcept {
    // ordering: relaxed, only a hint; take_all() does the acquire.
    return m_head.load(std::memory_order_relaxed) != nullptr;
  }

  /// Seq-cst emptiness check used by the sleep protocol (pairs with the producer's
  /// seq-cst read of the sleeping flag).
  bool nonempty_seq_cst() const noexcept { return m_head.load(std::memory_order_seq_cst) != nullptr; }

  /// Takes everything, oldest first (a null-terminated list through m_next_runnable).
  runnable* take_all() noexcept {
    // ordering: acquire pairs with the producers' release CAS.
    runnable* stack = m_head.exchange(nullptr, std::memory_order_acquire);
    runnable* fifo = nullptr;
    while (stack != nullptr) {
      runnable* next = stack->m_next_runnable;
      stack->m_next_runnable = fifo;
      fifo = stack;
      stack = next;
    }
    return fifo;
  }

 private:
  alignas(64) atomic<runnable*> m_head{nullptr};
};

}  // namespace saturn::detail
