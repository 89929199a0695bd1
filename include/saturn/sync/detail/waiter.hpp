/// \file
/// How a task parks on a sync primitive and is woken — from any thread, without allocating.
/// This is the wait whose node lives in the awaiter: channel, oneshot, mutex, semaphore and
/// wait_group. event and latch use the smaller task_wait, whose node is in the promise
/// (saturn/sync/detail/task_wait.hpp); a channel could not: it finds the waiting
/// awaiter's value slot through the node.
///
/// Protocol. A `waiter` lives in the awaiter, so in the waiting task's frame.
///   1. await_suspend, under the primitive's lock: complete at once if possible (the fast
///      path), else `link()` the waiter into one of the primitive's `waiter_list`s. Then,
///      with the lock released, `park()` registers the stop callback and moves `m_state`
///      arming ──▶ parked.
///   2. Exactly one party unlinks a waiter: a signaller (set, unlock, release, send,
///      close...) or the stop callback. It does so under the lock, writes `m_outcome` (and
///      any value the waiter receives), releases the lock, then `notify()`s: `m_state`
///      ──▶ notified. If the old state was `parked` it wakes the task (promise->wake(), any
///      thread); if still `arming`, park() sees `notified` and returns false, so the task
///      goes on without suspending. Either way the task continues exactly once, and the
///      notifier touches nothing of the waiter after the exchange.
///   3. await_resume: `unpark()` drops the stop callback (std::stop_callback's destructor
///      waits for a callback running on another thread to return), then the outcome is read.
/// A wait that can complete at once completes even if a stop was requested; a wait that
/// would suspend under a stopped token ends at once with operation_canceled.
///
/// Lifetime: a primitive must outlive the awaits on it — destroy it only once every task
/// that awaited it has resumed (set() may return before a woken task has run: join that
/// task first). To keep runtime shutdown safe in either order, a frame destroyed while it
/// waits unlinks its waiter (~waiter), and a primitive destroyed while tasks still wait
/// on it (a bug) detaches them: they stay suspended until their runtime destroys them.
#pragma once

#include <saturn/task/frame_allocator.hpp>

#include <saturn/detail/atomic.hpp>
#include <saturn/result.hpp>
#include <saturn/sync/detail/spin_lock.hpp>
#include <saturn/sync/wait_result.hpp>
#include <saturn/task/detail/promise_base.hpp>

#include <cstdint>
#include <optional>
#include <stop_token>
#include <utility>

namespace saturn::detail {

/// How a wait ended; written by whoever unlinked the waiter.
enum class wait_outcome : std::uint8_t {
  pending,   ///< still waiting (or never waited)
  ok,        ///< the awaited condition holds / the value was transferred
  canceled,  ///< the task's stop token stopped the wait
  closed,    ///< the primitive was closed (channel) or its peer dropped (oneshot)
};

class waiter_list;

/// One task parked on a sync primitive. Embedded (as a base) in every sync awaiter.
///
/// Threading: the link fields and m_outcome are guarded by the owning list's lock while
/// linked; after notify() they belong to the waiting task again. Single use, not movable.
class waiter {
 public:
  waiter() noexcept = default;
  waiter(const waiter&) = delete;
  waiter& operator=(const waiter&) = delete;
  /// Unlinks a waiter whose frame is destroyed while it still waits.
  ~waiter();

  /// Under `list`'s lock: links this waiter for task `p`, or, when p's stop token has a
  /// stop request, sets the outcome to canceled and returns false (do not park).
  bool link(waiter_list& list, promise_base* p) noexcept;
  /// Without the lock, after link(): arms cancellation and publishes the suspension.
  /// Returns await_suspend's answer (false: already notified, continue at once).
  bool park() noexcept;
  /// In await_resume: drops the stop callback. The outcome is final afterwards.
  void unpark() noexcept;
  /// The outcome as a result: ok, or operation_canceled / broken_pipe named `op` /
  /// `closed_op`.
  result<void> to_result(const char* op, const char* closed_op = "closed") const noexcept;
  /// The outcome as a one-byte wait_result of `op` (the sync waits that return no value).
  wait_result to_wait_result(wait_op op) const noexcept {
    switch (m_outcome) {
      case wait_outcome::canceled: return wait_result::canceled(op);
      case wait_outcome::closed: return wait_result::closed(op);
      default: return {};
    }
  }

  /// The waiting task (set by link(); read by whoever notifies).
  promise_base* promise() const noexcept;

  waiter* m_next = nullptr;  ///< list link (guarded by the list's lock)
  waiter* m_prev = nullptr;  ///< list link (guarded by the list's lock)
  /// The list it was linked into; null when never linked or done.
  waiter_list* m_list = nullptr;
  bool m_linked = false;          ///< guarded by m_list's lock
  wait_outcome m_outcome = wait_outcome::pending;

