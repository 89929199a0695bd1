// thread_pool: spawn/join with checksums, nested spawns, posts from many threads,
// registered submitters (and more of them than the 64 slots), yield fairness, wake-ups
// after the workers parked, spawn_blocking, block_on exceptions, and I/O across workers.
// Every test runs in both modes (io, cpu_bound) with 1, 2 and 4 workers unless it needs
// an event loop. Oracles: per-item run counters (each item runs exactly once) and values
// computed independently of the pool.
#include <gtest/gtest.h>
#include <saturn/saturn.hpp>

#include <fcntl.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <latch>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using saturn::join_handle;
using saturn::pool_mode;
using saturn::pool_options;
using saturn::task;
using saturn::thread_pool;

#if defined(SATURN_TSAN) || defined(SATURN_ASAN)
constexpr int k_slow = 4;  // sanitizer builds: more generous deadlines, smaller volumes
#else
constexpr int k_slow = 1;
#endif

struct pool_config {
  pool_mode mode;
  unsigned threads;
};

std::string config_name(const ::testing::TestParamInfo<pool_config>& info) {
  return std::string(info.param.mode == pool_mode::io ? "io_" : "cpu_bound_") + std::to_string(info.param.threads);
}

pool_options options_for(const pool_config& c) {
  pool_options o;
  o.threads = c.threads;
  o.mode = c.mode;
  return o;
}

/// splitmix64's finalizer: the value oracle of every task.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

using flags = std::unique_ptr<std::atomic<std::uint32_t>[]>;
flags make_flags(std::size_t n) { return flags(new std::atomic<std::uint32_t>[n]()); }

/// Expects every flag in [0, n) to be exactly 1; reports the first few that are not.
void expect_each_once(const flags& f, std::size_t n, const char* what) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t v = f[i].load();
    if (v != 1) {
      if (bad < 5)
        ADD_FAILURE() << what << " #" << i << " ran " << v << " times (expected exactly once)";
      ++bad;
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": items not run exactly once";
}

/// Polls `pred` until it holds or `limit` passes; returns pred().
template <class Pred>
bool wait_until(Pred pred, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until)
      return pred();
    std::this_thread::sleep_for(50us);
  }
  return true;
}

int os_tid() { return static_cast<int>(::gettid()); }

/// Empty when io_uring works here; otherwise why not (tests needing it are then skipped).
const std::string& io_uring_unavailable() {
  static const std::string why = [] {
    std::string err;
    std::thread([&err] {
      try {
        saturn::event_loop probe_loop;
      } catch (const std::exception& e) {
        err = e.what();
        if (err.empty())
          err = "event_loop construction failed";
      }
    }).join();
    return err;
  }();
  return why;
}

class pool_test : public ::testing::TestWithParam<pool_config> {
 protected:
  void SetUp() override {
    if (GetParam().mode == pool_mode::io && !io_uring_unavailable().empty())
      GTEST_SKIP() << "io_uring is not usable here: " << io_uring_unavailable();
  }
};

INSTANTIATE_TEST_SUITE_P(modes, pool_test,
                         ::testing::Values(pool_config{pool_mode::io, 1}, pool_config{pool_mode::io, 2},
                                           pool_config{pool_mode::io, 4}, pool_config{pool_mode::cpu_bound, 1},
                                           pool_config{pool_mode::cpu_bound, 2},
                                           pool_config{pool_mode::cpu_bound, 4}),
                         config_name);

// ---------------------------------------------------------------------------------------
// spawn / join

task<std::uint64_t> leaf(std::uint64_t i, std::atomic<std::uint32_t>* ran, bool suspend) {
  ran[i].fetch_add(1, std::memory_order_relaxed);
  if (suspend)
    co_await saturn::yield();  // joined while still running, sometimes
  co_return mix(i);
}

task<std::uint64_t> fan_out(thread_pool* pool, std::uint64_t n, std::atomic<std::uint32_t>* ran) {
  std::vector<join_handle<std::uint64_t>> hs;
  hs.reserve(n);
  saturn::task_context& ctx = co_await saturn::this_task::context();
  for (std::uint64_t i = 0; i < n; ++i) {
    if (i % 2 == 0)
      hs.push_back(pool->spawn(leaf(i, ran, i % 3 == 0)));
    else
      hs.push_back(saturn::spawn_in(ctx.sched->root_context(), leaf(i, ran, i % 3 == 0)));
  }
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (i % 2 == 0)
      sum += co_await std::move(hs[i]);
    else
      sum += co_await hs[i];  // the lvalue form
  }
  co_return sum;
}

task<std::uint64_t> join_all(std::vector<join_handle<std::uint64_t>> hs) {
  std::uint64_t sum = 0;
  for (auto& h : hs)
    sum += co_await std::move(h);
  co_return sum;
}

TEST_P(pool_test, reports_its_configuration) {
  thread_pool pool(options_for(GetParam()));
  EXPECT_EQ(pool.threads(), GetParam().threads);
  EXPECT_EQ(pool.mode(), GetParam().mode);
}

