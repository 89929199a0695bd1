// stall_detector: a watchdog thread sampling each worker's progress word (see
// saturn/sched/stall.hpp and worker::counters_t::progress). Per worker it remembers the
// last odd word seen and when it first saw it; the same odd word still there `threshold`
// later is a stall, reported once. The watchdog only reads the workers' counter lines
// (one cache miss per worker per period) and never wakes a worker.
#include <saturn/sched/stall.hpp>

#include <bit>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "sched/pool_impl.hpp"

namespace saturn {

namespace {

std::int64_t mono_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct seen {
  std::uint64_t progress = 0;  // the odd word last seen (0: none)
  std::int64_t since = 0;      // when it was first seen
  bool reported = false;
};

/// The spawned task recorded in `p`'s tables whose promise is `r`, found by a scan of the
/// tables (atomic reads only; `r` itself is not read, it may be any runnable).
void find_task(detail::pool_impl& p, const void* r, stall_report& rep) {
  for (auto& wp : p.workers) {
    bool found = false;
    wp->live.for_each_recorded(0, ~std::uint32_t{0}, [&](std::uint32_t, detail::promise_base* t, std::uintptr_t site,
                                                          std::int64_t) {
      if (found || static_cast<const runnable*>(t) != r)
        return;
      found = true;
      rep.task = std::coroutine_handle<detail::promise_base>::from_promise(*t).address();
      if (site != 0) {
        rep.has_site = true;
        rep.site = std::bit_cast<saturn::spawn_site>(site);
      }
    });
    if (found)
      return;
  }
}

}  // namespace

std::string describe(const stall_report& r) {
  char line[768];
  int n = std::snprintf(line, sizeof line,
                        "saturn: stall: pool %u worker %u has run one %s for %.1f ms without returning to its loop", r.pool,
                        r.worker, r.runnable != nullptr ? "task step" : "turn of event-loop callbacks",
                        double(r.held_ns) / 1e6);
  std::string s(line, static_cast<std::size_t>(n < 0 ? 0 : std::min(n, int(sizeof line) - 1)));
  if (r.task != nullptr && r.has_site)
    n = std::snprintf(line, sizeof line, " (task %p spawned at %s:%" PRIuLEAST32 " (%s))", r.task, r.site.file_name(),
                      r.site.line(), r.site.function_name());
  else if (r.task != nullptr)
    n = std::snprintf(line, sizeof line, " (task %p)", r.task);
  else if (r.runnable != nullptr)
    n = std::snprintf(line, sizeof line, " (runnable %p: not a spawned task's own step, e.g. a child task or a posted callable)",
                      r.runnable);
  else
    n = 0;
  s.append(line, static_cast<std::size_t>(n < 0 ? 0 : std::min(n, int(sizeof line) - 1)));
  return s;
}

struct stall_detector::state {
  stall_options opts;
  std::mutex mutex;
  std::condition_variable cv;
  bool stop = false;
  detail::atomic<std::uint64_t> reported{0};
  std::map<std::pair<unsigned, unsigned>, seen> workers;  // (pool id, worker) -> last look
  std::thread thread;

  void sample() {
    const std::int64_t now = mono_ns();
    const std::int64_t threshold = opts.threshold.count();
    std::vector<stall_report> found;
    detail::with_live_pools([&](detail::pool_impl& p) {
      for (auto& wp : p.workers) {
        detail::worker& w = *wp;
        seen& s = workers[{p.stats_id, w.index}];
        const std::uint64_t prog = w.counters.progress.value();
        if ((prog & 1) == 0 || prog != s.progress) {
          s = seen{(prog & 1) != 0 ? prog : 0, now, false};
          continue;
        }
        if (s.reported || now - s.since < threshold)
          continue;
        s.reported = true;
        stall_report r;
        r.pool = p.stats_id;
        r.worker = w.index;
        r.held_ns = static_cast<std::uint64_t>(now - s.since);
        // ordering: relaxed; written before the odd progress word this sample matched.
        r.runnable = w.counters.running.load(std::memory_order_relaxed);
        if (r.runnable != nullptr)
          find_task(p, r.runnable, r);
        // A rare event: one relaxed RMW (several detectors may count at once).
        w.counters.stalls.fetch_add(1, std::memory_order_relaxed);
        found.push_back(r);
      }
    });
    // Reported outside the pools' lock: a callback may read live_pool_stats().
    for (const stall_report& r : found) {
      reported.fetch_add(1, std::memory_order_relaxed);
      if (opts.on_stall) {
        opts.on_stall(r);
      } else {
        std::string line = describe(r);
        line.push_back('\n');
        std::fputs(line.c_str(), stderr);
      }
    }
  }

  void run() {
    std::chrono::nanoseconds period = opts.period;
    if (period.count() <= 0)
      period = std::clamp<std::chrono::nanoseconds>(opts.threshold / 4, std::chrono::milliseconds(1),
                                                    std::chrono::milliseconds(25));
    std::unique_lock lock(mutex);
    while (!stop) {
      cv.wait_for(lock, period, [&] { return stop; });
      if (stop)
        break;
      lock.unlock();
      sample();
      lock.lock();
    }
  }
};

stall_detector::stall_detector(stall_options opts) : m_state(std::make_unique<state>()) {
  m_state->opts = std::move(opts);
  m_state->thread = std::thread([s = m_state.get()] { s->run(); });
}

stall_detector::~stall_detector() {
  {
    std::lock_guard lock(m_state->mutex);
    m_state->stop = true;
  }
  m_state->cv.notify_one();
  m_state->thread.join();
}

std::uint64_t stall_detector::reported() const noexcept {
  return m_state->reported.load(std::memory_order_relaxed);
}

}  // namespace saturn
