/// \file
/// `mutex`: mutual exclusion between tasks. A task that waits for the lock suspends (its
/// thread runs other tasks); unlock() hands the lock straight to the oldest waiter (FIFO,
/// no barging), so every waiter gets it in turn.
///
/// ```
/// saturn::mutex m;
/// auto g = co_await m.lock();   // result<mutex::guard>
/// if (!g) co_return;            // cancelled while waiting
/// /* ... */                     // critical section; may co_await
/// ```                           // g's destructor unlocks
#pragma once

#include <saturn/result.hpp>
#include <saturn/sync/detail/waiter.hpp>

#include <coroutine>
#include <optional>
#include <utility>

namespace saturn {

class mutex;

namespace detail {
struct mutex_awaiter : waiter {
  mutex* m_mutex;
  explicit mutex_awaiter(mutex* m) noexcept : m_mutex(m) {}
  bool await_ready() const noexcept { return false; }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) noexcept {
    static_assert(saturn_promise<P>, "saturn::mutex::lock() must be awaited from a saturn::task");
    return suspend(&h.promise());
  }
  inline auto await_resume() noexcept;
  bool suspend(promise_base* p) noexcept;
};
}  // namespace detail

/// An asynchronous, FIFO-fair mutex.
///
/// Threading: the lock belongs to a holder (a guard), not to a thread: a task may lock on
/// one thread and unlock on another, and unlock()/try_lock() may be called from plain OS
/// threads. lock() suspends the awaiting task, never the thread. Not recursive: a task
/// that locks twice waits for itself forever. Lifetime: see saturn/sync/detail/waiter.hpp.
class mutex {
 public:
  /// Owns the lock of a mutex and releases it on destruction. Move-only.
  class [[nodiscard]] guard {
   public:
    guard() noexcept = default;
    guard(guard&& o) noexcept : m_mutex(std::exchange(o.m_mutex, nullptr)) {}
    guard& operator=(guard&& o) noexcept {
      if (this != &o) {
        unlock();
        m_mutex = std::exchange(o.m_mutex, nullptr);
      }
      return *this;
    }
    ~guard() { unlock(); }
    /// Releases the lock early (idempotent). Any thread.
    void unlock() noexcept {
      if (m_mutex != nullptr)
        std::exchange(m_mutex, nullptr)->unlock();
    }
    /// True while this guard holds the lock.
    bool owns_lock() const noexcept { return m_mutex != nullptr; }
    explicit operator bool() const noexcept { return owns_lock(); }

   private:
    friend class mutex;
    friend struct detail::mutex_awaiter;
    explicit guard(mutex* m) noexcept : m_mutex(m) {}
    mutex* m_mutex = nullptr;
  };

  mutex() noexcept = default;
  mutex(const mutex&) = delete;
  mutex& operator=(const mutex&) = delete;

  /// `co_await m.lock()` takes the lock, suspending while another holder has it; waiters
  /// get it in the order they began waiting. Returns the guard, or
  /// std::errc::operation_canceled if the task's stop token stopped the wait before the
  /// lock was handed over (then nothing is held). Await from a saturn task, directly.
  [[nodiscard]] detail::mutex_awaiter lock() noexcept { return detail::mutex_awaiter(this); }
  /// Takes the lock if it is free and nobody waits for it; never waits. Any thread.
  std::optional<guard> try_lock() noexcept;
  /// Releases the lock: the oldest waiter (if any) becomes the holder and is woken.
  /// Normally called by the guard; call it directly only to release a lock whose guard was
  /// given up. Any thread.
  void unlock() noexcept;
  /// True while some holder has the lock (a snapshot). Any thread.
  bool is_locked() const noexcept;

 private:
  friend struct detail::mutex_awaiter;
  mutable detail::spin_lock m_lock;
  bool m_locked = false;  ///< guarded by m_lock
  detail::waiter_list m_waiters{m_lock};
};

inline auto detail::mutex_awaiter::await_resume() noexcept {
  unpark();
  if (m_outcome != wait_outcome::ok)
    return result<mutex::guard>(to_result("mutex::lock").err());
  return result<mutex::guard>(mutex::guard(m_mutex));
}

}  // namespace saturn
