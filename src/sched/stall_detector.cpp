// stall_detector: a watchdog thread sampling each worker's progress word (see
// saturn/sched/stall.hpp and worker::counters_t::progress). Per worker it remembers the
// last odd word seen and when it first saw it; the same odd word still there `threshold`
// later is a stall, reported once. The watchdog only reads the workers' counter lines
// (one cache miss per worker per period) and never wakes a worker. A run seen in more than
// one sample also has its thread's CPU time and state read from /proc (thread_times.hpp),
// so time the kernel kept the worker off the CPU does not count towards the threshold.
#include <saturn/sched/stall.hpp>

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "sched/mono_clock.hpp"
#include "sched/pool_impl.hpp"
#include "sched/thread_times.hpp"

namespace saturn {

namespace {

using detail::mono_ns;

struct seen {
  std::uint64_t progress = 0;  // the odd word last seen (0: none)
  std::int64_t since = 0;      // when it was first seen
  std::int64_t last_look = 0;  // the sample before this one
  std::int64_t cpu_base = -1;  // the thread's CPU time when the run was first seen (-1: unknown)
  std::int64_t blocked = 0;    // sampled time the thread spent blocked in the kernel since
  bool reported = false;
};

/// What the watchdog keeps per worker.
struct watched {
  seen last;
  detail::thread_times times;
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
  if (r.preempted_ns >= 100'000) {
    n = std::snprintf(line, sizeof line, " (%.1f ms of it preempted)", double(r.preempted_ns) / 1e6);
    s.append(line, static_cast<std::size_t>(n < 0 ? 0 : std::min(n, int(sizeof line) - 1)));
  }
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
  std::map<std::pair<unsigned, unsigned>, watched> workers;  // (pool id, worker) -> last look
  std::thread thread;

  void sample() {
    const std::int64_t now = mono_ns();
    const std::int64_t threshold = opts.threshold.count();
    std::vector<stall_report> found;
    detail::with_live_pools([&](detail::pool_impl& p) {
      for (auto& wp : p.workers) {
        detail::worker& w = *wp;
        watched& ww = workers[{p.stats_id, w.index}];
        seen& s = ww.last;
        const std::uint64_t prog = w.counters.progress.value();
        // ordering: relaxed; the id of the thread, written once before its first run.
        const int tid = w.counters.os_tid.load(std::memory_order_relaxed);
        if ((prog & 1) == 0) {
          s = seen{};
          continue;
        }
        if (prog != s.progress) {
          // A run seen for the first time.
          s = seen{prog, now, now, ww.times.cpu_ns(tid), 0, false};
          continue;
        }
        if (s.reported)
          continue;
        // The same run as at the last look: count the time since as blocked if the thread
        // is blocked in the kernel now (a sample per period, so accurate to a period).
        if (s.cpu_base >= 0 && ww.times.blocked(tid))
          s.blocked += now - s.last_look;
        s.last_look = now;
        if (now - s.since < threshold)
          continue;
        // What the task held the worker for: its CPU time and the time it was blocked,
        // not the time its thread was runnable without a CPU (preempted).
        std::int64_t held = now - s.since;
        if (s.cpu_base >= 0) {
          const std::int64_t cpu = ww.times.cpu_ns(tid);
          if (cpu >= s.cpu_base)
            held = std::min(held, cpu - s.cpu_base + s.blocked);
        }
        if (held < threshold)
          continue;
        s.reported = true;
        stall_report r;
        r.pool = p.stats_id;
        r.worker = w.index;
        r.held_ns = static_cast<std::uint64_t>(now - s.since);
        r.preempted_ns = static_cast<std::uint64_t>(now - s.since - held);
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
