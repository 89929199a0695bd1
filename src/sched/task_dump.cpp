// dump_tasks: the live-task tables of every pool, read in batches while the pool's
// workers are paused.
//
// Pausing (per batch): the dumping thread places a pause point (a runnable) in each
// worker's inbox and wakes it; a worker that runs it counts itself arrived and sleeps on
// the gate's futex word until released. Once every worker has arrived, no task of the pool
// runs, so a recorded task's promise and frame can be read: they are neither resumed nor
// freed meanwhile (tasks only run, and end, on workers). A worker that does not arrive
// before the timeout (a task that does not return) is not waited for: the pool's tasks are
// then listed from the tables alone, which any thread may read. The gate is shared by the
// dumper and the pause points, so a late pause point finds it alive and already open.
// Single-threaded runtimes are dumped by the runtime layer's dumper (installed by the first
// runtime, src/task/runtime_dump.cpp) through the same entries.
#include <saturn/sched/task_dump.hpp>

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <coroutine>
#include <cstdio>
#include <ctime>
#include <memory>
#include <thread>
#include <unordered_map>

#include "sched/mono_clock.hpp"
#include "sched/pause_point.hpp"
#include "sched/pool_impl.hpp"

namespace saturn {
namespace detail {
namespace {

atomic<process_reader> g_process_reader{nullptr};
atomic<runtime_dumper> g_runtime_dumper{nullptr};

/// Holds every worker of `p` (but the calling one) until release(); paused() says
/// whether they all arrived within the timeout.
class pool_pause {
 public:
  pool_pause(pool_impl& p, std::chrono::milliseconds timeout) : m_gate(std::make_shared<pause_gate>()) {
    std::uint32_t expected = 0;
    for (auto& wp : p.workers) {
      worker& w = *wp;
      if (t_worker == &w)
        continue;  // the caller: it is running this code, so none of its tasks runs
      ++expected;
      // ordering: the inbox push is a seq_cst CAS; wake_worker orders it against a park.
      w.inbox.push(new pause_point(m_gate));
      p.wake_worker(w);
    }
    const std::int64_t deadline = mono_ns() + std::chrono::nanoseconds(timeout).count();
    while (m_gate->arrived.load(std::memory_order_acquire) < expected) {
      if (mono_ns() >= deadline)
        return;
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    m_paused = true;
    m_since = mono_ns();
  }
  pool_pause(const pool_pause&) = delete;
  pool_pause& operator=(const pool_pause&) = delete;
  ~pool_pause() { release(); }
  bool paused() const noexcept { return m_paused; }
  /// Lets the workers go; returns how long they were all held (0 if they were not).
  std::uint64_t release() noexcept {
    if (m_released)
      return 0;
    m_released = true;
    const std::int64_t held = m_paused ? mono_ns() - m_since : 0;
    m_gate->release();
    return static_cast<std::uint64_t>(held);
  }

 private:
  std::shared_ptr<pause_gate> m_gate;
  bool m_paused = false;
  bool m_released = false;
  std::int64_t m_since = 0;
};

/// The frame of a promise. The promise of every saturn task sits at the same offset from
/// its frame's start (two function pointers, rounded up to its alignment, at most 16), so
/// the handle of its base finds it.
const void* frame_of(promise_base* p) noexcept {
  return std::coroutine_handle<promise_base>::from_promise(*p).address();
}

/// What a paused task is doing, from its join word (and the joiner it names).
void read_state(promise_base* p, task_entry& e, const void*& joined_by, std::uint32_t mailbox_limit) {
  // ordering: relaxed; the workers are paused, whose pause points' release ordered their
  // writes before the dumper's acquire.
  const std::uint32_t j = p->m_join.load(std::memory_order_relaxed);
  if (j & join_process) {
    // ordering: acquire pairs with set_process_reader's release (the reader's code is static).
    if (process_reader r = g_process_reader.load(std::memory_order_acquire))
      r(p, mailbox_limit, e.process);
  }
  e.resume = *static_cast<void* const*>(e.task);  // the frame's first word: its resume function
  if (j & join_complete)
    e.state = task_state::finished;
  else if (j & wait_parked)
    e.state = task_state::waiting_sync;
  else
    e.state = task_state::suspended;
  if ((j & join_waiting) && !(j & join_complete) && p->m_continuation)
    joined_by = (j & join_foreign) != 0 ? frame_of(static_cast<promise_base*>(p->m_continuation.address()))
                                        : p->m_continuation.address();
}

struct dumper {
  const task_dump_options& opts;
  task_dump& out;
  std::int64_t now = coarse_mono_ns();
  std::unordered_map<const void*, const void*> joiner_of;  // joined frame -> joiner frame

  bool full() const noexcept { return out.tasks.size() >= opts.max_tasks; }

