// stall_detector: a task that blocks its worker for 300 ms is reported once, with its
// pool, worker, spawn site and a held time past the threshold; a task that suspends
// regularly is never reported; the worker's stalls counter counts the report.
#include <gtest/gtest.h>
#include <saturn/saturn.hpp>
#include <saturn/sched/pool_stats.hpp>
#include <saturn/sched/stall.hpp>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

saturn::task<int> hog(std::chrono::milliseconds how_long) {
  const auto until = std::chrono::steady_clock::now() + how_long;
  while (std::chrono::steady_clock::now() < until) {
  }
  co_return 1;
}

/// A busy loop until the calling thread has used `cpu` of CPU time (not wall time: on a
/// loaded machine the worker gets a fraction of a CPU, and the detector counts only the
/// time it ran); `*wall` gets how long that took.
saturn::task<int> hog_cpu(std::chrono::milliseconds cpu, std::chrono::nanoseconds* wall) {
  const auto t0 = std::chrono::steady_clock::now();
  auto thread_cpu = [] {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
  };
  const auto until = thread_cpu() + cpu;
  while (thread_cpu() < until) {
  }
  *wall = std::chrono::steady_clock::now() - t0;
  co_return 1;
}

saturn::task<int> polite(std::chrono::milliseconds how_long) {
  const auto until = std::chrono::steady_clock::now() + how_long;
  int n = 0;
  while (std::chrono::steady_clock::now() < until) {
    const auto slice = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
    while (std::chrono::steady_clock::now() < slice) {
    }
    co_await saturn::yield();
    ++n;
  }
  co_return n;
}

saturn::task<int> join_int(saturn::join_handle<int> h) {
  const int v = co_await std::move(h);
  co_return v;
}

struct collected {
  std::mutex m;
  std::vector<saturn::stall_report> reports;
  std::vector<std::uint64_t> when_ns;
};

std::uint64_t stalls_of(unsigned pool_id) {
  std::uint64_t n = 0;
  for (const auto& p : saturn::live_pool_stats())
    if (p.id == pool_id)
      for (const auto& w : p.workers)
        n += w.stalls;
  return n;
}

