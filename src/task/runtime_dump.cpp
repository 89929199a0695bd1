// The task dump's part for single-threaded runtimes (saturn/sched/task_dump.hpp): each
// live runtime is paused through its loop (a pause point posted from outside, run by the
// runtime's thread inside block_on) and its live-task table is read in batches while it
// sleeps at the gate. A runtime that does not pause within the timeout (its thread is not
// inside block_on, or runs a task that does not return) is not read at all: its table is
// a plain vector its thread may be changing. The dumping thread that is the runtime's own
// reads the table directly (none of the runtime's tasks runs while it does).
//
// Between batches the table may change (a task that ends moves the last one into its
// slot), so a task can be missed; none is listed twice (the frames seen are kept).
#include <saturn/sched/task_dump.hpp>
#include <saturn/task/runtime.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>
#include <thread>
#include <unordered_set>

#include "sched/mono_clock.hpp"
#include "sched/pause_point.hpp"

namespace saturn::detail {

struct runtime_access {
  static const live_table& live(const runtime& r) noexcept { return r.m_live; }
  static event_loop& loop(runtime& r) noexcept { return r.m_loop; }
};

/// Calls f on every live runtime, under the lock they register under (src/task/runtime_stats.cpp).
void with_live_runtimes(void (*f)(runtime&, void*), void* ctx);

namespace {

struct job {
  const task_dump_options& opts;
  runtime_visit& v;
};

/// Waits for the one pause point of `gate` until the deadline; true if it arrived.
bool arrived_by(const pause_gate& gate, std::chrono::milliseconds timeout) {
  const std::int64_t deadline = mono_ns() + std::chrono::nanoseconds(timeout).count();
  // ordering: acquire pairs with the pause point's release: the runtime's work is visible.
  while (gate.arrived.load(std::memory_order_acquire) == 0) {
    if (mono_ns() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  return true;
}

void dump_one(runtime& rt, void* ctx) {
  job& j = *static_cast<job*>(ctx);
  const unsigned id = rt.stats_id();
  const live_table& live = runtime_access::live(rt);
  if (scheduler::current() == &rt) {
    // The caller is this runtime's thread: it runs this code, so none of its tasks runs.
    j.v.expect(live.size());
    for (std::size_t i = 0; i < live.size() && !j.v.full(); ++i)
      j.v.task(id, live.at(i));
    j.v.runtime_seen(true);
    return;
  }
  j.v.expect(live.size_hint());
  std::unordered_set<const promise_base*> seen;
  seen.reserve(live.size_hint() + 64);
  const std::size_t batch = std::max<std::size_t>(1, j.opts.batch);
  std::size_t cursor = 0;
  for (;;) {
    auto gate = std::make_shared<pause_gate>();
    runtime_access::loop(rt).post_remote(new pause_point(gate));
    if (!arrived_by(*gate, j.opts.pause_timeout)) {
      gate->release();  // a late pause point passes straight through
      j.v.runtime_seen(false);
      return;
    }
    const std::int64_t since = mono_ns();
    const std::size_t n = live.size();
    const std::size_t end = std::min(n, cursor + batch);
    for (std::size_t i = cursor; i < end && !j.v.full(); ++i)
      if (seen.insert(live.at(i)).second)
        j.v.task(id, live.at(i));
    cursor = end;
    const std::int64_t held = mono_ns() - since;
    gate->release();
    j.v.paused(static_cast<std::uint64_t>(held));
    if (cursor >= n || j.v.full())
      break;
  }
  j.v.runtime_seen(true);
}

void dump_runtimes(const task_dump_options& opts, runtime_visit& v) {
  job j{opts, v};
  with_live_runtimes(&dump_one, &j);
}

}  // namespace

void install_runtime_dumper() noexcept { set_runtime_dumper(&dump_runtimes); }

}  // namespace saturn::detail