  void add(unsigned pool, unsigned worker, promise_base* p, std::uintptr_t site, std::int64_t born, bool read,
           unsigned runtime = ~0u) {
    if (full()) {
      out.truncated = true;
      return;
    }
    task_entry e;
    e.pool = pool;
    e.worker = worker;
    e.runtime = runtime;
    e.task = frame_of(p);
    if (site != 0) {
      e.has_site = true;
      e.site = std::bit_cast<saturn::spawn_site>(site);
    }
    e.age_ns = born != 0 && now > born ? static_cast<std::uint64_t>(now - born) : 0;
    if (read) {
      const void* joiner = nullptr;
      read_state(p, e, joiner, opts.mailbox_count_limit);
      if (joiner != nullptr)
        joiner_of[e.task] = joiner;
    }
    out.tasks.push_back(e);
  }

  void dump_pool(pool_impl& p) {
    ++out.pools;
    std::vector<std::uint32_t> cursor(p.workers.size(), 0);
    bool foreign_done = false;
    // Grow the output before pausing: a reallocation inside a pause would hold the workers.
    std::size_t recorded = 0;
    for (auto& wp : p.workers)
      recorded += wp->live.size();
    out.tasks.reserve(std::min(opts.max_tasks, out.tasks.size() + recorded + 64));
    for (;;) {
      bool more = false;
      for (std::size_t i = 0; i < p.workers.size(); ++i)
        more |= cursor[i] < p.workers[i]->live.size();
      if ((!more && foreign_done) || full())
        break;
      pool_pause pause(p, opts.pause_timeout);
      ++out.pauses;
      const bool read = pause.paused();
      if (!read) {
        ++out.unpaused_pools;
        pause.release();
      }
      std::uint32_t budget = read ? opts.batch : ~std::uint32_t{0};
      if (!foreign_done) {
        foreign_done = true;
        std::lock_guard lock(p.foreign_live);
        for (promise_base* t : p.foreign_live.items)
          add(p.stats_id, ~0u, t, 0, 0, read);
      }
      for (std::size_t i = 0; i < p.workers.size() && budget != 0 && !full(); ++i) {
        live_slots& ls = p.workers[i]->live;
        const std::uint32_t from = cursor[i];
        cursor[i] = ls.for_each_recorded(from, budget, [&](std::uint32_t, promise_base* t, std::uintptr_t site,
                                                          std::int64_t born) {
          add(p.stats_id, static_cast<unsigned>(i), t, site, born, read);
        });
        budget -= std::min(budget, cursor[i] - from);
      }
      out.longest_pause_ns = std::max(out.longest_pause_ns, pause.release());
      if (!read) {
        // Without a pause the tables were read whole; state stays unknown.
        for (auto& e : out.tasks)
          if (e.pool == p.stats_id)
            e.state = task_state::unknown;
        break;
      }
    }
  }

  /// The entries of the single-threaded runtimes' tasks (see runtime_visit).
  struct runtime_sink final : runtime_visit {
    dumper& d;
    explicit runtime_sink(dumper& dd) : d(dd) {}
    bool full() const noexcept override { return d.full(); }
    // Grow the output before pausing: a reallocation inside a pause would hold the runtime.
    void expect(std::size_t tasks) override {
      d.out.tasks.reserve(std::min(d.opts.max_tasks, d.out.tasks.size() + tasks + 64));
    }
    void task(unsigned runtime, promise_base* p) override { d.add(0, ~0u, p, 0, 0, true, runtime); }
    void runtime_seen(bool paused) override {
      ++d.out.runtimes;
      if (!paused)
        ++d.out.unpaused_runtimes;
    }
    void paused(std::uint64_t held_ns) override {
      ++d.out.pauses;
      d.out.longest_pause_ns = std::max(d.out.longest_pause_ns, held_ns);
    }
  };

