/// \file
/// A wait whose node lives in the waiting task's promise, not in its awaiter: for the
/// primitives that hand the waiter nothing but an outcome (event, and latch through its
/// event). Their awaitable is the primitive itself and keeps no state, so a frame waiting
/// on an event holds nothing for the wait, a smaller frame than with the awaiter-embedded
/// waiter (saturn/sync/detail/waiter.hpp; figures in docs/decisions/task-frame-size.md).
///
/// The node: promise_base::m_wait (`prev`, and the list or the stop-callback box), with
/// `next` being m_next_runnable (a waiting task is in no run queue), and the wait_* bits of
/// promise_base::m_join as the atomic state.
///
/// Protocol.
///   1. await_suspend, under the primitive's lock: complete at once if possible; end
///      canceled if the task's stop token was stopped; else push_back into a
///      task_wait_list. Then, with the lock released, task_wait_park(): box the stop
///      callback if the token can stop, and set wait_parked (one RMW). If wait_notified
///      was set first, the task goes on without suspending.
///   2. Exactly one party unlinks the task, under the lock: a signaller, or the stop
///      callback. With the lock released it calls task_wait_notify(): one RMW sets
///      wait_notified and the outcome, and wakes the task if wait_parked was set. It
///      touches nothing of the task afterwards.
///   3. await_resume: the awaiter has no state, so the task is found in t_running: a
///      woken task is resumed through its runnable, and await_suspend sets it before it
///      returns false. task_wait_finish() frees the box, clears the bits, gives the outcome.
/// Lifetime: as for waiter: the primitive must outlive the waits on it. A frame destroyed
/// while it waits, or a task abandoned, unlinks itself (leave_task_wait); a primitive
/// destroyed while tasks wait on it (a bug) detaches them.
#pragma once

#include <saturn/loop/runnable.hpp>
#include <saturn/sync/detail/spin_lock.hpp>
#include <saturn/task/detail/promise_base.hpp>
#include <saturn/task/frame_allocator.hpp>

#include <cassert>
#include <cstdint>
#include <stop_token>

namespace saturn::detail {

class task_wait_list;

/// The stop callback of a task_wait whose token can stop, boxed so that an uncancellable
/// wait costs no frame bytes for it (std::stop_callback is ~88 bytes). While it exists it
/// holds the list (m_wait.list_or_box holds the box, wait_boxed says so).
struct task_wait_box {
  struct stop_fn {
    task_wait_box* self;
    void operator()() const noexcept;
  };
  promise_base* promise;
  task_wait_list* list;  ///< nulled if the primitive is destroyed first
  std::stop_callback<stop_fn> cb;  // lifetime: last, so `promise` and `list` are set when it may run

  task_wait_box(promise_base* p, task_wait_list* l, const std::stop_token& t) noexcept
      : promise(p), list(l), cb(t, stop_fn{this}) {}
  static void* operator new(std::size_t n) { return frame_allocate(n); }
  static void operator delete(void* p, std::size_t n) noexcept { frame_deallocate(p, n); }
};

inline task_wait_box* wait_box(const promise_base* p) noexcept {
  return reinterpret_cast<task_wait_box*>(p->m_wait.list_or_box);
}

/// Completes the wait of a task that was unlinked (under the lock) with `outcome` (0 or
/// wait_canceled). Call after the lock is released; touches nothing of `p` afterwards
/// unless it wakes it. Any thread.
inline void task_wait_notify(promise_base* p, std::uint32_t outcome) noexcept {
  // ordering: acq_rel: release publishes what was done under the lock (and the outcome) to
  // the task; acquire sees its park() before we hand it to a scheduler.
  if (p->m_join.fetch_or(wait_notified | outcome, std::memory_order_acq_rel) & wait_parked)
    p->wake();  // lifetime: a parked task stays suspended until this wake
}

/// Tasks unlinked under a lock, notified (ok) once it is released: declare it before the
/// std::lock_guard. Chained through m_next_runnable, oldest first.
class task_wake_list {
 public:
  task_wake_list() noexcept = default;
  task_wake_list(const task_wake_list&) = delete;
  task_wake_list& operator=(const task_wake_list&) = delete;
  ~task_wake_list() {
    promise_base* p = m_head;
    while (p != nullptr) {
      auto* next = static_cast<promise_base*>(p->m_next_runnable);  // lifetime: read before the wake reuses it
      task_wait_notify(p, 0);
      p = next;
    }
  }

