// saturn-bench-observe: what observing a running pool costs (issue #31's targets for the
// task dump and the stall detector).
//
//   dump_1m         --tasks N (default 1,000,000) tasks spawned on a 2-worker pool, each
//                   suspended on one saturn::event; then dump_tasks() lists them all.
//                   wall_s: the whole dump; longest_pause_ms: the longest time the workers
//                   were held (the dump pauses them one batch of 4,096 tasks at a time);
//                   pauses. checksum: tasks the dump found with this file's spawn site —
//                   it must be N, or the sample fails. Targets: wall_s <= 1,
//                   longest_pause_ms <= 10.
//   stall_50ms      a task busy-loops 50 ms of wall time on a 1-worker pool while a
//                   stall_detector with a 10 ms threshold watches. report_late_ms: when
//                   the report arrived, after the loop began, less the threshold (median
//                   of the samples; max_late_ms the worst). Exactly one report per sample,
//                   else it fails. Target: report_late_ms <= 20.
//   stall_polite    a task busy-loops 1 ms slices for 300 ms, yielding between slices,
//                   under the same detector: any report fails the run (a task that
//                   suspends regularly is never reported). reports: 0.
//
// The figures are the median of --samples runs after --warmup.
#include <saturn/saturn.hpp>
#include <saturn/sched/stall.hpp>
#include <saturn/sched/task_dump.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"

