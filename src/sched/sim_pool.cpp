// A thread_pool's workers stepped on the simulation's thread (sim_pool.hpp).
#include "sched/sim_pool.hpp"

#include <saturn/loop/event_loop.hpp>
#include <saturn/sim/world.hpp>
#include <saturn/task/scheduler.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "loop/current_loop.hpp"
#include "ring/sim/sim_hooks.hpp"
#include "sched/pool_impl.hpp"

namespace saturn::detail {
namespace {

/// The simulated pools alive on this thread, oldest first.
thread_local std::vector<pool_impl*> t_sim_pools;
/// Bumped when a pool joins or leaves (a step may build or destroy one): the driver's
/// list of workers is stale after it.
thread_local std::uint64_t t_sim_pools_generation = 0;

/// scheduler::set_current is for implementations of a scheduler; the driver acts for one.
struct scheduler_access : scheduler {
  using scheduler::set_current;
};

/// While it lives, the calling thread is worker `w` of its pool: t_worker, the current
/// loop and the current scheduler name it, as on a worker thread.
class as_worker {
 public:
  explicit as_worker(worker& w) noexcept
      : m_prev_worker(std::exchange(t_worker, &w)),
        m_prev_loop(exchange_current_loop(w.loop ? w.loop.get() : event_loop::current())),
        m_prev_sched(scheduler_access::set_current(w.pool->owner)) {}
  ~as_worker() {
    scheduler_access::set_current(m_prev_sched);
    exchange_current_loop(m_prev_loop);
    t_worker = m_prev_worker;
  }
  as_worker(const as_worker&) = delete;
  as_worker& operator=(const as_worker&) = delete;

 private:
  worker* m_prev_worker;
  event_loop* m_prev_loop;
  scheduler* m_prev_sched;
};

bool any_visible_work(void*) noexcept {
  for (pool_impl* p : t_sim_pools)
    if (p->has_visible_work())
      return true;
  return false;
}

}  // namespace

void sim_pool_start(pool_impl& p) {
  p.simulated = true;
  if (p.opts.mode == pool_mode::io) {
    // Each loop pushes itself as the thread's current loop; the world's thread keeps its
    // own (a worker's loop is current only while the worker steps).
    event_loop* const mine = event_loop::current();
    for (auto& w : p.workers) {
      w->loop = std::make_unique<event_loop>(p.opts.loop);
      w->loop->add_keep_alive();
      w->loop_ptr.store(w->loop.get(), std::memory_order_release);
    }
    exchange_current_loop(mine);
  }
  t_sim_pools.push_back(&p);
  ++t_sim_pools_generation;
}

void sim_pool_drain(pool_impl& p) noexcept {
  t_sim_pools.erase(std::remove(t_sim_pools.begin(), t_sim_pools.end(), &p), t_sim_pools.end());
  ++t_sim_pools_generation;
  for (auto& w : p.workers) {
    if (w->loop) {
      as_worker as(*w);
      w->loop->drain_io();
    }
    p.drained->count_down();
  }
}

void sim_pool_release(pool_impl& p) noexcept {
  // Newest first, so each loop is at the head of its chain when it goes.
  for (auto it = p.workers.rbegin(); it != p.workers.rend(); ++it) {
    worker& w = **it;
    if (!w.loop)
      continue;
    as_worker as(w);
    w.loop_ptr.store(nullptr, std::memory_order_release);
    w.loop.reset();
  }
}

bool sim_pools_here() noexcept { return !t_sim_pools.empty(); }

void sim_drive_until(bool (*done)(void*), void* ctx) {
  std::vector<worker*> all;
  std::vector<char> idle;
  while (!done(ctx)) {
    all.clear();
    for (pool_impl* p : t_sim_pools)
      for (auto& w : p->workers)
        all.push_back(w.get());
    if (all.empty())
      throw std::logic_error("saturn::sim: waiting for a simulated thread_pool that no longer exists");
    // Seed-chosen steps until every worker has come up empty since the last progress:
    // a step that neither ran a task nor moved the worker along its idle path (sim_phase)
    // is one of a worker asleep, so then every worker sleeps.
    idle.assign(all.size(), 0);
    std::size_t idle_count = 0;
    const std::uint64_t generation = t_sim_pools_generation;
    while (idle_count < all.size() && !done(ctx) && generation == t_sim_pools_generation) {
      const std::size_t k = ring::sim_random_below(all.size());
      bool ran;
      {
        as_worker as(*all[k]);
        ran = sim_worker_step(*all[k]->pool, *all[k]);
      }
      if (ran) {
        ring::sim_trace(0x5e9000 + k);  // the schedule is part of the trace
        if (idle_count != 0) {
          std::fill(idle.begin(), idle.end(), 0);
          idle_count = 0;
        }
      } else if (idle[k] == 0) {
        idle[k] = 1;
        ++idle_count;
      }
    }
    if (done(ctx))
      return;
    if (generation != t_sim_pools_generation)
      continue;  // a pool came or went: list the workers again
    // A ring may hold a completion its loop's non-blocking turns do not collect (one no
    // operation in flight waits for: a cancel's, the wake read's); a worker thread would
    // collect it in its next park. Here: a blocking turn of that loop, which returns at
    // once since the completion is there.
    bool reaped = false;
    for (worker* w : all) {
      if (w->loop && ring::sim_ring_has_completion(w->loop->ring_fd())) {
        as_worker as(*w);
        w->loop->run_once(true);
        reaped = true;
      }
    }
    if (reaped)
      continue;
    // Every worker sleeps. Work that one of them could take, left queued, is a lost
    // wake-up: on threads it would wait until some unrelated event woke a worker, or for
    // ever. (What a worker's loop holds for it — I/O, timers, posts — wakes it below.)
    for (pool_impl* p : t_sim_pools) {
      bool pinned = false;
      for (auto& w : p->workers)
        pinned = pinned || w->inbox.maybe_nonempty();
      if (p->has_visible_work() || pinned)
        throw sim::deadlock_error(std::string("saturn::sim: lost wake-up: every worker of a thread_pool sleeps while ") +
                                  (pinned ? "a task placed on one of them" : "a task in its queues") +
                                  " waits to run (sleepers " + std::to_string(p->sleepers.size()) + " of " +
                                  std::to_string(p->workers.size()) + ", searching " +
                                  std::to_string(p->num_searching.load(std::memory_order_relaxed)) + ")");
    }
    // Nothing can run: the next completion of any ring, or the nearest timer.
    std::int64_t deadline = INT64_MAX;
    for (worker* w : all)
      if (w->loop)
        deadline = std::min<std::int64_t>(deadline, w->loop->next_timer_deadline().time_since_epoch().count());
    ring::sim_wait_any(&any_visible_work, nullptr, deadline);
  }
}

}  // namespace saturn::detail