 private:
  friend class task_wait_list;
  promise_base* m_head = nullptr;
};

/// The FIFO of tasks waiting on one primitive, guarded by the primitive's spin_lock.
///
/// Threading: every member but the destructor with lock() held. The destructor (the
/// primitive going away) detaches any task still linked.
class task_wait_list {
 public:
  explicit task_wait_list(spin_lock& lock) noexcept : m_lock(&lock) {}
  task_wait_list(const task_wait_list&) = delete;
  task_wait_list& operator=(const task_wait_list&) = delete;
  ~task_wait_list();

  spin_lock& lock() const noexcept { return *m_lock; }
  bool empty() const noexcept { return m_head == nullptr; }

  /// m_wait.prev of a task in no list.
  static promise_base* unlinked() noexcept { return reinterpret_cast<promise_base*>(std::uintptr_t{1}); }
  /// Whether `p`, which began a wait on this list, is still in it.
  static bool linked(const promise_base* p) noexcept { return p->m_wait.prev != unlinked(); }

  void push_back(promise_base* p) noexcept {
    p->m_next_runnable = nullptr;
    p->m_wait.prev = m_tail;
    p->m_wait.list_or_box = reinterpret_cast<std::uintptr_t>(this);
    if (m_tail != nullptr)
      m_tail->m_next_runnable = p;
    else
      m_head = p;
    m_tail = p;
  }
  void erase(promise_base* p) noexcept {
    auto* next = static_cast<promise_base*>(p->m_next_runnable);
    promise_base* prev = p->m_wait.prev;
    if (prev != nullptr)
      prev->m_next_runnable = next;
    else
      m_head = next;
    if (next != nullptr)
      next->m_wait.prev = prev;
    else
      m_tail = prev;
    p->m_wait.prev = unlinked();
  }
  /// Unlinks every task onto `out` (empty), to be notified ok once the lock is released.
  /// O(n).
  void pop_all_into(task_wake_list& out) noexcept {
    assert(out.m_head == nullptr);
    if (m_head == nullptr)
      return;
    for (promise_base* p = m_head; p != nullptr; p = static_cast<promise_base*>(p->m_next_runnable))
      p->m_wait.prev = unlinked();
    out.m_head = m_head;  // the chain keeps its m_next_runnable links
    m_head = m_tail = nullptr;
  }

 private:
  spin_lock* m_lock;
  promise_base* m_head = nullptr;
  promise_base* m_tail = nullptr;
};

/// After push_back, with the lock released: arms cancellation and publishes the
/// suspension. Returns await_suspend's answer (false: notified already, go on at once;
/// the awaiter then sets t_running to `p`).
bool task_wait_park(promise_base* p, task_wait_list* list) noexcept;

/// In await_resume (and leave_task_wait): frees the stop-callback box and clears the wait
/// bits. Returns true when the wait ended canceled. The thread that owns the task.
inline bool task_wait_finish(promise_base* p) noexcept {
  // ordering: acquire pairs with task_wait_notify's release (the wake hand-off orders it
  // too, but the not-suspended path has only this).
  const std::uint32_t bits = p->m_join.load(std::memory_order_acquire);
  if ((bits & wait_bits) == 0) [[likely]]
    return false;  // completed at once, nothing recorded: ok
  if (bits & wait_boxed)
    delete wait_box(p);  // lifetime: waits for a stop callback running on another thread
  // ordering: relaxed; the bits are this task's own again (no notifier touches them).
  p->m_join.fetch_and(~std::uint32_t{wait_bits}, std::memory_order_relaxed);
  return (bits & wait_canceled) != 0;
}

/// The task a stateless awaiter's await_resume belongs to (see t_running), or null when
/// its await_ready completed it.
inline promise_base* resumed_task() noexcept { return static_cast<promise_base*>(t_running); }

}  // namespace saturn::detail