namespace {

using saturn::task;
using clk = std::chrono::steady_clock;

task<int> wait_on(saturn::event& ev, std::atomic<int>& started) {
  started.fetch_add(1, std::memory_order_relaxed);
  auto r = co_await ev.wait();
  co_return r ? 1 : 0;
}

task<long> sum_all(std::vector<saturn::join_handle<int>> hs) {
  long n = 0;
  for (auto& h : hs)
    n += co_await std::move(h);
  co_return n;
}

bool spawned_here(const saturn::task_entry& e) {
  return e.has_site && std::strstr(e.site.file_name(), "observe/main.cpp") != nullptr;
}

void dump_1m(const bench::args& a, int tasks) {
  std::vector<double> walls, pauses_ms;
  std::size_t pauses = 0;
  long checksum = 0;
  for (int k = 0; k < a.warmup + a.samples; ++k) {
    saturn::thread_pool pool(saturn::pool_options{.threads = 2, .mode = saturn::pool_mode::cpu_bound});
    saturn::event ev;
    std::atomic<int> started{0};
    std::vector<saturn::join_handle<int>> hs;
    hs.reserve(static_cast<std::size_t>(tasks));
    for (int i = 0; i < tasks; ++i)
      hs.push_back(pool.spawn(wait_on(ev, started)));
    // A task is listed once it has run to its first suspension: wait until all have
    // (and a moment more, for the last ones to reach their await).
    const saturn::task_dump_options opts{.max_tasks = static_cast<std::size_t>(tasks) + 1000};
    const auto deadline = clk::now() + std::chrono::seconds(60);
    while (started.load(std::memory_order_relaxed) < tasks) {
      if (clk::now() > deadline)
        bench::fail("dump_1m: the tasks did not all start within 60 s");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::int64_t t0 = bench::now_ns();
    const saturn::task_dump d = saturn::dump_tasks(opts);
    const double wall = static_cast<double>(bench::now_ns() - t0) / 1e9;
    long found = 0;
    for (const auto& e : d.tasks)
      found += spawned_here(e) && e.state == saturn::task_state::waiting_sync;
    ev.set();
    const long ended = pool.block_on(sum_all(std::move(hs)));
    if (found != tasks || ended != tasks || d.truncated || d.unpaused_pools != 0)
      bench::fail("dump_1m: the dump found " + std::to_string(found) + " of " + std::to_string(tasks) +
                  " suspended tasks (" + std::to_string(ended) + " ended; truncated " + std::to_string(d.truncated) +
                  ", unpaused pools " + std::to_string(d.unpaused_pools) + ")");
    checksum = found;
    if (k >= a.warmup) {
      std::fprintf(stderr, "# saturn dump_1m sample %d: %.3f s, %zu pauses, longest %.3f ms\n", k - a.warmup, wall,
                   d.pauses, static_cast<double>(d.longest_pause_ns) / 1e6);
      walls.push_back(wall);
      pauses_ms.push_back(static_cast<double>(d.longest_pause_ns) / 1e6);
      pauses = d.pauses;
    }
  }
  bench::record("observe", "dump_1m", 2)
      .num("tasks", tasks)
      .num("wall_s", bench::median(walls), 4)
      .num("longest_pause_ms", bench::median(pauses_ms), 4)
      .num("max_pause_ms", *std::max_element(pauses_ms.begin(), pauses_ms.end()), 4)
      .num("pauses", static_cast<long long>(pauses))
      .num("checksum", checksum)
      .emit();
}

task<int> busy(std::chrono::milliseconds how_long, std::int64_t* began_ns) {
  *began_ns = bench::now_ns();
  bench::busy_wait_ns(std::chrono::nanoseconds(how_long).count());
  co_return 1;
}

task<int> polite(std::chrono::milliseconds how_long) {
  const auto until = clk::now() + how_long;
  int slices = 0;
  while (clk::now() < until) {
    bench::busy_wait_ns(1'000'000);
    co_await saturn::yield();
    ++slices;
  }
  co_return slices;
}

void stall(const bench::args& a, bool polite_task) {
  constexpr auto threshold = std::chrono::milliseconds(10);
  const std::string scenario = polite_task ? "stall_polite" : "stall_50ms";
  std::vector<double> late_ms;
  for (int k = 0; k < a.warmup + a.samples; ++k) {
    std::mutex m;
    std::vector<std::int64_t> reported_at;
    saturn::stall_detector det({.threshold = threshold, .on_stall = [&](const saturn::stall_report&) {
                                  std::lock_guard lock(m);
                                  reported_at.push_back(bench::now_ns());
                                }});
    saturn::thread_pool pool(saturn::pool_options{.threads = 1, .mode = saturn::pool_mode::cpu_bound});
    std::int64_t began = 0;
    const int r = polite_task ? pool.block_on(polite(std::chrono::milliseconds(300)))
                              : pool.block_on(busy(std::chrono::milliseconds(50), &began));
    std::lock_guard lock(m);
    if (polite_task) {
      if (!reported_at.empty() || r < 100)
        bench::fail(scenario + ": " + std::to_string(reported_at.size()) + " reports of a task that yielded " +
                    std::to_string(r) + " times");
      continue;
    }
    if (reported_at.size() != 1)
      bench::fail(scenario + ": " + std::to_string(reported_at.size()) + " reports of one 50 ms busy loop");
    const double late = static_cast<double>(reported_at[0] - began) / 1e6 - 10.0;
    if (k >= a.warmup) {
      std::fprintf(stderr, "# saturn %s sample %d: reported %.2f ms after the threshold\n", scenario.c_str(),
                   k - a.warmup, late);
      late_ms.push_back(late);
    }
  }
  auto rec = bench::record("observe", scenario, 1);
  rec.num("threshold_ms", 10);
  if (polite_task)
    rec.num("reports", 0).num("checksum", 0);
  else
    rec.num("report_late_ms", bench::median(late_ms), 4)
        .num("max_late_ms", *std::max_element(late_ms.begin(), late_ms.end()), 4)
        .num("checksum", static_cast<long long>(late_ms.size()));
  rec.emit();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"saturn observability benchmarks (task dump, stall detector)"};
  bench::args a;
  int tasks = 1'000'000;
  bench::add_common_flags(app, a, {"dump_1m", "stall_50ms", "stall_polite"});
  app.add_option("--tasks", tasks, "suspended tasks in dump_1m")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  if (a.wants("dump_1m"))
    dump_1m(a, tasks);
  if (a.wants("stall_50ms"))
    stall(a, false);
  if (a.wants("stall_polite"))
    stall(a, true);
  return 0;
}
