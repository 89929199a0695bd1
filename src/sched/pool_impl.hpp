// Internals of thread_pool: the workers, the idle/search accounting, the queues.
//
// Finding work (a worker's loop, see worker.cpp):
//   1. every 61st task: the injection queue first (nothing outside starves) and, in io
//      mode, one non-blocking turn of the event loop (completions, timers, yields);
//   2. the LIFO slot (the task this worker spawned last; at most 3 in a row), then the
//      deque (newest first; every 31st pop takes the oldest instead, so nothing starves);
//   3. a batch from the injection queue, the registered submitters' queues, then half of
//      a random victim's deque (or its LIFO slot);
//   4. idle: search (steal attempts with PAUSE) for spin_before_park_us, then park.
//
// Waking (coalesced): new work calls notify_one(), which unparks a sleeper only when no
// worker is searching. A worker that stops searching because it found work, and was the
// last searcher, calls notify_one() again, so wake-ups chain instead of stampeding.
//
// Parking, lost-wake free: a worker adds itself to the sleeper list, re-checks every
// queue, and only then sleeps — in io mode inside its ring (event_loop::notify() is the
// unpark), in cpu_bound mode on a futex word. The unparker removes it from the list
// before notifying, so a parked worker is notified at most once per park.
#pragma once

#include <saturn/detail/atomic.hpp>
#include <saturn/detail/owned_counter.hpp>
#include <saturn/loop/detail/remote_queue.hpp>
#include <saturn/sched/thread_pool.hpp>
#include <saturn/sync/detail/spin_lock.hpp>
#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "sched/injection_queue.hpp"
#include "sched/live_slots.hpp"
#include "sched/work_deque.hpp"