TEST_P(pool_test, spawn_join_checksum_from_a_task) {
  constexpr std::uint64_t n = 20'000;
  auto ran = make_flags(n);
  std::uint64_t expected = 0;
  for (std::uint64_t i = 0; i < n; ++i)
    expected += mix(i);
  {
    thread_pool pool(options_for(GetParam()));
    EXPECT_EQ(pool.block_on(fan_out(&pool, n, ran.get())), expected);
  }
  expect_each_once(ran, n, "spawned task");
}

TEST_P(pool_test, spawn_from_outside_then_join_in_a_task) {
  constexpr std::uint64_t n = 10'000;
  auto ran = make_flags(n);
  std::uint64_t expected = 0;
  for (std::uint64_t i = 0; i < n; ++i)
    expected += mix(i);
  {
    thread_pool pool(options_for(GetParam()));
    std::vector<join_handle<std::uint64_t>> hs;
    for (std::uint64_t i = 0; i < n; ++i)
      hs.push_back(pool.spawn(leaf(i, ran.get(), i % 5 == 0)));
    EXPECT_EQ(pool.block_on(join_all(std::move(hs))), expected);
  }
  expect_each_once(ran, n, "task spawned from outside");
}

// A tree of spawns 4 levels below the root (1 + 6 + 36 + 216 + 1296 tasks); each node
// returns mix(id) plus its children's values, checked against the same sum computed here.
constexpr std::uint64_t k_fanout = 6;
constexpr int k_depth = 4;
constexpr std::uint64_t k_tree_nodes = 1 + 6 + 36 + 216 + 1296;

std::uint64_t tree_expected(std::uint64_t id, int depth) {
  std::uint64_t v = mix(id);
  if (depth < k_depth)
    for (std::uint64_t k = 0; k < k_fanout; ++k)
      v += tree_expected(id * k_fanout + 1 + k, depth + 1);
  return v;
}

task<std::uint64_t> tree_node(thread_pool* pool, std::uint64_t id, int depth, std::atomic<std::uint32_t>* ran,
                              std::atomic<int>* max_depth) {
  ran[id].fetch_add(1, std::memory_order_relaxed);
  int seen = max_depth->load();
  while (depth > seen && !max_depth->compare_exchange_weak(seen, depth)) {
  }
  std::uint64_t v = mix(id);
  if (depth < k_depth) {
    std::vector<join_handle<std::uint64_t>> hs;
    for (std::uint64_t k = 0; k < k_fanout; ++k)
      hs.push_back(pool->spawn(tree_node(pool, id * k_fanout + 1 + k, depth + 1, ran, max_depth)));
    if (id % 2 == 1)
      co_await saturn::yield();
    for (auto& h : hs)
      v += co_await std::move(h);
  }
  co_return v;
}

TEST_P(pool_test, nested_spawns_four_levels_deep) {
  const std::uint64_t expected = tree_expected(0, 0);
  thread_pool pool(options_for(GetParam()));
  for (int round = 0; round < 10; ++round) {
    auto ran = make_flags(k_tree_nodes);
    std::atomic<int> max_depth{0};
    EXPECT_EQ(pool.block_on(tree_node(&pool, 0, 0, ran.get(), &max_depth)), expected) << "round " << round;
    EXPECT_EQ(max_depth.load(), k_depth);
    expect_each_once(ran, k_tree_nodes, "tree node");
  }
}

TEST_P(pool_test, block_on_from_many_threads_at_once) {
  thread_pool pool(options_for(GetParam()));
  constexpr int k_callers = 8;
  constexpr std::uint64_t n = 500;
  std::uint64_t expected = 0;
  for (std::uint64_t i = 0; i < n; ++i)
    expected += mix(i);
  std::vector<flags> ran;
  for (int t = 0; t < k_callers; ++t)
    ran.push_back(make_flags(n));
  std::vector<std::uint64_t> got(k_callers);
  std::latch go(k_callers);
  std::vector<std::thread> callers;
  for (int t = 0; t < k_callers; ++t)
    callers.emplace_back([&, t] {
      go.arrive_and_wait();
      got[t] = pool.block_on(fan_out(&pool, n, ran[t].get()));
    });
  for (auto& c : callers)
    c.join();
  for (int t = 0; t < k_callers; ++t) {
    EXPECT_EQ(got[t], expected) << "caller " << t;
    expect_each_once(ran[t], n, "task of a concurrent block_on");
  }
}

// ---------------------------------------------------------------------------------------
// post / submitters