 private:
  friend void notify(waiter* w) noexcept;
  enum : std::uint8_t { arming, parked, notified };
  struct stop_fn {
    waiter* self;
    void operator()() const noexcept { self->cancel(); }
  };
  void cancel() noexcept;
  /// std::stop_callback is large: boxed (frame allocator) only when the waiting task can
  /// be cancelled, so an uncancellable wait stays small. The box also takes over the
  /// promise pointer, so the waiter keeps one word for both
  /// (docs/decisions/task-frame-size.md).
  struct callback_box {
    promise_base* promise;
    std::stop_callback<stop_fn> cb;
    static void* operator new(std::size_t n) { return frame_allocate(n); }
    static void operator delete(void* p, std::size_t n) noexcept { frame_deallocate(p, n); }
  };
  static constexpr std::uintptr_t boxed = 1;  ///< tag bit of m_promise_or_box
  callback_box* box() const noexcept;
  void drop_box() noexcept;

  atomic<std::uint8_t> m_state{arming};
  /// The promise_base* the task waits in, or, once park() armed cancellation, the
  /// callback_box* | `boxed` that holds it. Written only by the waiting task (link, park,
  /// unpark); read by a notifier on any thread, hence atomic.
  atomic<std::uintptr_t> m_promise_or_box{0};
};

inline waiter::callback_box* waiter::box() const noexcept {
  // ordering: acquire pairs with park()'s release: the box's promise field is visible.
  const std::uintptr_t v = m_promise_or_box.load(std::memory_order_acquire);
  return (v & boxed) != 0 ? reinterpret_cast<callback_box*>(v & ~boxed) : nullptr;
}

inline promise_base* waiter::promise() const noexcept {
  // ordering: acquire pairs with park()'s release (see box()).
  const std::uintptr_t v = m_promise_or_box.load(std::memory_order_acquire);
  if ((v & boxed) != 0)
    return reinterpret_cast<callback_box*>(v & ~boxed)->promise;
  return reinterpret_cast<promise_base*>(v);
}

/// Completes a waiter that was unlinked (outcome written) under the lock. Call after the
/// lock is released; do not touch `w` afterwards. Any thread.
void notify(waiter* w) noexcept;

/// Waiters to notify once the lock is released, in FIFO order. Its destructor notifies
/// them, so declare it before the std::lock_guard: the lock is released first, and no
/// waiter is forgotten even if the critical section throws.
class wake_list {
 public:
  wake_list() noexcept = default;
  wake_list(const wake_list&) = delete;
  wake_list& operator=(const wake_list&) = delete;
  ~wake_list() { notify_all(); }

  void push(waiter* w) noexcept {
    w->m_next = nullptr;
    if (m_tail != nullptr)
      m_tail->m_next = w;
    else
      m_head = w;
    m_tail = w;
  }
  /// Notifies every waiter pushed so far, oldest first.
  void notify_all() noexcept {
    waiter* w = std::exchange(m_head, nullptr);
    m_tail = nullptr;
    while (w != nullptr) {
      waiter* next = w->m_next;  // lifetime: read before notify, which may free w's frame
      notify(w);
      w = next;
    }
  }

 private:
  waiter* m_head = nullptr;
  waiter* m_tail = nullptr;
};

/// An intrusive FIFO of waiters, guarded by its primitive's spin_lock.
///
/// Threading: every member except the destructor must be called with lock() held. The
/// destructor (the primitive going away) detaches any waiter still linked.
class waiter_list {
 public:
  explicit waiter_list(spin_lock& lock) noexcept : m_lock(&lock) {}
  waiter_list(const waiter_list&) = delete;
  waiter_list& operator=(const waiter_list&) = delete;
  ~waiter_list();

  spin_lock& lock() const noexcept { return *m_lock; }
  bool empty() const noexcept { return m_head == nullptr; }
  waiter* front() const noexcept { return m_head; }

  void push_back(waiter* w) noexcept {
    w->m_next = nullptr;
    w->m_prev = m_tail;
    if (m_tail != nullptr)
      m_tail->m_next = w;
    else
      m_head = w;
    m_tail = w;
    w->m_list = this;
    w->m_linked = true;
  }
  void erase(waiter* w) noexcept {
    (w->m_prev != nullptr ? w->m_prev->m_next : m_head) = w->m_next;
    (w->m_next != nullptr ? w->m_next->m_prev : m_tail) = w->m_prev;
    w->m_next = w->m_prev = nullptr;
    w->m_linked = false;
  }
  /// Unlinks the oldest waiter (the list must not be empty).
  waiter* pop_front() noexcept {
    waiter* w = m_head;
    erase(w);
    return w;
  }
  /// Unlinks the oldest waiter, gives it `outcome` and queues it on `out`.
  waiter* pop_front_into(wake_list& out, wait_outcome outcome) noexcept {
    waiter* w = pop_front();
    w->m_outcome = outcome;
    out.push(w);
    return w;
  }
  /// Unlinks every waiter, gives each `outcome` and queues it on `out` (FIFO).
  void pop_all_into(wake_list& out, wait_outcome outcome) noexcept {
    while (!empty())
      pop_front_into(out, outcome);
  }

 private:
  spin_lock* m_lock;
  waiter* m_head = nullptr;
  waiter* m_tail = nullptr;
};

}  // namespace saturn::detail