namespace saturn::detail {

using task_deque = sched::work_deque<runnable, 256, 32>;
/// A registered submitter's queue is much deeper than a worker's: a submitter that
/// outpaces the workers (a flood from one thread) then queues in its own lock-free deque,
/// which workers steal from with a CAS, instead of spilling into the injection queue's
/// mutex, where a lock holder preempted on an oversubscribed machine (submitters plus
/// workers on too few CPUs) stalls every worker for a time slice (milliseconds).
/// 16,384 slots = 128 KiB per registered submitter.
using submit_deque = sched::work_deque<runnable, 16384, 32>;

/// Spawned tasks tracked from a thread that is not a worker of the pool, or past a
/// worker's live_slots capacity: rare, so a vector under a lock (swap-remove).
struct locked_live_table : spin_lock {
  std::vector<promise_base*> items;
};

struct pool_impl;

/// One worker thread.
struct worker {
  pool_impl* pool = nullptr;
  unsigned index = 0;
  task_deque deque;
  // ordering: the LIFO slot is taken with exchange by the owner and by thieves, so a task
  // in it is run exactly once.
  alignas(64) atomic<runnable*> lifo{nullptr};
  runnable_fifo yielded;  // owner only: tasks that yielded
  runnable_fifo pinned;   // owner only: woken by this worker's loop (pin_io_wakeups)
  /// Tasks other threads placed on this worker (thread_pool::start_on); the owner moves
  /// them to `pinned`, which no other worker steals from.
  remote_queue inbox;
  std::unique_ptr<event_loop> loop;  // io mode; created and destroyed on the worker thread
  atomic<event_loop*> loop_ptr{nullptr};
  bool searching = false;
  bool polling_io = false;       // owner only: dispatching its loop's wake-ups (poll_io, fire_timers)
  bool notify_deferred = false;  // owner only: a wake during poll_io skipped its notify
  /// Simulation only (sim_pool.hpp): where a stepped worker is in worker_main's idle path,
  /// each phase one step, so the seed can put another worker's steps between deciding to
  /// park and registering as a sleeper (the window the park/wake protocol must close).
  enum class sim_phase : std::uint8_t { busy, searching, parking, parked };
  sim_phase sim = sim_phase::busy;
  /// Unparks not yet taken over by this worker: each notify_one that popped it counted it
  /// in num_searching once. A count, not a flag: a worker can be popped again (after it
  /// re-registered) before it saw the first unpark, and two unparks merged into one flag
  /// leaked a searcher count, after which every notify bailed with all workers asleep.
  /// Also the futex a cpu_bound worker sleeps on (no separate wake word: a second word set
  /// after the count could be cleared in between, and a worker spun forever).
  alignas(64) atomic<std::uint32_t> unparks{0};
  std::uint32_t rng = 0;
  std::uint32_t tick = 0;
  unsigned lifo_streak = 0;
  std::int64_t spin_budget_ns = 0;  // owner only: io mode's adaptive idle spin (adapt_spin)
  std::int64_t spell_avg_ns = 0;    // owner only: running average of idle spells (adapt_spin)
  /// Owner only: CLOCK_MONOTONIC_COARSE as of the last look (every k_event_interval tasks
  /// and after a park): the start time a task dump shows, without a clock read per spawn.
  std::int64_t coarse_now_ns = 0;
  live_slots live;  // the spawned tasks alive that this worker started
  std::thread thread;
  /// Statistics (pool_stats.hpp): written by this worker only, with plain adds, on a
  /// line of their own so a collector's reads never share a line with a thief's CAS.
  struct counters_t {
    owned_counter tasks_run, steal_attempts, steals, parks, wakeups;
    /// Progress word of the stall detector (saturn/sched/stall.hpp): bumped before and
    /// after each run of a runnable and each non-blocking turn of the loop, so it is odd
    /// while the worker is inside one. `running` is the runnable being run (null in a
    /// loop turn). Plain stores by the owner; a watchdog reads them.
    progress_counter progress;
    atomic<runnable*> running{nullptr};
    /// Stalls reported on this worker (by stall detectors' watchdogs: an atomic add, rare).
    atomic<std::uint64_t> stalls{0};
    atomic<std::int64_t> started_ns{0};
    /// The worker thread's kernel thread id (0 until it runs): the stall detector reads
    /// its /proc schedstat to tell time waiting for a CPU from time running.
    atomic<int> os_tid{0};
    // The park time, read as one consistent pair (parked_ns, parked_since) under a
    // seqlock the worker bumps around each update (odd while writing), so a reader sees
    // the time parked so far including a park in progress, and busy time never runs
    // backwards between two reads.
    atomic<std::uint32_t> park_seq{0};
    atomic<std::int64_t> parked_ns{0};
    atomic<std::int64_t> parked_since{0};  // 0: not parked
    /// Owner only: runs `update` inside the seqlock's write section.
    template <class F>
    void park_update(F update) noexcept {
      const std::uint32_t s = park_seq.load(std::memory_order_relaxed);
      park_seq.store(s + 1, std::memory_order_relaxed);
      // ordering: release fence: a reader that sees the data written below also sees
      // the odd sequence (Boehm's seqlock with atomics).
      thread_fence(std::memory_order_release);
      update();
      park_seq.store(s + 2, std::memory_order_release);
    }
  };
  alignas(64) counters_t counters;

