// A worker's loop: find work (see the order in pool_impl.hpp), run it, search, park.
#include <sys/resource.h>
#include <unistd.h>

#include <ctime>

#include <saturn/config.hpp>
#include <saturn/loop/clock.hpp>

#include "ring/sim/sim_hooks.hpp"
#include "sched/mono_clock.hpp"
#include "sched/pool_impl.hpp"
#include "sched/sim_pool.hpp"

namespace saturn::detail {

thread_local worker* t_worker = nullptr;

namespace {
constexpr std::uint32_t k_event_interval = 61;  // poll I/O and the injection queue
constexpr std::uint32_t k_timer_interval = 8;   // fire the loop's due timers
constexpr std::uint32_t k_fair_interval = 31;   // take the oldest local task instead
constexpr unsigned k_max_lifo_streak = 3;
constexpr std::size_t k_inject_batch = 32;

inline void run_one(worker& w, runnable* r) noexcept {
  ++w.counters.tasks_run;
  ++w.counters.progress;  // odd: inside a run (the stall detector's watchdog reads it)
  // ordering: relaxed; the watchdog pairs it with the progress word it read, as a hint.
  w.counters.running.store(r, std::memory_order_relaxed);
  detail::run_runnable(r);
  ++w.counters.progress;
}

/// The worker's coarse clock for task start times (worker::coarse_now_ns).
void refresh_coarse_clock(worker& w) noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  w.coarse_now_ns = std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// io mode: the next idle search's spin, from a running average of the idle spells (idle
/// until work was found, parked time included; a spell longer than twice the cap counts
/// as twice the cap, one in which the spinner was preempted as the cap). A spin that
/// catches its work costs the spell's whole length in CPU to save one park and wake-up (a
/// few us of CPU, and a 20-50 us IPI on this VM): worth it while spells are short, so the
/// worker spins, about 1.5x the average, only while the average is at most half the cap.
/// Longer spells (a client waiting for a database's answer: 40-70 us here) are better
/// slept through, and spinning through them burns a CPU the producer of the work may need
/// (the database, a load generator): halve the spin, down to a single look. The average
/// moves a quarter of the way per spell, so one short spell among long ones does not
/// bring the whole spin back (it did when the last spell alone decided).
void adapt_spin(worker& w, std::int64_t spell_ns, std::int64_t cap_ns) noexcept {
  const std::int64_t clamped = spell_ns < 2 * cap_ns ? spell_ns : 2 * cap_ns;
  w.spell_avg_ns += (clamped - w.spell_avg_ns) / 4;
  if (w.spell_avg_ns <= cap_ns / 2) {
    const std::int64_t want = w.spell_avg_ns + w.spell_avg_ns / 2 + 2000;
    w.spin_budget_ns = want < cap_ns ? want : cap_ns;
  } else {
    w.spin_budget_ns /= 2;
    if (w.spin_budget_ns < 1000)
      w.spin_budget_ns = 0;
  }
}

/// Involuntary context switches of the calling thread so far: the kernel took the CPU
/// from it for another runnable thread.
long involuntary_switches() noexcept {
  rusage u;
  return ::getrusage(RUSAGE_THREAD, &u) == 0 ? u.ru_nivcsw : 0;
}

runnable* next_local(worker& w) noexcept {
  if (w.lifo_streak < k_max_lifo_streak && w.lifo.load(std::memory_order_relaxed) != nullptr) {
    if (runnable* r = w.lifo.exchange(nullptr, std::memory_order_acquire)) {
      ++w.lifo_streak;
      return r;
    }
  }
  w.lifo_streak = 0;
  if (w.tick % k_fair_interval == 0) {
    if (runnable* r = w.deque.steal())
      return r;
  }
  // Tasks this worker's loop woke (pin_io_wakeups) before the deque: their I/O is here.
  if (runnable* r = w.pop_pinned())
    return r;
  if (runnable* r = w.deque.pop())
    return r;
  if (w.lifo.load(std::memory_order_relaxed) != nullptr) {
    if (runnable* r = w.lifo.exchange(nullptr, std::memory_order_acquire))
      return r;
  }
  return w.pop_yielded();
}

/// Moves a batch from the injection queue into the worker; returns one to run.
runnable* take_injected(pool_impl& p, worker& w) noexcept {
  const std::size_t hint = p.inject.size_hint();
  if (hint == 0)
    return nullptr;
  std::size_t want = hint / p.workers.size() + 1;
  if (want > k_inject_batch)
    want = k_inject_batch;
  runnable* first = nullptr;
  if (p.inject.pop_batch(want, &first) == 0)
    return nullptr;
  runnable* rest = first->m_next_runnable;
  while (rest != nullptr) {
    runnable* next = rest->m_next_runnable;
    if (!w.deque.push(rest)) {
      // lifetime: the deque is full; the remainder goes back (order within it kept).
      runnable* last = rest;
      std::size_t n = 1;
      while (last->m_next_runnable != nullptr) {
        last = last->m_next_runnable;
        ++n;
      }
      p.inject.push_list(rest, last, n);
      break;
    }
    rest = next;
  }
  return first;
}

runnable* steal_round(pool_impl& p, worker& w, bool include_lifo) noexcept;

runnable* steal_work(pool_impl& p, worker& w, bool include_lifo) noexcept {
  ++w.counters.steal_attempts;
  runnable* r = steal_round(p, w, include_lifo);
  if (r != nullptr)
    ++w.counters.steals;
  return r;
}

runnable* steal_round(pool_impl& p, worker& w, bool include_lifo) noexcept {
  const unsigned nsub = p.submitter_count.load(std::memory_order_acquire);
  const unsigned sub_start = nsub != 0 ? w.next_random() % nsub : 0;
  for (unsigned k = 0; k < nsub; ++k) {
    submitter_queue* q = p.submitter_slots[(sub_start + k) % nsub].load(std::memory_order_acquire);
    if (q != nullptr) {
      if (runnable* r = q->deque.steal_half_into(w.deque)) {
        // ordering: seq_cst after the steal's seq_cst CAS (see pool_impl::wait_for_drain).
        if (q->drain_waiter.load(std::memory_order_seq_cst) != 0 && q->deque.size_approx() <= p.drain_low() &&
            q->drain_waiter.exchange(0, std::memory_order_acq_rel) != 0) [[unlikely]]
          futex_wake(&q->drain_waiter, 1);
        return r;
      }
    }
  }
  const std::size_t n = p.workers.size();
  const std::size_t start = w.next_random() % n;
  for (std::size_t k = 0; k < n; ++k) {
    worker& v = *p.workers[(start + k) % n];
    if (&v == &w)
      continue;
    if (runnable* r = v.deque.steal_half_into(w.deque))
      return r;
    if (include_lifo && v.lifo.load(std::memory_order_relaxed) != nullptr) {
      if (runnable* r = v.lifo.exchange(nullptr, std::memory_order_acquire))
        return r;
    }
  }
  return nullptr;
}

runnable* find_work(pool_impl& p, worker& w, bool include_lifo) noexcept {
  if (runnable* r = take_injected(p, w))
    return r;
  return steal_work(p, w, include_lifo);
}

}  // namespace

runnable* find_help_work(pool_impl& p, worker& w) noexcept {
  if (w.lifo.load(std::memory_order_relaxed) != nullptr) {
    if (runnable* r = w.lifo.exchange(nullptr, std::memory_order_acquire))
      return r;
  }
  return find_work(p, w, true);
}

namespace {

void begin_search(pool_impl& p, worker& w) noexcept {
  if (w.searching)
    return;
  // At most half the workers search at once (Tokio's rule): more only burn CPU.
  const std::uint32_t limit = static_cast<std::uint32_t>((p.workers.size() + 1) / 2);
  if (p.num_searching.load(std::memory_order_relaxed) >= limit)
    return;
  p.num_searching.fetch_add(1, std::memory_order_seq_cst);
  w.searching = true;
}

void end_search(pool_impl& p, worker& w) noexcept {
  if (!w.searching)
    return;
  w.searching = false;
  // The last searcher found work: wake another so the search continues (chained wakes),
  // but only when there is work another worker could take. What a worker finds in its own
  // loop (an I/O completion kept here by pin_io_wakeups) is not stealable: waking a
  // sleeper for it had that sleeper spin on an empty pool once per completion (a client
  // waiting on one socket paid a wake-up and a spin per round trip).
  // ordering: the seq_cst decrement before re-reading the queues pairs with the fence of
  // a producer that skipped its notify because we were searching (as in park()).
  if (p.num_searching.fetch_sub(1, std::memory_order_seq_cst) == 1 && p.has_visible_work())
    p.notify_one();
}

/// Removes `w` from the sleeper list if it is still there.
void leave_sleepers(pool_impl& p, worker& w) noexcept {
  {
    std::lock_guard lock(p.sleepers_mutex);
    (void)p.remove_sleeper_locked(w.index);
  }
  // Unparked: each unparker counted us as searching once. We search for one of them; the
  // others' counts go back.
  if (const std::uint32_t n = w.unparks.exchange(0, std::memory_order_acq_rel); n != 0) {
    ++w.counters.wakeups;
    w.searching = true;
    if (n > 1)
      p.num_searching.fetch_sub(n - 1, std::memory_order_seq_cst);
  }
}

/// After a turn of the loop or a timer pass: the one notify deferred while its wake-ups
/// were queued here, and only when more than one task is queued (see poll_io).
void after_loop_wakes(pool_impl& p, worker& w) noexcept {
  if (w.notify_deferred) {
    w.notify_deferred = false;
    const std::size_t queued = w.deque.size_approx() + (w.lifo.load(std::memory_order_relaxed) != nullptr ? 1 : 0);
    if (queued > 1)
      p.notify_from_worker();
  }
}

/// One loop iteration on the worker (I/O completions, the loop's timers and posts). The
/// tasks its completions wake go to this worker's queue without a notify each — tokio does
/// the same while its driver polls — and one notify follows the batch, only when more than
/// one task is queued: a lone wake-up (an echo reply, an HTTP request) runs here, hot in
/// this core's cache, instead of pulling a parked worker in to steal it (a 20-50 us IPI
/// here, and a cross-core hand-off of the connection).
void poll_io(pool_impl& p, worker& w, bool may_block) {
  w.polling_io = true;
  if (may_block) {
    w.loop->run_once(true);  // a park: not a run the stall detector times
  } else {
    ++w.counters.progress;  // a turn's callbacks are timed like a task (stall detector)
    w.counters.running.store(nullptr, std::memory_order_relaxed);
    w.loop->run_once(false);
    ++w.counters.progress;
  }
  w.polling_io = false;
  after_loop_wakes(p, w);
}

/// The loop's due timers, fired between tasks on a busy worker: the tasks they wake are
/// loop wake-ups like poll_io's (pinned with pin_io_wakeups, one deferred notify).
void fire_timers(pool_impl& p, worker& w) {
  w.polling_io = true;
  ++w.counters.progress;  // as in poll_io
  w.counters.running.store(nullptr, std::memory_order_relaxed);
  w.loop->fire_due_timers();
  ++w.counters.progress;
  w.polling_io = false;
  after_loop_wakes(p, w);
}

/// park()'s first half: registers `w` as a sleeper, then looks again. True when it may
/// sleep; either way leave_sleepers() ends the park.
bool park_register(pool_impl& p, worker& w) {
  {
    std::lock_guard lock(p.sleepers_mutex);
    p.sleepers.push_back(w.index);
    p.num_sleeping.fetch_add(1, std::memory_order_seq_cst);
  }
  // ordering: seq_cst fence: registering as a sleeper happens before re-reading the
  // queues, pairing with notify_one's fence after a push (Dekker).
  thread_fence(std::memory_order_seq_cst);
  // An unpark still not taken over (a notify_one popped this worker and counted it as
  // searching while it was awake, and an earlier poll of the loop used up its wake-up)
  // must not be slept on: nobody else would wake us while that searcher is counted.
  // leave_sleepers() takes it over.
  return !p.has_visible_work() && !w.inbox.nonempty_seq_cst() && !p.stopping.load(std::memory_order_seq_cst) &&
         w.unparks.load(std::memory_order_acquire) == 0;
}

void park(pool_impl& p, worker& w) {
  if (park_register(p, w)) {
    // Two clock reads per park (a park is a syscall and a context switch anyway); none
    // when metrics are compiled out (the parked time is only a statistic).
    ++w.counters.parks;
    const std::int64_t parked_at = config::metrics ? mono_ns() : 0;
    if constexpr (config::metrics)
      w.counters.park_update([&] { w.counters.parked_since.store(parked_at, std::memory_order_relaxed); });
    if (w.loop) {
      poll_io(p, w, true);  // sleeps in the ring: I/O, a timer, or notify() ends it
    } else {
      // The unpark count is the futex word: an unpark before the wait makes it return.
      while (w.unparks.load(std::memory_order_acquire) == 0 && !p.stopping.load(std::memory_order_acquire))
        futex_wait(&w.unparks, 0);
    }
    refresh_coarse_clock(w);
    if constexpr (config::metrics) {
      const std::int64_t woke_at = mono_ns();
      w.counters.park_update([&] {
        auto& c = w.counters;
        c.parked_ns.store(c.parked_ns.load(std::memory_order_relaxed) + (woke_at - parked_at),
                          std::memory_order_relaxed);
        c.parked_since.store(0, std::memory_order_relaxed);
      });
    }
  }
  leave_sleepers(p, w);
}

/// A busy worker's look for its next runnable, in worker_main's order (pool_impl.hpp):
/// due timers every few ticks, the injection queue and a loop turn every k_event_interval,
/// local work, a non-blocking loop turn, then other workers' (their LIFO slots too when
/// `steal_lifo`). Null when there is none.
inline runnable* busy_look(pool_impl& p, worker& w, bool steal_lifo) {
  ++w.tick;
  runnable* r = nullptr;
  // Due timers every few tasks, not only at the I/O poll every k_event_interval: under
  // load a batch of 61 tasks made /delay/10's sleeps 0.1-0.5 ms late (measured in the
  // handler), which is most of the round trip's overhead.
  if (w.loop && w.tick % k_timer_interval == 0)
    fire_timers(p, w);
  if (w.tick % k_event_interval == 0) {
    refresh_coarse_clock(w);
    if (w.loop)
      poll_io(p, w, false);
    r = take_injected(p, w);
    if (r == nullptr)
      r = w.pop_yielded();
  }
  if (r == nullptr)
    r = next_local(w);
  if (r == nullptr && w.loop) {
    poll_io(p, w, false);
    r = next_local(w);
  }
  if (r == nullptr)
    r = find_work(p, w, steal_lifo);
  return r;
}

/// An idle worker's look on its own side, once per search round: its loop (io mode) and
/// what that queued here, or (cpu_bound) tasks other threads placed on it.
inline runnable* look_own(pool_impl& p, worker& w) {
  if (w.loop) {
    poll_io(p, w, false);
    return next_local(w);
  }
  return w.inbox.maybe_nonempty() ? w.pop_pinned() : nullptr;
}

/// A search that found nothing ends without the chained wake (waking a sleeper only to
/// have it search the empty pool and wake the next keeps an idle pool busy); the last
/// searcher wakes one only if work showed up meanwhile (Tokio's
/// transition_worker_to_parked).
inline void give_up_search(pool_impl& p, worker& w) noexcept {
  if (!w.searching)
    return;
  w.searching = false;
  if (p.num_searching.fetch_sub(1, std::memory_order_seq_cst) == 1 && p.has_visible_work())
    p.notify_one();
}

}  // namespace

bool sim_worker_step(pool_impl& p, worker& w) {
  // worker_main's path in steps (see sim_pool.hpp): busy looks, one round of the search
  // (no spin: time does not pass in a step), giving up the search, registering as a
  // sleeper, and the sleep itself, which only an unpark, a completion on the worker's
  // ring or a due timer ends, as on a worker thread.
  using phase = worker::sim_phase;
  runnable* r = nullptr;
  switch (w.sim) {
    case phase::busy:
      r = busy_look(p, w, true);
      if (r == nullptr) {
        begin_search(p, w);
        w.sim = phase::searching;
        return true;
      }
      break;
    case phase::searching:
      r = look_own(p, w);
      if (r == nullptr)
        r = find_work(p, w, true);
      if (r == nullptr) {
        give_up_search(p, w);
        w.sim = phase::parking;
        return true;
      }
      w.sim = phase::busy;
      break;
    case phase::parking:
      if (park_register(p, w)) {
        ++w.counters.parks;
        w.sim = phase::parked;
      } else {
        leave_sleepers(p, w);
        w.sim = phase::busy;
      }
      return true;
    case phase::parked: {
      const bool unparked = w.unparks.load(std::memory_order_acquire) != 0 || p.stopping.load(std::memory_order_acquire);
      const bool io_ready = w.loop && (ring::sim_ring_has_completion(w.loop->ring_fd()) ||
                                       w.loop->next_timer_deadline() <= clock::now());
      if (!unparked && !io_ready)
        return false;  // still asleep
      if (w.loop)  // the park's ring wait, which returns at once now
        poll_io(p, w, ring::sim_ring_has_completion(w.loop->ring_fd()));
      leave_sleepers(p, w);
      w.sim = phase::busy;
      return true;
    }
  }
  end_search(p, w);
  run_one(w, r);
  return true;
}

bool pool_impl::has_visible_work() noexcept {
  if (!inject.empty_hint())
    return true;
  for (auto& wp : workers) {
    if (wp->deque.size_approx() != 0 || wp->lifo.load(std::memory_order_relaxed) != nullptr)
      return true;
  }
  const unsigned nsub = submitter_count.load(std::memory_order_acquire);
  for (unsigned i = 0; i < nsub; ++i) {
    submitter_queue* q = submitter_slots[i].load(std::memory_order_acquire);
    if (q != nullptr && q->deque.size_approx() != 0)
      return true;
  }
  return false;
}

void pool_impl::notify_one() noexcept {
  // ordering: the work was pushed before this fence; a parking worker registered before
  // its own fence. One of us sees the other (see park()).
  thread_fence(std::memory_order_seq_cst);
  if (num_searching.load(std::memory_order_relaxed) != 0 || num_sleeping.load(std::memory_order_relaxed) == 0)
    return;
  unsigned id;
  {
    std::lock_guard lock(sleepers_mutex);
    if (sleepers.empty())
      return;
    id = sleepers.back();
    sleepers.pop_back();
    num_sleeping.fetch_sub(1, std::memory_order_seq_cst);
    num_searching.fetch_add(1, std::memory_order_seq_cst);
    // Counted under the lock, with the pop: the popped worker, when it leaves the sleeper
    // list (under this lock), must see this unpark and take the searcher count over.
    // Counted after the unlock, a worker leaving park() without sleeping (it saw work)
    // missed it, ran the work as a non-searcher, and num_searching stayed 1 with nobody
    // searching: every notify_from_worker() bailed and a parked worker was never woken
    // (a spawn into a busy worker's LIFO slot waited until that worker got to it).
    workers[id]->unparks.fetch_add(1, std::memory_order_release);
  }
  wake_parked(*workers[id]);
}

void pool_impl::wake_worker(worker& w) noexcept {
  {
    // The sleeper list's lock orders this check against park()'s registration: a worker
    // registered before it is found here, one registering after re-checks its inbox.
    std::lock_guard lock(sleepers_mutex);
    if (!remove_sleeper_locked(w.index))
      return;
    num_searching.fetch_add(1, std::memory_order_seq_cst);  // as notify_one: taken over on waking
    w.unparks.fetch_add(1, std::memory_order_release);       // as notify_one: under the lock
  }
  wake_parked(w);
}

void pool_impl::unpark(worker& w) noexcept {
  w.unparks.fetch_add(1, std::memory_order_release);
  wake_parked(w);
}

void pool_impl::wake_parked(worker& w) noexcept {
  if (event_loop* l = w.loop_ptr.load(std::memory_order_acquire)) {
    l->notify();
  } else {
    futex_wake(&w.unparks, 1);
  }
}

void pool_impl::worker_main(worker& w) {
  t_worker = &w;  // the loop (io mode) was created by the thread's start routine
  // ordering: relaxed; a watchdog only uses it to find this thread's /proc entry.
  w.counters.os_tid.store(static_cast<int>(::gettid()), std::memory_order_relaxed);
  w.counters.started_ns.store(mono_ns(), std::memory_order_relaxed);
  refresh_coarse_clock(w);
  const std::int64_t spin_ns = std::int64_t(opts.spin_before_park_us) * 1000;
  w.spin_budget_ns = spin_ns;
  std::int64_t idle_since = 0;  // io mode: when the current idle spell began (0: busy)
  while (!stopping.load(std::memory_order_relaxed)) {
    runnable* r = busy_look(*this, w, false);
    if (r != nullptr) {
      end_search(*this, w);
      if (idle_since != 0) {  // back from a park
        adapt_spin(w, mono_ns() - idle_since, spin_ns);
        idle_since = 0;
      }
      if (stopping.load(std::memory_order_acquire)) [[unlikely]] {
        // Shutdown began: a task woken by another worker's I/O drain must not run on
        // (the destructor discards it). Acquire: having taken such a task, we see the flag.
        inject.push(r);
        break;
      }
      run_one(w, r);
      continue;
    }
    if (idle_since != 0) {
      // Back from a park with nothing to run: a wake-up for a task another worker took
      // first, or a completion no task waits on. The spell goes on, and spinning the
      // whole budget again catches no more than the last spin did: halve it (it used to
      // be kept, and a worker woken for nothing spun it in full each time).
      adapt_spin(w, spin_ns + 1, spin_ns);
      idle_since = 0;
    }
    // Idle: search for a while (PAUSE between rounds), then park. Only searchers spin (at
    // most half the workers): the others park at once and leave the CPU to whoever
    // produces the work.
    begin_search(*this, w);
    const std::int64_t spin = w.loop ? w.spin_budget_ns : spin_ns;
    const std::int64_t idle_start = w.loop && spin_ns != 0 ? mono_ns() : 0;
    const std::int64_t until = (idle_start != 0 ? idle_start : mono_ns()) + (w.searching ? spin : 0);
    const long preempted_before = idle_start != 0 && spin != 0 && w.searching ? involuntary_switches() : -1;
    bool found = false;
    for (unsigned round = 0; !stopping.load(std::memory_order_relaxed); ++round) {
      for (int i = 0; i < 64; ++i)
        cpu_relax();
      r = look_own(*this, w);
      // A zero spin: one look round, then park (no minimum spin).
      const bool last = spin == 0 || (w.loop && !w.searching) || ((round & 15) == 15 && mono_ns() >= until);
      // Another worker's LIFO slot is left to its owner in the first round (its newest
      // spawn, hot in that cache), but the last look before parking takes it: park()
      // counts it as visible work and refuses to sleep, so a worker that never took it
      // looped search-park-search until the owner got to it (a whole TLS handshake on a
      // busy owner, and on a loaded machine the looper took the owner's CPU).
      if (r == nullptr)
        r = find_work(*this, w, round > 0 || last);
      if (r != nullptr) {
        found = true;
        break;
      }
      if (last)
        break;
    }
    // The kernel took the CPU from the spinning worker: another thread needed it (the
    // work's producer, likely); spinning here only delays that work. Count it as a miss.
    const bool contended = preempted_before >= 0 && involuntary_switches() != preempted_before;
    if (found) {
      if (idle_start != 0)
        adapt_spin(w, contended ? spin_ns + 1 : mono_ns() - idle_start, spin_ns);
      end_search(*this, w);
      if (stopping.load(std::memory_order_acquire)) [[unlikely]] {
        inject.push(r);  // as above
        break;
      }
      run_one(w, r);
      continue;
    }
    give_up_search(*this, w);
    // A second spin without work since the last park (woken, searched, found nothing: a
    // wake-up for work another worker took, or for none) was wasted: halve the next one.
    // Only work found ends a spell and feeds the average.
    if (idle_since != 0 && w.spin_budget_ns != 0) {
      w.spin_budget_ns /= 2;
      if (w.spin_budget_ns < 1000)
        w.spin_budget_ns = 0;
    }
    idle_since = contended ? 0 : idle_start;
    if (contended)
      adapt_spin(w, spin_ns + 1, spin_ns);
    park(*this, w);
  }
  // Shutdown, phase 1 (this thread): cancel and wait for this ring's in-flight I/O while
  // every frame it points into is still alive.
  if (w.loop)
    w.loop->drain_io();
  drained->count_down();
  // Phase 2 happens in ~thread_pool: it discards every queue and every live task.
  released->wait();
  // Phase 3: the loop goes away on its own thread (the ring is SINGLE_ISSUER).
  w.loop_ptr.store(nullptr, std::memory_order_release);
  w.loop.reset();
  t_worker = nullptr;
}

}  // namespace saturn::detail
