// The pool's global injection queue: tasks submitted from threads that are not workers
// (and a worker's overflow). An intrusive FIFO under a mutex, as Tokio's inject queue:
// pushes from outside are comparatively rare and batched on the consumer side (a worker
// takes up to a batch at once into its own deque), and a relaxed length read lets workers
// skip the lock when it is empty.
#pragma once

#include <saturn/loop/runnable.hpp>

#include <pthread.h>

#include <saturn/detail/atomic.hpp>
#include <cstddef>
#include <mutex>

namespace saturn::sched {

/// glibc's adaptive mutex (PTHREAD_MUTEX_ADAPTIVE_NP): on contention it spins a while
/// before it sleeps in the kernel. The injection queue's critical sections are a few list
/// operations, so a contended std::mutex (which sleeps at once) paid a futex wait and a
/// futex wake per collision: 13% of spawn_join_1m's time, with a spawning worker spilling
/// while the other takes batches.
class adaptive_mutex {
 public:
  adaptive_mutex() noexcept {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&m_mutex, &attr);
    pthread_mutexattr_destroy(&attr);
  }
  adaptive_mutex(const adaptive_mutex&) = delete;
  adaptive_mutex& operator=(const adaptive_mutex&) = delete;
  ~adaptive_mutex() { pthread_mutex_destroy(&m_mutex); }
  void lock() noexcept { pthread_mutex_lock(&m_mutex); }
  void unlock() noexcept { pthread_mutex_unlock(&m_mutex); }

 private:
  pthread_mutex_t m_mutex;
};

/// Threading: any thread.
class injection_queue {
 public:
  void push(runnable* r) noexcept {
    r->m_next_runnable = nullptr;
    std::lock_guard lock(m_mutex);
    if (m_tail != nullptr)
      m_tail->m_next_runnable = r;
    else
      m_head = r;
    m_tail = r;
    // ordering: relaxed counter; the mutex publishes the node, the counter is a hint.
    m_len.store(m_len.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  /// Pushes a linked list [first..last] of n runnables.
  void push_list(runnable* first, runnable* last, std::size_t n) noexcept {
    last->m_next_runnable = nullptr;
    std::lock_guard lock(m_mutex);
    if (m_tail != nullptr)
      m_tail->m_next_runnable = first;
    else
      m_head = first;
    m_tail = last;
    m_len.store(m_len.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  bool empty_hint() const noexcept { return m_len.load(std::memory_order_relaxed) == 0; }
  std::size_t size_hint() const noexcept { return m_len.load(std::memory_order_relaxed); }

  /// Takes up to `max` runnables (oldest first) as a list; returns the count.
  std::size_t pop_batch(std::size_t max, runnable** out_first) noexcept {
    if (empty_hint())
      return 0;
    std::lock_guard lock(m_mutex);
    runnable* first = m_head;
    std::size_t n = 0;
    runnable* last = nullptr;
    for (runnable* r = m_head; r != nullptr && n < max; r = r->m_next_runnable) {
      last = r;
      ++n;
    }
    if (n == 0)
      return 0;
    m_head = last->m_next_runnable;
    if (m_head == nullptr)
      m_tail = nullptr;
    last->m_next_runnable = nullptr;
    m_len.store(m_len.load(std::memory_order_relaxed) - n, std::memory_order_relaxed);
    *out_first = first;
    return n;
  }

 private:
  adaptive_mutex m_mutex;
  runnable* m_head = nullptr;
  runnable* m_tail = nullptr;
  saturn::detail::atomic<std::size_t> m_len{0};
};

}  // namespace saturn::sched