  runnable* pop_yielded() noexcept { return yielded.pop(); }
  void push_yielded(runnable* r) noexcept { yielded.push(r); }
  runnable* pop_pinned() noexcept {
    if (inbox.maybe_nonempty()) [[unlikely]]
      take_inbox();
    return pinned.pop();
  }
  void take_inbox() noexcept {
    for (runnable* r = inbox.take_all(); r != nullptr;) {
      runnable* next = r->m_next_runnable;
      pinned.push(r);
      r = next;
    }
  }
  void push_pinned(runnable* r) noexcept { pinned.push(r); }
  std::uint32_t next_random() noexcept {
    std::uint32_t x = rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return rng = x;
  }
};

/// A registered submitter's queue: the submitter thread owns the deque (pushes), workers
/// steal from it; a full deque spills into the injection queue. Queues live as long as the
/// pool (a thief may still be looking at one) and are reused by later submitters.
struct submitter_queue {
  submit_deque deque;
  bool in_use = false;  // under submitters_mutex
  /// 1 while the submitter sleeps in pool_impl::wait_for_drain; a worker whose steal left
  /// at most pool_impl::drain_low() tasks clears it and wakes the submitter.
  alignas(cache_line) atomic<std::uint32_t> drain_waiter{0};
};

/// The elastic pool behind spawn_blocking.
struct blocking_pool {
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::function<void()>> jobs;
  unsigned threads = 0;
  unsigned idle = 0;
  unsigned max_threads = 64;
  bool stopping = false;
  std::vector<std::thread> finished;  // exited threads still to join
  std::vector<std::thread::id> running_ids;
  std::condition_variable all_done;
};

struct pool_impl {
  thread_pool* owner = nullptr;
  pool_options opts;
  std::vector<std::unique_ptr<worker>> workers;
  alignas(128) sched::injection_queue inject;
  locked_live_table foreign_live;  ///< see locked_live_table

  // Idle accounting. ordering: seq_cst on these and on the queues' pushes (notify side)
  // makes "push then read idle state" and "register sleeper then re-check queues" a
  // Dekker pair: either the pusher sees the sleeper or the sleeper sees the work.
  alignas(128) atomic<std::uint32_t> num_searching{0};
  atomic<std::uint32_t> num_sleeping{0};
  /// Threads outside the pool between publishing work and the end of their wake-up
  /// (loop/hand_off.hpp): ~thread_pool waits for none to be left.
  alignas(64) atomic<std::uint32_t> foreign_posters{0};
  alignas(128) std::mutex sleepers_mutex;
  std::vector<unsigned> sleepers;

  static constexpr unsigned k_max_submitters = 64;
  std::mutex submitters_mutex;
  std::vector<std::unique_ptr<submitter_queue>> submitter_queues;  // under the mutex
  // ordering: release-published; workers scan [0, submitter_count) with acquire loads.
  atomic<submitter_queue*> submitter_slots[k_max_submitters] = {};
  atomic<unsigned> submitter_count{0};
  /// Registered submitters alive now (submitter_count also counts reusable queues).
  atomic<unsigned> active_submitters{0};

  atomic<bool> stopping{false};
  /// Built under a sim::world: no worker threads; the world's thread steps the workers
  /// (src/sched/sim_pool.hpp).
  bool simulated = false;
  std::unique_ptr<std::latch> drained;   // every worker finished its I/O
  std::unique_ptr<std::latch> released;  // the pool discarded what was left; workers may exit
  blocking_pool blocking;
  unsigned stats_id = 0;  ///< pool_stats::id (set when the pool registers, src/sched/pool_stats.cpp)

  void notify_one() noexcept;
  /// notify_one for work pushed by a worker onto its own queues: no fence. If the check
  /// races with a worker going to sleep, the pushing worker still runs the task itself,
  /// so only parallelism can be lost for a moment, never progress (the fence on this path
  /// would cost every spawn ~10 ns).
  void notify_from_worker() noexcept {
    if (num_sleeping.load(std::memory_order_relaxed) == 0 || num_searching.load(std::memory_order_relaxed) != 0)
      return;
    notify_one();
  }
  /// Counts an unpark on `w` and wakes it (shutdown; notify_one and wake_worker count
  /// theirs under sleepers_mutex and call wake_parked).
  void unpark(worker& w) noexcept;
  /// Ends `w`'s sleep (its loop's notify, or the futex) after its unpark was counted.
  void wake_parked(worker& w) noexcept;
  /// Takes worker `index` out of the sleeper list if it is there (one fewer sleeping);
  /// whether it was. The caller holds sleepers_mutex.
  bool remove_sleeper_locked(unsigned index) noexcept {
    auto it = std::find(sleepers.begin(), sleepers.end(), index);
    if (it == sleepers.end())
      return false;
    *it = sleepers.back();
    sleepers.pop_back();
    num_sleeping.fetch_sub(1, std::memory_order_seq_cst);
    return true;
  }
  /// Wakes `w` if it sleeps (work was placed in its inbox). A worker not in the sleeper
  /// list is awake, or sees its inbox when it re-checks after registering (park()).
  void wake_worker(worker& w) noexcept;
  bool has_visible_work() noexcept;

