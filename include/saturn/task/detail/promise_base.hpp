/// \file
/// What every saturn coroutine promise has: the run-queue node (so waking a task allocates
/// nothing), the continuation, the task context, and the join state of spawned tasks.
#pragma once

#include <saturn/detail/atomic.hpp>
#include <saturn/loop/runnable.hpp>
#include <saturn/task/frame_allocator.hpp>
#include <saturn/task/scheduler.hpp>

#include <atomic>
#include <coroutine>
#include <cstdint>
#include <exception>
#include <vector>

namespace saturn::detail {

/// Join-state bits of a spawned task (promise_base::m_join).
enum : std::uint32_t {
  join_spawned = 1u << 0,   ///< started by spawn(): ends at final_suspend, not by its awaiter
  join_complete = 1u << 1,  ///< the body has finished; the result is stored
  join_waiting = 1u << 2,   ///< a join_handle awaits it (m_continuation is the joiner)
  join_detached = 1u << 3,  ///< no join_handle any more: the task frees itself when done
  join_failed = 1u << 4,    ///< the task ended with an exception (any task, spawned or not)
  join_sited = 1u << 5,     ///< until its first run, m_outcome_space holds the spawn site (spawn_site_stash)
  /// The joiner runs on another scheduler than the task: m_continuation holds the
  /// joiner's promise_base (not a resumable handle), and the finishing task queues it on
  /// the joiner's own scheduler instead of resuming it on this thread.
  join_foreign = 1u << 6,
};

/// Bits of a wait on a primitive whose wait node lives in the promise (a task_wait, see
/// saturn/sync/detail/task_wait.hpp). They share promise_base::m_join (one atomic word,
/// every writer an RMW) because the wait protocol needs one atomic word and a separate
/// one would grow every frame (docs/decisions/task-frame-size.md).
enum : std::uint32_t {
  wait_parked = 1u << 8,     ///< the task suspended in the wait (its own RMW, after linking)
  wait_notified = 1u << 9,   ///< whoever unlinked it is done with it (notifier's RMW)
  wait_boxed = 1u << 10,     ///< m_wait.list_or_box is a stop-callback box, not the list
  wait_canceled = 1u << 11,  ///< outcome: the stop token ended the wait (else: ok)
  wait_bits = wait_parked | wait_notified | wait_boxed | wait_canceled,
};

struct promise_base;
/// Ends a task_wait left in place when its frame is destroyed or its task abandoned
/// (unlinks it, frees its stop-callback box). src/sync/task_wait.cpp.
void leave_task_wait(promise_base* p) noexcept;

/// Base of every saturn promise. 56 bytes.
///
/// Threading: a task runs on one thread at a time. m_join is the only field touched by two
/// threads at once (the finishing task and its join_handle; a task_wait's notifier) and is
/// atomic.
struct promise_base : runnable {
  promise_base() noexcept {}
  promise_base(const promise_base&) = delete;
  promise_base& operator=(const promise_base&) = delete;
  ~promise_base() { leave_wait(); }  // a frame destroyed while it waits (a runtime shutting down)

  std::coroutine_handle<> m_continuation{};
  task_context* m_ctx = nullptr;
  saturn::detail::atomic<std::uint32_t> m_join{0};
  std::uint32_t m_live_index = ~std::uint32_t{0};  ///< slot in the runtime's live-task table

  /// The node of a task_wait (the task waits on one primitive at a time): `prev` and the
  /// list (or the stop-callback box that knows it); `next` is m_next_runnable, free while
  /// the task waits. A task never waits after it stored its outcome, so the outcome (the
  /// exception, and a small trivially destructible value: promise_result) reuses these 16
  /// bytes — as Tokio's task cell keeps its future and its output in one union.
  struct wait_node {
    promise_base* prev;
    std::uintptr_t list_or_box;
  };
  union {
    wait_node m_wait;
    alignas(8) unsigned char m_outcome_space[16];
  };

  /// The exception slot in the outcome space (holds an exception only once has_failed()).
  std::exception_ptr* exception_slot() noexcept { return reinterpret_cast<std::exception_ptr*>(m_outcome_space); }
  const std::exception_ptr* exception_slot() const noexcept {
    return reinterpret_cast<const std::exception_ptr*>(m_outcome_space);
  }
  /// Ends a wait left in place: before storing an outcome on a task that may still wait
  /// (a runtime abandoning it), and when its frame is destroyed.
  void leave_wait() noexcept {
    // ordering: relaxed; the task is not running, and whoever handed it to this thread
    // ordered its bits (leave_task_wait reloads them with acquire).
    if (m_join.load(std::memory_order_relaxed) & wait_bits) [[unlikely]]
      leave_task_wait(this);
  }

