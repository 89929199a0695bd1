// A thread_pool under the simulator (src/sched/sim_pool.hpp): its workers are stepped on
// the world's thread in a seed-chosen order, so a multi-worker run is a function of its
// seed; deadlocks are reported; timers on any worker's loop move virtual time.
#include <saturn/sched/pool_stats.hpp>
#include <saturn/sched/thread_pool.hpp>
#include <saturn/sim/run.hpp>
#include <saturn/task.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "sim/seeds.hpp"

using namespace std::chrono_literals;
using saturn::task;
namespace sim = saturn::sim;

namespace {

/// Which worker ran each of a program's steps, in order (one run's schedule).
struct schedule_log {
  std::vector<unsigned> workers;
};

task<void> logged_leaf(schedule_log* log, int hops) {
  auto* pool = dynamic_cast<saturn::thread_pool*>(saturn::scheduler::current());
  for (int i = 0; i < hops; ++i) {
    if (pool != nullptr)
      log->workers.push_back(pool->worker_index().value_or(99));
    co_await saturn::yield();
  }
}

task<void> logged_program(schedule_log* log) {
  std::vector<saturn::join_handle<void>> hs;
  for (int i = 0; i < 16; ++i)
    hs.push_back(saturn::spawn(logged_leaf(log, 4)));
  for (auto& h : hs)
    co_await h;
}

sim::outcome run_logged(std::uint64_t seed, schedule_log& log, unsigned workers) {
  return sim::run(
      seed, {}, [&log](sim::world&) { return logged_program(&log); }, sim::default_pool_options(workers));
}

TEST(SimPool, SameSeedSameScheduleOtherSeedsDiffer) {
  std::set<std::vector<unsigned>> schedules;
  std::set<unsigned> used;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    schedule_log a, b;
    sim::outcome oa = run_logged(seed, a, 3);
    sim::outcome ob = run_logged(seed, b, 3);
    ASSERT_TRUE(oa.ok) << oa.failure;
    ASSERT_TRUE(ob.ok) << ob.failure;
    EXPECT_EQ(a.workers, b.workers) << "seed " << seed << ": the same seed must give the same schedule";
    EXPECT_EQ(oa.trace_hash, ob.trace_hash) << "seed " << seed;
    ASSERT_EQ(a.workers.size(), 64u);
    schedules.insert(a.workers);
    used.insert(a.workers.begin(), a.workers.end());
  }
  EXPECT_GE(schedules.size(), 10u) << "different seeds should interleave the workers differently";
  EXPECT_EQ(used, (std::set<unsigned>{0, 1, 2})) << "every worker should run tasks (stolen from the spawner)";
}

task<void> sleeps_on_every_worker(sim::world&) {
  std::vector<saturn::join_handle<void>> hs;
  for (int i = 0; i < 6; ++i)
    hs.push_back(saturn::spawn([](int k) -> task<void> { co_await saturn::sleep_for(std::chrono::minutes(10 * k)); }(i + 1)));
  for (auto& h : hs)
    co_await h;
}

task<void> spin_yields(int n) {
  for (int i = 0; i < n; ++i)
    co_await saturn::yield();
}

/// Idle spells (every worker asleep while the program sleeps) followed by bursts of work:
/// the simulated workers go through the real park and wake-up, and the program reads
/// their counters before it ends.
task<void> park_wake_program(std::uint64_t* parks, std::uint64_t* wakeups) {
  for (int round = 0; round < 20; ++round) {
    co_await saturn::sleep_for(100us);
    std::vector<saturn::join_handle<void>> hs;
    for (int i = 0; i < 3; ++i)
      hs.push_back(saturn::spawn(spin_yields(4)));
    for (auto& h : hs)
      co_await h;
  }
  for (const auto& p : saturn::live_pool_stats())
    for (const auto& w : p.workers) {
      *parks += w.parks;
      *wakeups += w.wakeups;
    }
}

TEST(SimPool, WorkersParkAndAreWokenForNewWork) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::uint64_t parks = 0, wakeups = 0;
    sim::outcome o = sim::run(
        seed, {}, [&](sim::world&) { return park_wake_program(&parks, &wakeups); }, sim::default_pool_options(3));
    ASSERT_TRUE(o.ok) << "seed " << seed << ": " << o.failure;
    // 20 idle spells of 3 workers: each spell parks every worker that is not running the
    // program's sleep; the bursts need sleepers woken (notify_one) to spread.
    EXPECT_GE(parks, 20u) << "seed " << seed;  // about 50 seen
    EXPECT_GE(wakeups, 10u) << "seed " << seed;  // about 30 seen
  }
}

TEST(SimPool, TimersOnAnyWorkerMoveVirtualTime) {
  const auto real0 = std::chrono::steady_clock::now();
  sim::outcome o = sim::run(3, {}, sleeps_on_every_worker, sim::default_pool_options(3));
  ASSERT_TRUE(o.ok) << o.failure;
  EXPECT_GE(o.virtual_time, 60min);
  EXPECT_LT(o.virtual_time, 61min);
  EXPECT_LT(std::chrono::steady_clock::now() - real0, 5s);
}

task<int> add_in_blocking(saturn::thread_pool& pool) {
  const int v = co_await pool.spawn_blocking([] { return 41; });
  co_await saturn::sleep_for(1h);
  co_return v + 1;
}

TEST(SimPool, BlockOnFromTheWorldThreadDrivesThePool) {
  sim::world w(11);
  saturn::thread_pool pool(sim::default_pool_options(2));
  const auto t0 = saturn::clock::now();
  EXPECT_EQ(pool.block_on(add_in_blocking(pool)), 42);
  EXPECT_GE(saturn::clock::now() - t0, 1h) << "virtual time (a loop timer: no ring operation needed)";
}

TEST(SimPool, Scenario) {
  auto r = saturn::sim_scenarios::run_seeds("pool", 200);
  ASSERT_TRUE(r.failed.ok) << "seed " << r.failed.seed << ": " << r.failed.failure;
}

TEST(SimPool, HttpServerOnAPool) {
  auto r = saturn::sim_scenarios::run_seeds("http-pool", 200);
  ASSERT_TRUE(r.failed.ok) << "seed " << r.failed.seed << ": " << r.failed.failure;
}

TEST(SimPool, ProcessesOnAPool) {
  auto r = saturn::sim_scenarios::run_seeds("proc-pool", 100);
  ASSERT_TRUE(r.failed.ok) << "seed " << r.failed.seed << ": " << r.failed.failure;
}

TEST(SimPool, ScenariosAreAFunctionOfTheSeed) {
  for (const char* name : {"pool", "http-pool", "proc-pool"}) {
    const auto* s = saturn::sim_scenarios::find(name);
    ASSERT_NE(s, nullptr);
    std::set<std::uint64_t> hashes;
    for (std::uint64_t seed = 1; seed <= 8; ++seed)
      hashes.insert(saturn::sim_scenarios::run_one(*s, seed).trace_hash);
    EXPECT_EQ(hashes.size(), 8u) << name << ": the seed should change the schedule, and the trace hash with it";
    for (std::uint64_t seed : {4u, 40u}) {
      sim::outcome a = saturn::sim_scenarios::run_one(*s, seed);
      sim::outcome b = saturn::sim_scenarios::run_one(*s, seed);
      ASSERT_TRUE(a.ok && b.ok) << name << " seed " << seed << ": " << a.failure << b.failure;
      EXPECT_EQ(a.trace_hash, b.trace_hash) << name << " seed " << seed;
      EXPECT_EQ(a.virtual_time, b.virtual_time) << name << " seed " << seed;
    }
  }
}

}  // namespace