  /// post/spawn from an unregistered outside thread left `queued` tasks in the injection
  /// queue: yield the CPU past pool_options::submit_backlog.
  void yield_if_backlogged(std::size_t queued) const noexcept {
    if (opts.submit_backlog != 0 && queued > opts.submit_backlog) [[unlikely]]
      ::sched_yield();
  }

  /// A registered submitter's queue passed pool_options::submit_backlog: sleep until
  /// workers take it down to half (see submitter_queue::drain_waiter).
  void wait_for_drain(submitter_queue& q) noexcept;
  /// A registered submitter's share of pool_options::submit_backlog: the budget is split
  /// among the submitters alive, so the total queued from outside stays about the same
  /// however many threads submit (at least 64 each, so a submitter still batches).
  std::size_t submit_high() const noexcept {
    // ordering: relaxed; a hint that changes only when submitters come and go.
    const unsigned n = active_submitters.load(std::memory_order_relaxed);
    const std::size_t share = opts.submit_backlog / (n > 1 ? n : 1);
    return share > 64 ? share : 64;
  }
  /// The low-water mark a sleeping submitter waits for.
  std::size_t drain_low() const noexcept { return submit_high() / 2; }
  void worker_main(worker& w);
};

extern thread_local worker* t_worker;

/// Adds `p` to / removes it from the pools live_pool_stats() walks (under its lock).
void register_pool_stats(pool_impl& p);
void unregister_pool_stats(pool_impl& p) noexcept;
/// Calls f for every live pool, oldest first, under the lock pools register under (a pool
/// is not destroyed meanwhile; f must not build or destroy a pool). Any thread.
void with_live_pools(const std::function<void(pool_impl&)>& f);

/// Moves the older half of a full deque to the injection queue with one locked push. The
/// items are claimed Batch at a time (one fence and one CAS each, not one per item: a
/// spawn flood spills every Capacity / 2 spawns).
template <std::size_t Capacity, std::size_t Batch>
void spill_half(pool_impl& p, sched::work_deque<runnable, Capacity, Batch>& d) noexcept {
  runnable_fifo batch;
  std::size_t n = 0;
  runnable* got[Batch];
  while (n < Capacity / 2) {
    const std::uint32_t k = d.steal_batch(got, static_cast<std::uint32_t>(std::min(Batch, Capacity / 2 - n)));
    if (k == 0)
      break;
    for (std::uint32_t i = 0; i < k; ++i)
      batch.push(got[i]);
    n += k;
  }
  if (n != 0)
    p.inject.push_list(batch.head, batch.tail, n);
}

/// Pushes `r` on worker `w`'s deque (the calling thread must be `w`); a full deque moves
/// its older half to the injection queue first. `steal_alone`: a thief's batch steal
/// takes `r` only by itself (a join's fork; work_deque::steal_half_into).
inline void push_local(pool_impl& p, worker& w, runnable* r, bool steal_alone = false) noexcept {
  if (!w.deque.push(r, steal_alone)) [[unlikely]] {
    spill_half(p, w.deque);  // other workers take it from the injection queue
    if (!w.deque.push(r, steal_alone))
      p.inject.push(r);
  }
}

/// Work for a worker that waits inside a join (src/sched/fork.cpp): its own LIFO slot, a
/// batch of the injection queue or of a submitter, or half of another worker's deque
/// (or its LIFO slot). Nullptr when there is none. On worker `w`'s thread.
runnable* find_help_work(pool_impl& p, worker& w) noexcept;

}  // namespace saturn::detail