TEST_P(pool_test, post_from_many_threads_runs_each_item_once) {
  constexpr unsigned k_threads = 8;
  const unsigned per = 50'000 / static_cast<unsigned>(k_slow);
  const std::size_t total = std::size_t{k_threads} * per;
  auto ran = make_flags(total);
  std::atomic<std::uint64_t> done{0};
  {
    thread_pool pool(options_for(GetParam()));
    std::latch go(k_threads);
    std::vector<std::thread> posters;
    for (unsigned t = 0; t < k_threads; ++t)
      posters.emplace_back([&, t] {
        go.arrive_and_wait();
        for (unsigned i = 0; i < per; ++i) {
          const std::size_t idx = std::size_t{t} * per + i;
          pool.post([r = ran.get(), d = &done, idx] {
            r[idx].fetch_add(1, std::memory_order_relaxed);
            d->fetch_add(1, std::memory_order_release);
          });
        }
      });
    for (auto& p : posters)
      p.join();
    ASSERT_TRUE(wait_until([&] { return done.load() >= total; }, 10'000ms * k_slow))
        << "only " << done.load() << " of " << total << " posted callables ran";
  }  // joins the workers: a second run of any item would show below
  EXPECT_EQ(done.load(), total);
  expect_each_once(ran, total, "posted callable");
}

task<std::uint64_t> marked(std::uint64_t i, std::atomic<std::uint32_t>* ran, std::atomic<std::uint64_t>* done) {
  ran[i].fetch_add(1, std::memory_order_relaxed);
  done->fetch_add(1, std::memory_order_release);
  co_return mix(i);
}

/// One submitter thread's work: `per` items, alternating sub.post and sub.spawn; every
/// 8th spawn keeps its handle and is joined at the end through block_on.
void submitter_thread(thread_pool& pool, thread_pool::submitter& sub, std::size_t base, unsigned per,
                      std::atomic<std::uint32_t>* ran, std::atomic<std::uint64_t>* done, std::uint64_t* join_sum,
                      std::uint64_t* join_expected) {
  std::vector<join_handle<std::uint64_t>> kept;
  std::uint64_t expected = 0;
  for (unsigned i = 0; i < per; ++i) {
    const std::size_t idx = base + i;
    if (i % 2 == 0) {
      sub.post([ran, done, idx] {
        ran[idx].fetch_add(1, std::memory_order_relaxed);
        done->fetch_add(1, std::memory_order_release);
      });
    } else if (i % 16 == 1) {
      kept.push_back(sub.spawn(marked(idx, ran, done)));
      expected += mix(idx);
    } else {
      (void)sub.spawn(marked(idx, ran, done));  // detached at once
    }
  }
  *join_sum = pool.block_on(join_all(std::move(kept)));
  *join_expected = expected;
}

TEST_P(pool_test, registered_submitters_each_item_runs_once) {
  constexpr unsigned k_threads = 8;
  const unsigned per = 50'000 / static_cast<unsigned>(k_slow);
  const std::size_t total = std::size_t{k_threads} * per;
  auto ran = make_flags(total);
  std::atomic<std::uint64_t> done{0};
  std::vector<std::uint64_t> sums(k_threads), expected(k_threads);
  {
    thread_pool pool(options_for(GetParam()));
    std::latch go(k_threads);
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < k_threads; ++t)
      threads.emplace_back([&, t] {
        auto sub = pool.register_submitter();
        go.arrive_and_wait();
        submitter_thread(pool, sub, std::size_t{t} * per, per, ran.get(), &done, &sums[t], &expected[t]);
      });
    for (auto& th : threads)
      th.join();
    ASSERT_TRUE(wait_until([&] { return done.load() >= total; }, 10'000ms * k_slow))
        << "only " << done.load() << " of " << total << " submitted items ran";
  }
  EXPECT_EQ(done.load(), total);
  expect_each_once(ran, total, "submitted item");
  for (unsigned t = 0; t < k_threads; ++t)
    EXPECT_EQ(sums[t], expected[t]) << "joins of submitter " << t;
}

// 80 threads hold a submitter at once: 64 get a queue of their own, the rest fall back to
// the injection queue. A second wave reuses the released queues.
TEST_P(pool_test, more_submitters_than_slots_fall_back) {
  constexpr unsigned k_threads = 80;
  const unsigned per = 2'000 / static_cast<unsigned>(k_slow);
  constexpr int k_waves = 2;
  const std::size_t total = std::size_t{k_waves} * k_threads * per;
  auto ran = make_flags(total);
  std::atomic<std::uint64_t> done{0};
  std::vector<std::uint64_t> sums(k_waves * k_threads), expected(k_waves * k_threads);
  {
    thread_pool pool(options_for(GetParam()));
    for (int wave = 0; wave < k_waves; ++wave) {
      std::latch registered(k_threads);
      std::vector<std::thread> threads;
      for (unsigned t = 0; t < k_threads; ++t)
        threads.emplace_back([&, t, wave] {
          auto sub = pool.register_submitter();
          registered.arrive_and_wait();  // every one registered before anyone submits
          const unsigned slot = static_cast<unsigned>(wave) * k_threads + t;
          submitter_thread(pool, sub, std::size_t{slot} * per, per, ran.get(), &done, &sums[slot], &expected[slot]);
        });
      for (auto& th : threads)
        th.join();
    }
    ASSERT_TRUE(wait_until([&] { return done.load() >= total; }, 10'000ms * k_slow))
        << "only " << done.load() << " of " << total << " submitted items ran";
  }
  EXPECT_EQ(done.load(), total);
  expect_each_once(ran, total, "item of an overflow submitter");
  for (std::size_t s = 0; s < sums.size(); ++s)
    EXPECT_EQ(sums[s], expected[s]) << "joins of submitter " << s;
}

// ---------------------------------------------------------------------------------------
// fairness and wake-ups

task<bool> spin_yielder(std::atomic<bool>* stop, std::atomic<int>* running, saturn::clock::time_point deadline) {
  running->fetch_add(1);
  while (!stop->load(std::memory_order_acquire)) {
    co_await saturn::yield();
    if (saturn::clock::now() > deadline)
      co_return false;  // nobody stopped us: the others starved
  }
  co_return true;
}

task<int> counting(std::atomic<int>* progress, int n) {
  for (int i = 0; i < n; ++i) {
    progress->fetch_add(1, std::memory_order_relaxed);
    co_await saturn::yield();
  }
  co_return n;
}

task<int> spawn_and_join_counter(thread_pool* pool, std::atomic<int>* progress, int n) {
  co_return co_await pool->spawn(counting(progress, n));
}

task<int> timers_and_nops(int n) {
  int ok = 0;
  for (int i = 0; i < n; ++i) {
    auto s = co_await saturn::sleep_for(500us);
    auto r = co_await saturn::nop();
    ok += (s && r) ? 1 : 0;
  }
  co_return ok;
}

task<bool> join_yielders(std::vector<join_handle<bool>> hs) {
  bool ok = true;
  for (auto& h : hs)
    ok = (co_await std::move(h)) && ok;
  co_return ok;
}

// Every worker is kept busy by tasks that yield in a loop; other tasks, posts from
// outside, and (io mode) timers and I/O completions must still make progress.
TEST_P(pool_test, yielding_tasks_do_not_starve_others) {
  std::atomic<bool> stop{false};  // before the pool: the yielders read it until they end
  std::atomic<int> running{0};
  std::atomic<int> progress{0};
  std::atomic<bool> posted_ran{false};
  thread_pool pool(options_for(GetParam()));
  const auto deadline = saturn::clock::now() + 10s * k_slow;
  std::vector<join_handle<bool>> yielders;
  const int n_yielders = static_cast<int>(GetParam().threads) + 1;
  for (int i = 0; i < n_yielders; ++i)
    yielders.push_back(pool.spawn(spin_yielder(&stop, &running, deadline)));
  ASSERT_TRUE(wait_until([&] { return running.load() == n_yielders; }, 10'000ms * k_slow));

  // a task spawned from outside, and one spawned from a task (LIFO slot of a busy worker)
  EXPECT_EQ(pool.block_on(counting(&progress, 1000)), 1000);
  EXPECT_EQ(pool.block_on(spawn_and_join_counter(&pool, &progress, 1000)), 1000);
  // a posted callable
  pool.post([&posted_ran] { posted_ran.store(true); });
  EXPECT_TRUE(wait_until([&] { return posted_ran.load(); }, 10'000ms * k_slow)) << "a posted callable starved";
  // timers and I/O completions on busy workers
  if (GetParam().mode == pool_mode::io) {
    EXPECT_EQ(pool.block_on(timers_and_nops(20)), 20);
  }

  stop.store(true, std::memory_order_release);
  EXPECT_TRUE(pool.block_on(join_yielders(std::move(yielders)))) << "a yielder hit its deadline: others starved";
}

task<void> bump(std::atomic<int>* seen) {
  seen->fetch_add(1);
  co_return;
}

task<void> relay(thread_pool* pool, std::atomic<int>* seen) {
  co_await saturn::yield();
  (void)pool->spawn(bump(seen));  // spawned from a worker, detached
}

task<void> sleeper_bump(std::atomic<int>* seen) {
  (void)co_await saturn::sleep_for(1ms);
  seen->fetch_add(1);
}

// The workers go idle and park (5 ms is ~100x the spin before parking); then one unit of
// work arrives from outside. It must run: 200 times, through every submission path.
TEST_P(pool_test, wakeups_after_parking_are_not_lost) {
  std::atomic<int> seen{0};  // before the pool: outlives every posted item
  thread_pool pool(options_for(GetParam()));
  auto sub = pool.register_submitter();
  const int kinds = GetParam().mode == pool_mode::io ? 6 : 5;
  for (int i = 0; i < 200; ++i) {
    std::this_thread::sleep_for(5ms);
    switch (i % kinds) {
      case 0: pool.post([&seen] { seen.fetch_add(1); }); break;
      case 1: (void)pool.spawn(bump(&seen)); break;
      case 2: sub.post([&seen] { seen.fetch_add(1); }); break;
      case 3: (void)sub.spawn(bump(&seen)); break;
      case 4: (void)pool.spawn(relay(&pool, &seen)); break;
      case 5: (void)pool.spawn(sleeper_bump(&seen)); break;  // a timer on a parked worker
    }
    ASSERT_TRUE(wait_until([&] { return seen.load() == i + 1; }, 10'000ms))
        << "iteration " << i << " (kind " << i % kinds << "): the work never ran: a lost wake-up";
  }
}

double process_cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

// Once the work is done the workers go to sleep and stay asleep: an idle pool costs no
// CPU. (A worker that ends an unsuccessful search must not wake a sleeper just to have it
// search the empty pool too, and wake the next.) Three bursts, each followed by 200 ms of
// idleness in which the whole process may use at most 10% of one CPU.
TEST_P(pool_test, idle_workers_stay_asleep) {
  thread_pool pool(options_for(GetParam()));
  constexpr std::uint64_t n = 2000;
  std::uint64_t expected = 0;
  for (std::uint64_t i = 0; i < n; ++i)
    expected += mix(i);
  for (int cycle = 0; cycle < 3; ++cycle) {
    std::atomic<int> done{0};
    for (int i = 0; i < 1000; ++i)
      pool.post([&done] { done.fetch_add(1); });
    auto ran = make_flags(n);
    EXPECT_EQ(pool.block_on(fan_out(&pool, n, ran.get())), expected);
    ASSERT_TRUE(wait_until([&] { return done.load() == 1000; }, 10'000ms * k_slow));
    std::this_thread::sleep_for(20ms);  // searches end, workers park
    const double c0 = process_cpu_ms();
    std::this_thread::sleep_for(200ms);
    const double used = process_cpu_ms() - c0;
    EXPECT_LT(used, 20.0) << "cycle " << cycle << ": the idle pool used " << used
                          << " ms of CPU in 200 ms: workers keep waking each other";
  }
}

// ---------------------------------------------------------------------------------------
// spawn_blocking

struct blocking_probe {
  static constexpr int k_calls = 4;
  std::atomic<int> arrived{0};
  std::atomic<int> running{0};
  std::atomic<int> max_running{0};
  std::atomic<std::uint64_t> ticks{0};
  std::atomic<bool> stop_ticker{false};
  std::atomic<int> saw_ticker_progress{0};
  std::mutex mutex;
  std::set<int> worker_tids;    // threads that ran the ticker
  std::set<int> blocking_tids;  // threads that ran the blocking calls
  std::chrono::milliseconds rendezvous = 500ms * k_slow;  // how long a call waits for the others
  std::chrono::milliseconds hold = 50ms;                  // how long a call then sleeps
};

task<void> ticker(blocking_probe* bp) {
  while (!bp->stop_ticker.load(std::memory_order_acquire)) {
    bp->ticks.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard lock(bp->mutex);
      bp->worker_tids.insert(os_tid());
    }
    co_await saturn::yield();
  }
}

/// A blocking call: waits (up to bp->rendezvous) until all k_calls are running at once, then sleeps
/// bp->hold; returns its index. Records whether the ticker advanced meanwhile.
int blocking_call(blocking_probe* bp, int index) {
  {
    std::lock_guard lock(bp->mutex);
    bp->blocking_tids.insert(os_tid());
  }
  const int now = bp->running.fetch_add(1) + 1;
  int seen = bp->max_running.load();
  while (now > seen && !bp->max_running.compare_exchange_weak(seen, now)) {
  }
  bp->arrived.fetch_add(1);
  const std::uint64_t t0 = bp->ticks.load();
  wait_until([bp] { return bp->arrived.load() >= blocking_probe::k_calls; }, bp->rendezvous);
  std::this_thread::sleep_for(bp->hold);
  if (bp->ticks.load() > t0)
    bp->saw_ticker_progress.fetch_add(1);
  bp->running.fetch_sub(1);
  return index;
}

task<int> run_blocking_calls(thread_pool* pool, blocking_probe* bp) {
  auto tick = pool->spawn(ticker(bp));
  co_await saturn::yield();
  // spawn_blocking hands each call over at once; the returned tasks only await results
  std::vector<task<int>> calls;
  for (int i = 0; i < blocking_probe::k_calls; ++i)
    calls.push_back(pool->spawn_blocking([bp, i] { return blocking_call(bp, i); }));
  int sum = 0;
  for (auto& c : calls)
    sum += co_await std::move(c);
  bp->stop_ticker.store(true, std::memory_order_release);
  co_await std::move(tick);
  co_return sum;
}

void expect_blocking_ran_concurrently_off_the_workers(blocking_probe& bp) {
  EXPECT_EQ(bp.max_running.load(), blocking_probe::k_calls)
      << "the blocking calls did not all run at once (the blocking pool queued them behind each other)";
  EXPECT_EQ(bp.saw_ticker_progress.load(), blocking_probe::k_calls)
      << "a task on the workers did not run while blocking calls slept";
  std::lock_guard lock(bp.mutex);
  for (int tid : bp.blocking_tids)
    EXPECT_EQ(bp.worker_tids.count(tid), 0u) << "a blocking call ran on a worker thread";
}

TEST_P(pool_test, spawn_blocking_runs_off_the_workers_concurrently) {
  blocking_probe bp;
  thread_pool pool(options_for(GetParam()));
  EXPECT_EQ(pool.block_on(run_blocking_calls(&pool, &bp)), 0 + 1 + 2 + 3);
  expect_blocking_ran_concurrently_off_the_workers(bp);
}

task<int> sum_all(std::vector<task<int>> calls) {
  int sum = 0;
  for (auto& c : calls)
    sum += co_await std::move(c);
  co_return sum;
}

// Once the blocking pool has exactly one idle thread, four calls handed over at the same
// moment (from four threads) must still get four threads, not queue behind the idle one.
// About the blocking pool, not the workers: one worker, both modes, fresh pools.
TEST(thread_pool_blocking, grows_past_an_idle_thread) {
  for (pool_mode mode : {pool_mode::io, pool_mode::cpu_bound}) {
    if (mode == pool_mode::io && !io_uring_unavailable().empty())
      continue;  // io_uring is not usable here; the cpu_bound half still runs
    for (int round = 0; round < 20; ++round) {
      SCOPED_TRACE(std::string(mode == pool_mode::io ? "io" : "cpu_bound") + ", round " + std::to_string(round));
      blocking_probe bp;
      thread_pool pool(pool_options{.threads = 1, .mode = mode});
      EXPECT_EQ(pool.block_on(pool.spawn_blocking([] { return 7; })), 7);
      std::this_thread::sleep_for(2ms);  // its thread is now idle in the blocking pool
      bp.rendezvous = 100ms;
      bp.hold = 0ms;
      std::vector<task<int>> calls(blocking_probe::k_calls);
      std::atomic<int> ready{0};
      std::vector<std::thread> callers;
      for (int i = 0; i < blocking_probe::k_calls; ++i)
        callers.emplace_back([&, i] {
          ready.fetch_add(1);
          while (ready.load() < blocking_probe::k_calls) {
          }
          calls[static_cast<std::size_t>(i)] = pool.spawn_blocking([&bp, i] { return blocking_call(&bp, i); });
        });
      for (auto& c : callers)
        c.join();
      EXPECT_EQ(pool.block_on(sum_all(std::move(calls))), 0 + 1 + 2 + 3);
      EXPECT_EQ(bp.max_running.load(), blocking_probe::k_calls)
          << "blocking calls queued behind the one idle blocking thread instead of starting threads";
      if (::testing::Test::HasFailure())
        return;
    }
  }
}

struct blocking_error : std::runtime_error {
  int code;
  explicit blocking_error(int c) : std::runtime_error("blocking call failed"), code(c) {}
};

task<int> catch_blocking(thread_pool* pool) {
  int caught = 0;
  try {
    (void)co_await pool->spawn_blocking([]() -> int { throw blocking_error(41); });
  } catch (const blocking_error& e) {
    caught += e.code;
  }
  try {
    co_await pool->spawn_blocking([] { throw std::out_of_range("void call"); });
  } catch (const std::out_of_range& e) {
    caught += std::string(e.what()) == "void call" ? 1 : 100;
  }
  // values that need moving and destroying
  std::unique_ptr<int> p = co_await pool->spawn_blocking([] { return std::make_unique<int>(1000); });
  std::string s = co_await pool->spawn_blocking([] { return std::string(100, 'x'); });
  co_return caught + *p + static_cast<int>(s.size());
}

TEST_P(pool_test, spawn_blocking_propagates_values_and_exceptions) {
  thread_pool pool(options_for(GetParam()));
  EXPECT_EQ(pool.block_on(catch_blocking(&pool)), 41 + 1 + 1000 + 100);
  // straight through block_on
  EXPECT_THROW(pool.block_on(pool.spawn_blocking([]() -> int { throw blocking_error(1); })), blocking_error);
  // a result that arrives before the await (the call finished first)
  task<int> early = pool.spawn_blocking([] { return 5; });
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(pool.block_on(std::move(early)), 5);
}

// ---------------------------------------------------------------------------------------
// block_on

struct task_error : std::runtime_error {
  std::uint64_t id;
  explicit task_error(std::uint64_t i) : std::runtime_error("task failed: " + std::to_string(i)), id(i) {}
};

task<int> throws_after_yield(std::uint64_t id) {
  co_await saturn::yield();
  throw task_error(id);
}

task<void> throws_void() {
  co_await saturn::yield();
  throw std::logic_error("void task");
}

task<int> inline_chain(int depth) {
  if (depth == 0)
    co_return co_await throws_after_yield(77);
  co_return co_await inline_chain(depth - 1);
}

task<int> join_thrower(thread_pool* pool, std::uint64_t id) {
  auto h = pool->spawn(throws_after_yield(id));
  co_return co_await std::move(h);
}

task<int> nested_join_thrower(thread_pool* pool) {
  // a spawned task that itself joins a thrower: the exception crosses two joins
  co_return co_await pool->spawn(join_thrower(pool, 99));
}

TEST_P(pool_test, block_on_propagates_exceptions) {
  thread_pool pool(options_for(GetParam()));
  try {
    (void)pool.block_on(throws_after_yield(5));
    ADD_FAILURE() << "no exception";
  } catch (const task_error& e) {
    EXPECT_EQ(e.id, 5u);
  }
  EXPECT_THROW(pool.block_on(throws_void()), std::logic_error);
  try {
    (void)pool.block_on(inline_chain(50));
    ADD_FAILURE() << "no exception";
  } catch (const task_error& e) {
    EXPECT_EQ(e.id, 77u);
  }
  try {
    (void)pool.block_on(nested_join_thrower(&pool));
    ADD_FAILURE() << "no exception";
  } catch (const task_error& e) {
    EXPECT_EQ(e.id, 99u);
  }
  try {
    (void)pool.block_on([]() -> task<int> {
      throw 17;  // not a std::exception
      co_return 0;
    }());
    ADD_FAILURE() << "no exception";
  } catch (int v) {
    EXPECT_EQ(v, 17);
  }
  // the pool still works afterwards
  EXPECT_EQ(pool.block_on([]() -> task<int> { co_return 3; }()), 3);
}

// block_on returns after the task has ended, and its frame with it: the task's by-value
// arguments are destroyed before block_on returns (as with runtime::block_on), so an
// argument may point at the caller's stack.
std::atomic<int> g_arg_destroyed{0};
struct slow_to_destroy {
  bool live = true;
  slow_to_destroy() = default;
  slow_to_destroy(slow_to_destroy&& o) noexcept : live(std::exchange(o.live, false)) {}
  ~slow_to_destroy() {
    if (live) {
      std::this_thread::sleep_for(2ms);  // widen the window in which block_on could return
      g_arg_destroyed.fetch_add(1);
    }
  }
};
task<int> with_argument(slow_to_destroy arg) {
  (void)arg;
  co_return 7;
}

TEST_P(pool_test, block_on_returns_after_the_task_frame_is_destroyed) {
  thread_pool pool(options_for(GetParam()));
  int early = 0;
  for (int i = 0; i < 50; ++i) {
    g_arg_destroyed.store(0);
    EXPECT_EQ(pool.block_on(with_argument(slow_to_destroy{})), 7);
    if (g_arg_destroyed.load() != 1)
      ++early;
    wait_until([] { return g_arg_destroyed.load() == 1; }, 1000ms);
  }
  EXPECT_EQ(early, 0) << "block_on returned before the task's arguments were destroyed, " << early << " of 50 times";
}

TEST(thread_pool_misuse, block_on_from_a_worker_dies_with_a_message) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        thread_pool pool(pool_options{.threads = 2, .mode = pool_mode::cpu_bound});
        pool.block_on([](thread_pool* p) -> task<int> {
          co_return p->block_on([]() -> task<int> { co_return 1; }());  // blocks a worker
        }(&pool));
      },
      "block_on");
}

TEST(thread_pool_options, zero_threads_means_the_affinity_mask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  thread_pool pool(pool_options{.threads = 0, .mode = pool_mode::cpu_bound});
  EXPECT_EQ(pool.threads(), static_cast<unsigned>(CPU_COUNT(&set)));
}

TEST(thread_pool_options, too_many_workers_is_rejected) {
  EXPECT_THROW(thread_pool(pool_options{.threads = 256, .mode = pool_mode::cpu_bound}), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------
// io mode: I/O, timers and wakes across workers

class io_pool_test : public ::testing::TestWithParam<pool_config> {
 protected:
  void SetUp() override {
    if (GetParam().mode == pool_mode::io && !io_uring_unavailable().empty())
      GTEST_SKIP() << "io_uring is not usable here: " << io_uring_unavailable();
  }
};
INSTANTIATE_TEST_SUITE_P(io, io_pool_test,
                         ::testing::Values(pool_config{pool_mode::io, 1}, pool_config{pool_mode::io, 2},
                                           pool_config{pool_mode::io, 4}),
                         config_name);

struct pipe_pair {
  int r = -1;
  int w = -1;
  pipe_pair() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      throw std::runtime_error("pipe2 failed");
    r = fds[0];
    w = fds[1];
  }
  ~pipe_pair() {
    ::close(r);
    ::close(w);
  }
  pipe_pair(const pipe_pair&) = delete;
  pipe_pair& operator=(const pipe_pair&) = delete;
};

std::vector<std::byte> pattern(std::size_t n, std::uint64_t seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<std::byte>(mix(seed * 1'000'003 + i) & 0xff);
  return v;
}

std::uint64_t checksum(std::span<const std::byte> b) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::byte x : b)
    h = (h ^ static_cast<std::uint64_t>(x)) * 1099511628211ull;
  return h;
}

/// Reads exactly `total` bytes; the checksum, or 0 on an error or early EOF.
task<std::uint64_t> read_all(int fd, std::size_t total, std::atomic<int>* reader_tid) {
  if (reader_tid != nullptr)
    reader_tid->store(os_tid());
  std::vector<std::byte> buf(total);
  std::size_t got = 0;
  while (got < total) {
    auto r = co_await saturn::read(fd, std::span<std::byte>(buf).subspan(got));
    if (!r || *r == 0)
      co_return 0;
    got += *r;
  }
  co_return checksum(buf);
}

/// Writes `data` in chunks of `chunk` bytes, yielding and sleeping in between.
task<bool> write_all(int fd, std::vector<std::byte> data, std::size_t chunk) {
  std::size_t off = 0;
  while (off < data.size()) {
    const std::size_t n = std::min(chunk, data.size() - off);
    auto r = co_await saturn::write(fd, std::span<const std::byte>(data).subspan(off, n));
    if (!r)
      co_return false;
    off += *r;
    if (off % (4 * chunk) == 0)
      (void)co_await saturn::sleep_for(100us);
    else
      co_await saturn::yield();
  }
  co_return true;
}

task<int> nops_and_sleeps(int id) {
  int ok = 0;
  for (int i = 0; i < 40; ++i) {
    ok += (co_await saturn::nop()) ? 1 : 0;
    if (i % 8 == id % 8) {
      const auto d = std::chrono::microseconds(50 + (id * 37 + i) % 300);
      const auto t0 = saturn::clock::now();
      auto s = co_await saturn::sleep_for(d);
      if (s && saturn::clock::now() - t0 >= d)  // a sleep never ends early
        ++ok;
      else
        ok -= 1000;
    }
    co_await saturn::yield();
  }
  co_return ok;
}

task<std::int64_t> io_mix(thread_pool* pool, std::vector<int>* fds, std::size_t bytes) {
  // 64 tasks doing nops and sleeps; readers and writers of each pipe spawned apart, so they
  // run (and complete their I/O) on whichever workers pick them up
  std::vector<join_handle<int>> nops;
  for (int i = 0; i < 64; ++i)
    nops.push_back(pool->spawn(nops_and_sleeps(i)));
  const std::size_t pipes = fds->size() / 2;
  std::vector<join_handle<std::uint64_t>> readers;
  for (std::size_t p = 0; p < pipes; ++p)
    readers.push_back(pool->spawn(read_all((*fds)[2 * p], bytes, nullptr)));
  std::vector<join_handle<bool>> writers;
  for (std::size_t p = 0; p < pipes; ++p)
    writers.push_back(pool->spawn(write_all((*fds)[2 * p + 1], pattern(bytes, p), 256)));
  std::int64_t score = 0;
  for (auto& h : nops)
    score += co_await std::move(h);
  for (std::size_t p = 0; p < pipes; ++p) {
    const std::uint64_t sum = co_await std::move(readers[p]);
    const bool wrote = co_await std::move(writers[p]);
    if (wrote && sum == checksum(pattern(bytes, p)))
      score += 1'000'000;
  }
  co_return score;
}

TEST_P(io_pool_test, nops_sleeps_and_pipe_reads_across_workers) {
  thread_pool pool(options_for(GetParam()));
  constexpr std::size_t k_pipes = 16, k_bytes = 8192;
  std::vector<std::unique_ptr<pipe_pair>> pipes;
  std::vector<int> fds;
  for (std::size_t i = 0; i < k_pipes; ++i) {
    pipes.push_back(std::make_unique<pipe_pair>());
    fds.push_back(pipes.back()->r);
    fds.push_back(pipes.back()->w);
  }
  // each nop task: 40 nops + 5 sleeps
  const std::int64_t expected = 64 * (40 + 5) + std::int64_t{k_pipes} * 1'000'000;
  for (int round = 0; round < 3; ++round)
    EXPECT_EQ(pool.block_on(io_mix(&pool, &fds, k_bytes)), expected) << "round " << round;
}

task<bool> write_attempt(int fd, std::atomic<int>* reader_tid, std::atomic<int>* writer_tid, std::atomic<bool>* done,
                         std::vector<std::byte> data) {
  if (done->load())
    co_return false;
  if (os_tid() == reader_tid->load()) {
    // the reader's worker: hold it a little, so the next attempt lands on another one
    std::this_thread::sleep_for(2ms);
    co_return false;
  }
  if (done->exchange(true))
    co_return false;
  writer_tid->store(os_tid());
  std::size_t off = 0;
  while (off < data.size()) {
    auto r = co_await saturn::write(fd, std::span<const std::byte>(data).subspan(off));
    if (!r)
      co_return false;
    off += *r;
  }
  co_return true;
}

task<int> count_true(std::vector<join_handle<bool>> hs) {
  int n = 0;
  for (auto& h : hs)
    n += (co_await std::move(h)) ? 1 : 0;
  co_return n;
}

task<std::uint64_t> await_u64(join_handle<std::uint64_t> h) { co_return co_await std::move(h); }

// A task waits on a pipe read submitted to its worker's ring (and that worker parks in
// the ring); a task on another worker writes. The read's completion must wake the
// parked worker and the reader must finish.
TEST_P(io_pool_test, cross_worker_pipe_wake) {
  if (GetParam().threads < 2)
    GTEST_SKIP() << "needs two workers";
  thread_pool pool(options_for(GetParam()));
  for (int round = 0; round < 10; ++round) {
    pipe_pair p;
    std::atomic<int> reader_tid{0}, writer_tid{0};
    std::atomic<bool> done{false};
    const std::size_t bytes = 1000 + 100 * static_cast<std::size_t>(round);
    auto reader = pool.spawn(read_all(p.r, bytes, &reader_tid));
    ASSERT_TRUE(wait_until([&] { return reader_tid.load() != 0; }, 10'000ms * k_slow));
    std::this_thread::sleep_for(5ms);  // the read is in flight; its worker parks in its ring
    EXPECT_FALSE(reader.is_finished());
    std::vector<join_handle<bool>> attempts;
    const auto until = std::chrono::steady_clock::now() + 10s * k_slow;
    while (!done.load() && std::chrono::steady_clock::now() < until) {
      attempts.push_back(pool.spawn(write_attempt(p.w, &reader_tid, &writer_tid, &done, pattern(bytes, round))));
      std::this_thread::sleep_for(500us);
    }
    ASSERT_TRUE(done.load()) << "no write attempt ran on a worker other than the reader's";
    EXPECT_EQ(pool.block_on(await_u64(std::move(reader))), checksum(pattern(bytes, round))) << "round " << round;
    EXPECT_EQ(pool.block_on(count_true(std::move(attempts))), 1);
    EXPECT_NE(writer_tid.load(), reader_tid.load());
  }
}

}  // namespace
