// Fork-join on the work-stealing pool (saturn/task/join.hpp).
//
// Protocol (rayon's join_context, on saturn's deque):
//   fork     the joiner pushes the second branch's fork_job (on its stack) onto its own
//            Chase-Lev deque, marked steal_alone (a thief takes the oldest fork by
//            itself, never half the deque: rayon steals one job too), then
//            notify_from_worker(): a parked worker is woken only when none is searching,
//            so a busy pool forks without any wake-up.
//   first    the joiner runs the first branch.
//   reclaim  it pops its deque. The fork is the newest item it pushed that is still
//            there, since the first branch's own joins took theirs back: popping it means
//            nobody stole it, and the branch runs inline. Anything else popped was queued
//            above it by the first branch (a spawn) and runs here. An empty deque means a
//            thief took the fork (thieves take the oldest first, so everything older went
//            too), or a full deque spilled it to the injection queue.
//   wait     the joiner runs other work (its deque, the injection queue, other deques —
//            where a fork spilled or stolen-but-not-started sits) until the fork is done;
//            after a while with nothing to run it sleeps on the fork's state word, with a
//            timeout, so it looks for new work now and then.
//   done     whoever runs the fork stores the branch's outcome, then exchanges the state
//            to 1 (release) and, if the joiner sleeps (2), wakes it. That exchange is its
//            last access: the joiner may return and free the fork right after.
#include <saturn/task/join.hpp>

#include <chrono>

#include "sched/pool_impl.hpp"

namespace saturn::detail {

namespace {
constexpr unsigned k_spin_rounds = 64;  // look rounds (each ~1 us) before sleeping on the fork
constexpr std::chrono::nanoseconds k_first_sleep{50'000};
constexpr std::chrono::nanoseconds k_max_sleep{1'000'000};

inline void run_here(worker& w, runnable* r) noexcept {
  ++w.counters.tasks_run;
  run_runnable(r);
}

/// The fork was stolen (or spilled): run other work until it is done.
void wait_for_fork(pool_impl& p, worker& w, fork_job& job) noexcept {
  unsigned idle_rounds = 0;
  std::chrono::nanoseconds sleep = k_first_sleep;
  for (;;) {
    // ordering: acquire pairs with the release exchange in run_fork_job: the branch's
    // outcome is visible once this reads 1.
    const std::uint32_t s = job.m_state.load(std::memory_order_acquire);
    if (s == 1)
      return;
    runnable* r = w.deque.pop();
    if (r == nullptr)
      r = find_help_work(p, w);
    if (r != nullptr) {
      // ordering: acquire, as in worker_main: during shutdown a task must not start
      // again (~thread_pool discards it); only forks, whose joiners wait, still run.
      if (r->m_fn != &run_fork_job && p.stopping.load(std::memory_order_acquire)) [[unlikely]] {
        p.inject.push(r);
        cpu_relax();
        continue;
      }
      run_here(w, r);
      idle_rounds = 0;
      sleep = k_first_sleep;
      continue;
    }
    if (++idle_rounds < k_spin_rounds) {
      for (int i = 0; i < 64; ++i)
        cpu_relax();
      continue;
    }
    std::uint32_t expected = 0;
    // ordering: acquire: reading 1 on failure means done (as the load above).
    if (s == 2 || job.m_state.compare_exchange_strong(expected, 2, std::memory_order_acquire,
                                                       std::memory_order_acquire)) {
      (void)futex_wait(&job.m_state, 2, sleep);
      sleep = sleep * 2 < k_max_sleep ? sleep * 2 : k_max_sleep;
    }
    idle_rounds = k_spin_rounds - 4;  // a few more looks before the next sleep
  }
}
}  // namespace

void run_fork_job(runnable* r, run_mode) noexcept {
  // A fork is never discarded: its joiner waits for it (and a pool shuts down only after
  // every worker left its task, so no fork is queued by then).
  auto* job = static_cast<fork_job*>(r);
  job->m_body(job);
  // ordering: release publishes the outcome to the joiner's acquire load.
  // lifetime: the last access to the fork; the joiner may free it right after, so the
  // wake uses only the address (a wake on a reused word wakes nobody, or a waiter that
  // re-checks its own condition).
  auto* word = &job->m_state;
  if (word->exchange(1, std::memory_order_acq_rel) == 2)
    futex_wake(word, 1);
}

bool fork_offer(fork_job& job) noexcept {
  worker* w = t_worker;
  if (w == nullptr) [[unlikely]]
    return false;
  pool_impl& p = *w->pool;
  if (p.workers.size() < 2)
    return false;  // nobody could steal it: the caller runs both branches in turn
  push_local(p, *w, &job, /*steal_alone=*/true);
  if (w->polling_io) [[unlikely]] {
    w->notify_deferred = true;  // a join in a completion callback: one notify after the batch
  } else {
    p.notify_from_worker();
  }
  return true;
}

bool fork_reclaim(fork_job& job) noexcept {
  worker& w = *t_worker;
  for (;;) {
    runnable* r = w.deque.pop();
    if (r == &job)
      return true;
    if (r == nullptr)
      break;
    run_here(w, r);  // queued above the fork by the first branch
  }
  wait_for_fork(*w.pool, w, job);
  return false;
}

}  // namespace saturn::detail
