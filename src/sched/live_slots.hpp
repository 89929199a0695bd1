// live_slots: the spawned tasks alive on one worker (scheduler::track / untrack), so a
// pool destroyed while tasks are suspended can destroy them (no leak).
//
// Why not a vector under a lock (the first version): every spawned task is tracked on its
// first run and untracked at its end, so the lock was two atomic RMWs per task, about 12%
// of spawn_join_1m. Here a slot never moves once given to a task, so its index (kept in
// the promise) stays valid for the task's life and any thread can clear it with a plain
// store. Only the owning worker hands out slots:
//   track (owner):   pop a free index (or take the next unused one), store the task.
//   untrack (owner): clear the slot, push its index on the free list.
//   untrack (other): clear the slot and count it; the owner finds such slots by a sweep
//                    when its free list runs dry and enough remote clears piled up.
// Slots live in fixed chunks of 4,096 that are never moved or freed before the pool is
// destroyed, so a remote clear never races a reallocation. A task's slot index reaches
// the thread that untracks it through whatever handed the task over (a deque, a wake),
// which also orders the chunk pointer's write before that thread's read.
//
// Beside each task a slot keeps what a task dump shows (saturn/sched/task_dump.hpp): the
// spawn site and when the task started (the worker's coarse clock). They are plain
// relaxed stores by the owner on track; a dump reads them with the slot from another
// thread (for_each_recorded), which is why the chunk count and m_next are atomics.
#pragma once

#include <saturn/detail/atomic.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace saturn::detail {

struct promise_base;

/// Threading: track() and the owner's untrack_local() on the owning worker's thread only;
/// untrack_remote() from any thread; for_each_alive() only while no other thread uses the
/// table (pool shutdown); for_each_recorded() from any thread.
class live_slots {
 public:
  static constexpr std::uint32_t k_chunk_bits = 12;
  static constexpr std::uint32_t k_chunk = 1u << k_chunk_bits;
  /// Slot indices fit in 24 bits (the promise's m_live_index keeps the worker above).
  static constexpr std::uint32_t k_max_slots = 1u << 24;

  live_slots() : m_chunks(std::make_unique<chunk*[]>(k_max_slots / k_chunk)) {}
  live_slots(const live_slots&) = delete;
  live_slots& operator=(const live_slots&) = delete;
  ~live_slots() {
    for (std::uint32_t c = 0; c < m_used_chunks.load(std::memory_order_relaxed); ++c)
      delete m_chunks[c];
  }

