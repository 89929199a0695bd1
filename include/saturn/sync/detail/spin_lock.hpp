/// \file
/// `spin_lock`: the small lock that guards each sync primitive's waiter lists. Critical
/// sections are a few pointer moves (never a resume, never a syscall), so spinning is
/// cheaper than parking a thread; after a short spin the thread yields so a preempted
/// holder gets the CPU back.
#pragma once

#include <saturn/detail/atomic.hpp>

#include <thread>

namespace saturn::detail {

/// A test-and-test-and-set lock meeting the Lockable requirements (use std::lock_guard).
///
/// Threading: any thread, including plain OS threads. Never suspends a task; blocks the
/// calling thread only while another thread holds the lock. Not recursive.
class spin_lock {
 public:
  spin_lock() noexcept = default;
  spin_lock(const spin_lock&) = delete;
  spin_lock& operator=(const spin_lock&) = delete;

  /// Takes the lock, spinning (then yielding) while it is held.
  void lock() noexcept {
    for (;;) {
      // ordering: acquire: the critical section sees everything the previous holder wrote.
      if (!m_locked.exchange(true, std::memory_order_acquire))
        return;
      unsigned spins = 0;
      // ordering: relaxed, only a hint to retry; the exchange above does the acquire.
      while (m_locked.load(std::memory_order_relaxed)) {
        if (++spins < 128) {
          cpu_relax();
        } else {
          spins = 0;
          std::this_thread::yield();
        }
      }
    }
  }

  /// Takes the lock if it is free; never waits.
  bool try_lock() noexcept {
    // ordering: relaxed pre-check avoids a cache-line steal; acquire as in lock().
    return !m_locked.load(std::memory_order_relaxed) && !m_locked.exchange(true, std::memory_order_acquire);
  }

  /// Releases the lock (the caller must hold it).
  void unlock() noexcept {
    // ordering: release publishes the critical section to the next holder.
    m_locked.store(false, std::memory_order_release);
  }

 private:
  atomic<bool> m_locked{false};
};

}  // namespace saturn::detail
