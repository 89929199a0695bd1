// live_pool_stats: the list of live pools (registered at the end of construction, removed
// first thing in destruction, under one mutex), and the snapshot of each. The mutex is
// taken by pool construction and destruction and by a reader (a metrics scrape), never
// by a worker, so the hot paths do not see it.
#include <saturn/sched/pool_stats.hpp>

#include <ctime>
#include <mutex>

#include "sched/mono_clock.hpp"
#include "sched/pool_impl.hpp"

namespace saturn {
namespace detail {
namespace {

struct pool_list {
  std::mutex mutex;
  std::vector<pool_impl*> pools;
  unsigned next_id = 0;
};

pool_list& pools() {
  static pool_list* l = new pool_list;  // lifetime: never destroyed (pools may outlive statics)
  return *l;
}

/// The worker's time parked up to `now` (read here, after the snapshot), a park in
/// progress included, read consistently through the seqlock of worker::counters_t
/// (retried while the worker writes).
std::uint64_t parked_so_far(const worker& w, std::int64_t& now) noexcept {
  const auto& c = w.counters;
  for (;;) {
    const std::uint32_t s1 = c.park_seq.load(std::memory_order_acquire);
    const std::int64_t total = c.parked_ns.load(std::memory_order_relaxed);
    const std::int64_t since = c.parked_since.load(std::memory_order_relaxed);
    // ordering: acquire fence: the data loads above happen before the re-read of the
    // sequence; an unchanged, even sequence means no write overlapped them.
    thread_fence(std::memory_order_acquire);
    const std::uint32_t s2 = c.park_seq.load(std::memory_order_relaxed);
    if (s1 == s2 && (s1 & 1) == 0) {
      now = mono_ns();
      const std::int64_t running = since != 0 && now > since ? now - since : 0;
      return static_cast<std::uint64_t>(total + running);
    }
    cpu_relax();
  }
}

}  // namespace

void register_pool_stats(pool_impl& p) {
  pool_list& l = pools();
  std::lock_guard lock(l.mutex);
  p.stats_id = l.next_id++;
  l.pools.push_back(&p);
}

void unregister_pool_stats(pool_impl& p) noexcept {
  pool_list& l = pools();
  std::lock_guard lock(l.mutex);
  std::erase(l.pools, &p);
}

void with_live_pools(const std::function<void(pool_impl&)>& f) {
  pool_list& l = pools();
  // lifetime: as in live_pool_stats, a pool stays alive while the lock is held.
  std::lock_guard lock(l.mutex);
  for (pool_impl* p : l.pools)
    f(*p);
}

}  // namespace detail

std::vector<pool_stats> live_pool_stats() {
  detail::pool_list& l = detail::pools();
  std::vector<pool_stats> out;
  // lifetime: a pool leaves the list before its destructor stops a worker, so every pool
  // and loop read here stays alive while the lock is held.
  std::lock_guard lock(l.mutex);
  out.reserve(l.pools.size());
  for (detail::pool_impl* p : l.pools) {
    pool_stats ps;
    ps.id = p->stats_id;
    ps.injection_depth = p->inject.size_hint();
    const unsigned nsub = p->submitter_count.load(std::memory_order_acquire);
    for (unsigned i = 0; i < nsub; ++i)
      if (detail::submitter_queue* q = p->submitter_slots[i].load(std::memory_order_acquire))
        ps.submitter_depth += q->deque.size_approx();
    ps.workers.reserve(p->workers.size());
    for (auto& wp : p->workers) {
      const detail::worker& w = *wp;
      worker_stats ws;
      ws.index = w.index;
      ws.tasks_run = w.counters.tasks_run;
      ws.steal_attempts = w.counters.steal_attempts;
      ws.steals = w.counters.steals;
      ws.parks = w.counters.parks;
      ws.wakeups = w.counters.wakeups;
      ws.stalls = w.counters.stalls.load(std::memory_order_relaxed);
      // The clock is read after the park snapshot, so it is at least any wake-up time the
      // snapshot holds (busy = uptime - parked then never runs backwards).
      std::int64_t now = 0;
      ws.parked_ns = detail::parked_so_far(w, now);
      // ordering: relaxed; the worker stored it once at start, a 0 means not started yet.
      const std::int64_t started = w.counters.started_ns.load(std::memory_order_relaxed);
      ws.uptime_ns = started != 0 && now > started ? static_cast<std::uint64_t>(now - started) : 0;
      ws.local_depth = w.deque.size_approx() +
                       (w.lifo.load(std::memory_order_relaxed) != nullptr ? 1 : 0);
      // ordering: acquire pairs with the worker's release store of its loop.
      if (event_loop* loop = w.loop_ptr.load(std::memory_order_acquire)) {
        ws.has_loop = true;
        ws.loop = loop->stats();
      }
      ps.workers.push_back(ws);
    }
    out.push_back(std::move(ps));
  }
  return out;
}

}  // namespace saturn