  /// Records `p`, spawned at `site` (an opaque word: a std::source_location's bits, 0 if
  /// unknown) and started at `born_ns`; returns its slot, or k_max_slots when the table is
  /// full (16 M tasks alive on one worker: the caller falls back to its locked table).
  std::uint32_t track(promise_base* p, std::uintptr_t site = 0, std::int64_t born_ns = 0) {
    std::uint32_t i;
    if (!m_free.empty() || sweep()) {
      i = m_free.back();
      m_free.pop_back();
    } else {
      const std::uint32_t next = m_next.load(std::memory_order_relaxed);
      if (next == k_max_slots)
        return k_max_slots;
      const std::uint32_t used = m_used_chunks.load(std::memory_order_relaxed);
      if ((next >> k_chunk_bits) == used) {
        m_chunks[used] = new chunk{};
        // ordering: release publishes the chunk to for_each_recorded's acquire load.
        m_used_chunks.store(used + 1, std::memory_order_release);
      }
      i = next;
      // ordering: release; for_each_recorded reads slots below m_next (acquire) only.
      m_next.store(next + 1, std::memory_order_release);
    }
    chunk& c = *m_chunks[i >> k_chunk_bits];
    const std::uint32_t j = i & (k_chunk - 1);
    // ordering: relaxed; a dump may see a stale site next to a new task (it is a hint).
    c.sites[j].store(site, std::memory_order_relaxed);
    c.born[j].store(born_ns, std::memory_order_relaxed);
    // ordering: release so a dump that sees the task sees its site; a remote clear of
    // this slot happens after the task is handed over, which publishes this store too.
    // (On x86-64 a release store is a plain mov.)
    c.slots[j].store(p, std::memory_order_release);
    return i;
  }
  /// Forgets the task in slot `i`, on the owning thread.
  void untrack_local(std::uint32_t i) {
    // ordering: relaxed; only for_each_alive (shutdown, quiescent) and sweep (this thread) read it.
    slot(i).store(nullptr, std::memory_order_relaxed);
    m_free.push_back(i);
  }
  /// Forgets the task in slot `i`, from another thread.
  void untrack_remote(std::uint32_t i) noexcept {
    // ordering: release pairs with sweep's acquire load: this thread is done with the slot
    // before the owner hands it out again.
    slot(i).store(nullptr, std::memory_order_release);
    // ordering: relaxed; a hint for when to sweep.
    m_remote_clears.fetch_add(1, std::memory_order_relaxed);
  }
  /// Calls f(promise_base*) for every task still recorded. f may untrack any task.
  template <class F>
  void for_each_alive(F&& f) {
    for (std::uint32_t i = 0, n = m_next.load(std::memory_order_relaxed); i < n; ++i)
      // ordering: relaxed; quiescent (pool shutdown).
      if (promise_base* p = slot(i).load(std::memory_order_relaxed))
        f(p);
  }
  /// Calls f(slot, promise_base*, site, born_ns) for the tasks recorded in slots
  /// [from, from + max) and returns the index after the last slot looked at (the end of
  /// the table when it is reached). Any thread: it only reads the slots; the promise
  /// pointer may name a task that ends (or a frame freed) meanwhile unless the caller
  /// keeps the pool's workers still (see src/sched/task_dump.cpp).
  template <class F>
  std::uint32_t for_each_recorded(std::uint32_t from, std::uint32_t max, F&& f) const {
    // ordering: acquire pairs with track's release: the chunks below it exist.
    const std::uint32_t n = m_next.load(std::memory_order_acquire);
    std::uint32_t i = from;
    for (; i < n && i - from < max; ++i) {
      const chunk& c = *m_chunks[i >> k_chunk_bits];
      const std::uint32_t j = i & (k_chunk - 1);
      // ordering: acquire pairs with track's release of the slot (its site and birth).
      if (promise_base* p = c.slots[j].load(std::memory_order_acquire))
        f(i, p, c.sites[j].load(std::memory_order_relaxed), c.born[j].load(std::memory_order_relaxed));
    }
    return i;
  }
  /// Slots handed out so far (the end of the table for for_each_recorded). Any thread.
  std::uint32_t size() const noexcept { return m_next.load(std::memory_order_acquire); }

 private:
  struct chunk {
    atomic<promise_base*> slots[k_chunk]{};
    atomic<std::uintptr_t> sites[k_chunk]{};
    atomic<std::int64_t> born[k_chunk]{};
  };
  atomic<promise_base*>& slot(std::uint32_t i) noexcept { return m_chunks[i >> k_chunk_bits]->slots[i & (k_chunk - 1)]; }

  /// Refills the free list with slots other threads cleared, when that pays: at least 64
  /// and an eighth of the slots in use, so sweeping costs O(1) per slot recovered.
  bool sweep() {
    // ordering: relaxed; a hint (the acquire loads below are what order the reuse).
    const std::uint32_t cleared = m_remote_clears.load(std::memory_order_relaxed);
    const std::uint32_t next = m_next.load(std::memory_order_relaxed);
    if (cleared < 64 || cleared < next / 8)
      return false;
    std::uint32_t found = 0;
    for (std::uint32_t i = 0; i < next; ++i) {
      // ordering: acquire pairs with untrack_remote's release.
      if (slot(i).load(std::memory_order_acquire) == nullptr) {
        m_free.push_back(i);
        ++found;
      }
    }
    // Owner-cleared slots were on the free list already (it was empty): every null slot
    // found is a remote clear, counted once.
    m_remote_clears.fetch_sub(found, std::memory_order_relaxed);
    return !m_free.empty();
  }

  std::unique_ptr<chunk*[]> m_chunks;  ///< written by the owner only; see the file comment
  atomic<std::uint32_t> m_used_chunks{0};  ///< written by the owner only
  atomic<std::uint32_t> m_next{0};         ///< written by the owner only: slots [0, m_next) were handed out
  std::vector<std::uint32_t> m_free;   ///< owner only: cleared slots to reuse
  alignas(cache_line) atomic<std::uint32_t> m_remote_clears{0};
};

}  // namespace saturn::detail