  void link_joins() {
    std::unordered_map<const void*, std::size_t> index;
    index.reserve(out.tasks.size());
    for (std::size_t i = 0; i < out.tasks.size(); ++i)
      index.emplace(out.tasks[i].task, i);
    for (const auto& [joined, joiner] : joiner_of) {
      auto it = index.find(joiner);
      if (it != index.end() && out.tasks[it->second].state == task_state::suspended) {
        out.tasks[it->second].state = task_state::joining;
        out.tasks[it->second].awaits = joined;
      }
    }
  }
};

}  // namespace
}  // namespace detail

void detail::set_runtime_dumper(runtime_dumper d) noexcept {
  // ordering: release pairs with dump_tasks's acquire load.
  detail::g_runtime_dumper.store(d, std::memory_order_release);
}

void detail::set_process_reader(process_reader r) noexcept {
  // ordering: release pairs with the dumper's acquire load.
  detail::g_process_reader.store(r, std::memory_order_release);
}

const char* task_state_name(task_state s) noexcept {
  switch (s) {
    case task_state::suspended:
      return "suspended";
    case task_state::waiting_sync:
      return "waiting on a sync primitive";
    case task_state::joining:
      return "joining";
    case task_state::finished:
      return "finished, not joined";
    case task_state::unknown:
      break;
  }
  return "state unknown";
}

task_dump dump_tasks(const task_dump_options& opts) {
  task_dump out;
  detail::dumper d{opts, out, detail::coarse_mono_ns(), {}};
  detail::with_live_pools([&](detail::pool_impl& p) { d.dump_pool(p); });
  // ordering: acquire pairs with set_runtime_dumper's release (the dumper's code is static).
  if (detail::runtime_dumper rd = detail::g_runtime_dumper.load(std::memory_order_acquire)) {
    detail::dumper::runtime_sink sink(d);
    rd(opts, sink);
  }
  d.link_joins();
  std::stable_sort(out.tasks.begin(), out.tasks.end(),
                   [](const task_entry& a, const task_entry& b) { return a.age_ns > b.age_ns; });
  return out;
}

std::string render_task_dump(const task_dump& d) {
  std::string s;
  char line[512];
  char runtimes[48] = "";
  if (d.runtimes != 0)
    std::snprintf(runtimes, sizeof runtimes, " and %u runtimes", d.runtimes);
  std::snprintf(line, sizeof line, "saturn task dump: %zu tasks in %u pools%s%s (%zu pauses, longest %.3f ms)\n",
                d.tasks.size(), d.pools, runtimes, d.truncated ? " (truncated)" : "", d.pauses,
                double(d.longest_pause_ns) / 1e6);
  s.append(line);
  if (d.unpaused_runtimes != 0) {
    std::snprintf(line, sizeof line,
                  "note: %u runtimes did not pause in time (not inside block_on, or a task runs without returning); "
                  "their tasks are not listed\n",
                  d.unpaused_runtimes);
    s.append(line);
  }
  if (d.unpaused_pools != 0) {
    std::snprintf(line, sizeof line,
                  "note: %u pools did not pause in time (a worker runs without returning); their tasks' state is unknown\n",
                  d.unpaused_pools);
    s.append(line);
  }
  for (const task_entry& e : d.tasks) {
    char worker[16];
    if (e.worker == ~0u)
      std::snprintf(worker, sizeof worker, "-");
    else
      std::snprintf(worker, sizeof worker, "%u", e.worker);
    int n = e.runtime != ~0u
                ? std::snprintf(line, sizeof line, "task %p runtime %u %s", e.task, e.runtime, task_state_name(e.state))
                : std::snprintf(line, sizeof line, "task %p pool %u worker %s age %.3fs %s", e.task, e.pool, worker,
                                double(e.age_ns) / 1e9, task_state_name(e.state));
    s.append(line, static_cast<std::size_t>(std::clamp(n, 0, int(sizeof line) - 1)));
    if (e.awaits != nullptr) {
      n = std::snprintf(line, sizeof line, " %p", e.awaits);
      s.append(line, static_cast<std::size_t>(std::clamp(n, 0, int(sizeof line) - 1)));
    }
    if (e.process.valid) {
      const process_facts& f = e.process;
      n = std::snprintf(line, sizeof line, " process <%" PRIu32 ".%" PRIu32 ">%s%s, mailbox %s%" PRIu32, f.index,
                        f.generation, f.in_receive ? " in receive" : "", f.trap_exits ? " trapping exits" : "",
                        f.mailbox_capped ? "over " : "", f.mailbox);
      s.append(line, static_cast<std::size_t>(std::clamp(n, 0, int(sizeof line) - 1)));
      if (f.capacity != 0) {
        n = std::snprintf(line, sizeof line, " of %" PRIu32, f.capacity);
        s.append(line, static_cast<std::size_t>(std::clamp(n, 0, int(sizeof line) - 1)));
      }
      n = std::snprintf(line, sizeof line, ", %" PRIu32 " link%s, %" PRIu32 " monitor%s", f.links, f.links == 1 ? "" : "s",
                        f.monitors, f.monitors == 1 ? "" : "s");
      s.append(line, static_cast<std::size_t>(std::clamp(n, 0, int(sizeof line) - 1)));
    }
    if (e.has_site) {
      n = std::snprintf(line, sizeof line, " spawned at %s:%" PRIuLEAST32 " (%s)", e.site.file_name(), e.site.line(),
                        e.site.function_name());
      s.append(line, static_cast<std::size_t>(std::clamp(n, 0, int(sizeof line) - 1)));
    }
    if (e.resume != nullptr) {
      n = std::snprintf(line, sizeof line, " resume %p", e.resume);
      s.append(line, static_cast<std::size_t>(std::clamp(n, 0, int(sizeof line) - 1)));
    }
    s.push_back('\n');
  }
  return s;
}

}  // namespace saturn