  static void* operator new(std::size_t n) { return frame_allocate(n); }
  static void operator delete(void* p, std::size_t n) noexcept { frame_deallocate(p, n); }

  scheduler* sched() const noexcept { return m_ctx->sched; }
  const std::stop_token& token() const noexcept { return m_ctx->token; }

  /// True once the task ended with an exception. Read it after the task's end was handed
  /// over (its continuation runs, or its join state says complete).
  bool has_failed() const noexcept {
    // ordering: relaxed; the completion hand-off orders it.
    return (m_join.load(std::memory_order_relaxed) & join_failed) != 0;
  }
  /// The spawn site of a task not yet started, kept in the outcome space (unused before
  /// the first run) so recording it grows no frame; the scheduler moves it into its
  /// live-task table on the first run (track). The site is a std::source_location's bits.
  void stash_spawn_site(std::uintptr_t site) noexcept {
    *reinterpret_cast<std::uintptr_t*>(m_outcome_space) = site;
  }
  /// The stashed spawn site, or 0 when none was stashed. Only before the first run ends.
  std::uintptr_t stashed_spawn_site() const noexcept {
    // ordering: relaxed; the bit was set before the task was handed to this thread.
    if ((m_join.load(std::memory_order_relaxed) & join_sited) == 0)
      return 0;
    return *reinterpret_cast<const std::uintptr_t*>(m_outcome_space);
  }
  /// Makes the task runnable again (it must be suspended). Any thread.
  void wake() noexcept { m_ctx->sched->schedule(this); }
  /// Records / forgets this spawned task as alive (its first run / its end).
  inline void track();
  inline void untrack() noexcept;
};

/// The spawned tasks of a scheduler that are alive (started, not finished), so a runtime
/// destroyed while they are suspended can destroy them: no leak. A vector with the slot
/// index kept in the promise: add and remove are O(1) and inline.
///
/// Threading: single-threaded (the owning scheduler's thread), but for size_hint().
class live_table {
 public:
  static constexpr std::uint32_t npos = ~std::uint32_t{0};
  void add(promise_base* p) {
    p->m_live_index = static_cast<std::uint32_t>(m_items.size());
    m_items.push_back(p);
    // ordering: relaxed; a count for metrics readers, nothing is published through it.
    m_size.store(m_items.size(), std::memory_order_relaxed);
  }
  void remove(promise_base* p) noexcept {
    const std::uint32_t i = p->m_live_index;
    if (i == npos)
      return;
    promise_base* last = m_items.back();
    m_items[i] = last;
    last->m_live_index = i;
    m_items.pop_back();
    m_size.store(m_items.size(), std::memory_order_relaxed);
    p->m_live_index = npos;
  }
  bool empty() const noexcept { return m_items.empty(); }
  std::size_t size() const noexcept { return m_items.size(); }
  /// size() for any thread (a metrics reader): may lag by the adds and removes in flight.
  std::size_t size_hint() const noexcept { return m_size.load(std::memory_order_relaxed); }
  promise_base* back() const noexcept { return m_items.back(); }
  /// The task in slot `i` (< size()); slots move when a task before the last ends.
  promise_base* at(std::size_t i) const noexcept { return m_items[i]; }

 private:
  std::vector<promise_base*> m_items;
  saturn::detail::atomic<std::size_t> m_size{0};  // written by the owner only (a plain store)
};

inline void promise_base::track() {
  if (m_ctx->live != nullptr)
    m_ctx->live->add(this);
  else
    m_ctx->sched->track(this);
}

inline void promise_base::untrack() noexcept {
  if (m_ctx->live != nullptr)
    m_ctx->live->remove(this);
  else
    m_ctx->sched->untrack(this);
}

/// Resumes the coroutine whose promise type is P from the run queue.
template <class P>
void resume_from_queue(runnable* r, run_mode mode) noexcept {
  if (mode == run_mode::run)
    std::coroutine_handle<P>::from_promise(*static_cast<P*>(r)).resume();
}

template <class P>
concept saturn_promise = std::is_base_of_v<promise_base, P>;

}  // namespace saturn::detail