TEST(stall_detector, reports_a_blocked_worker_once) {
  for (auto mode : {saturn::pool_mode::cpu_bound, saturn::pool_mode::io}) {
    collected c;
    const auto t0 = std::chrono::steady_clock::now();
    saturn::stall_detector det({.threshold = std::chrono::milliseconds(50), .on_stall = [&](const saturn::stall_report& r) {
                                  std::lock_guard lock(c.m);
                                  c.reports.push_back(r);
                                  c.when_ns.push_back(std::uint64_t(
                                      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
                                          .count()));
                                }});
    saturn::thread_pool pool(saturn::pool_options{.threads = 2, .mode = mode});
    std::chrono::nanoseconds wall{0};
    const unsigned line = __LINE__ + 1;
    auto h = pool.spawn(hog_cpu(std::chrono::milliseconds(300), &wall));
    EXPECT_EQ(pool.block_on(join_int(std::move(h))), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    std::lock_guard lock(c.m);
    ASSERT_EQ(c.reports.size(), 1u);
    const saturn::stall_report& r = c.reports[0];
    EXPECT_LT(r.worker, 2u);
    EXPECT_GE(r.held_ns, 50'000'000u);
    EXPECT_LT(r.held_ns, std::uint64_t(wall.count()));  // reported while it ran, not after
    ASSERT_TRUE(r.has_site) << saturn::describe(r);
    EXPECT_EQ(r.site.line(), line);
    EXPECT_NE(r.task, nullptr);
    const std::string text = saturn::describe(r);
    EXPECT_NE(text.find("stall_detector_test.cpp"), std::string::npos) << text;
    EXPECT_NE(text.find("without returning"), std::string::npos) << text;
    EXPECT_EQ(det.reported(), 1u);
    bool found_pool = false;
    for (const auto& p : saturn::live_pool_stats())
      found_pool |= p.id == r.pool;
    EXPECT_TRUE(found_pool);
    EXPECT_EQ(stalls_of(r.pool), 1u);
  }
}

TEST(stall_detector, never_reports_a_task_that_suspends) {
  std::atomic<int> reports{0};
  // 50 ms: on a loaded machine a step can also block briefly (a page fault, the
  // allocator), and blocked time counts (see docs/observability.md).
  saturn::stall_detector det({.threshold = std::chrono::milliseconds(50),
                              .on_stall = [&](const saturn::stall_report& r) {
                                reports.fetch_add(1);
                                ADD_FAILURE() << saturn::describe(r);
                              }});
  saturn::thread_pool pool(saturn::pool_options{.threads = 2, .mode = saturn::pool_mode::cpu_bound});
  auto a = pool.spawn(polite(std::chrono::milliseconds(300)));
  auto b = pool.spawn(polite(std::chrono::milliseconds(300)));
  auto both = [&]() -> saturn::task<int> {
    const int x = co_await std::move(a);
    const int y = co_await std::move(b);
    co_return x + y;
  };
  // Each yields once a millisecond of its 300 ms (far fewer slices when the machine is
  // loaded and the workers get a fraction of a CPU).
  EXPECT_GT(pool.block_on(both()), 10);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(reports.load(), 0);
  EXPECT_EQ(det.reported(), 0u);
}

TEST(stall_detector, detects_within_the_period_of_the_threshold) {
  // A busy loop of 100 ms of CPU with a 10 ms threshold: reported by 10 ms + one period
  // (2.5 ms) of its running time after it began, give or take scheduling; checked loosely
  // (30 ms) on a shared machine, where the watchdog itself waits for a CPU. Time the
  // worker was preempted is not counted, so it is taken off here too.
  std::mutex m;
  std::vector<std::uint64_t> held;
  saturn::stall_detector det({.threshold = std::chrono::milliseconds(10), .on_stall = [&](const saturn::stall_report& r) {
                                std::lock_guard lock(m);
                                held.push_back(r.held_ns - std::min(r.held_ns, r.preempted_ns));
                              }});
  saturn::thread_pool pool(saturn::pool_options{.threads = 1, .mode = saturn::pool_mode::cpu_bound});
  std::chrono::nanoseconds wall{0};
  EXPECT_EQ(pool.block_on(hog_cpu(std::chrono::milliseconds(100), &wall)), 1);
  std::lock_guard lock(m);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_GE(held[0], 10'000'000u);
  EXPECT_LT(held[0], 40'000'000u);
}

/// A busy loop of `how_long` on a worker pinned to CPU 0, with `spinners` threads
/// pinned there too: the worker gets about 1 / (spinners + 1) of the CPU.
saturn::task<int> crowded_hog(std::chrono::milliseconds how_long, int spinners) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  cpu_set_t before;
  ::sched_getaffinity(0, sizeof before, &before);
  ::sched_setaffinity(0, sizeof one, &one);
  std::atomic<bool> stop{false};
  std::atomic<int> spinning{0};
  std::vector<std::thread> crowd;
  for (int i = 0; i < spinners; ++i)
    crowd.emplace_back([&] {
      ::sched_setaffinity(0, sizeof one, &one);
      spinning.fetch_add(1);
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  // Every spinner on the CPU before the busy loop starts (thread start is slow under
  // ThreadSanitizer).
  while (spinning.load() < spinners) {
  }
  const int r = co_await hog(how_long);
  stop.store(true);
  for (auto& t : crowd)
    t.join();
  ::sched_setaffinity(0, sizeof before, &before);
  co_return r;
}

saturn::task<int> blocked_in_a_system_call(std::chrono::milliseconds how_long) {
  std::this_thread::sleep_for(how_long);  // blocks the worker: no CPU, but not preempted
  co_return 2;
}

TEST(stall_detector, does_not_count_time_the_worker_was_preempted) {
#if defined(SATURN_TSAN)
  // Under ThreadSanitizer the pinned worker still got about two thirds of the shared CPU
  // against 11 pinned spinners (measured; not understood), so the crowd does not crowd.
  GTEST_SKIP() << "the crowded CPU this test needs does not hold under ThreadSanitizer";
#endif
  if (::access("/proc/self/schedstat", R_OK) != 0)
    GTEST_SKIP() << "this kernel has no schedstat: the threshold is wall time";
  // 150 ms of wall time for the busy loop, of which the worker runs about a twelfth: far
  // past the 80 ms threshold in wall time, well under it in time not preempted.
  std::atomic<int> reports{0};
  saturn::stall_detector det({.threshold = std::chrono::milliseconds(80), .on_stall = [&](const saturn::stall_report& r) {
                                reports.fetch_add(1);
                                ADD_FAILURE() << saturn::describe(r);
                              }});
  saturn::thread_pool pool(saturn::pool_options{.threads = 1, .mode = saturn::pool_mode::cpu_bound});
  EXPECT_EQ(pool.block_on(crowded_hog(std::chrono::milliseconds(150), 11)), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(reports.load(), 0);
}

TEST(stall_detector, counts_time_blocked_in_a_system_call) {
  std::mutex m;
  std::vector<saturn::stall_report> got;
  saturn::stall_detector det({.threshold = std::chrono::milliseconds(40), .on_stall = [&](const saturn::stall_report& r) {
                                std::lock_guard lock(m);
                                got.push_back(r);
                              }});
  saturn::thread_pool pool(saturn::pool_options{.threads = 1, .mode = saturn::pool_mode::cpu_bound});
  EXPECT_EQ(pool.block_on(blocked_in_a_system_call(std::chrono::milliseconds(200))), 2);
  std::lock_guard lock(m);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_GE(got[0].held_ns, 40'000'000u);
  EXPECT_LT(got[0].preempted_ns, got[0].held_ns / 2) << saturn::describe(got[0]);
}

}  // namespace
