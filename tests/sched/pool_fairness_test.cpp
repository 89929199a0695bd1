// thread_pool: yield fairness, wake-ups after the workers parked, and idle workers staying asleep.
// Every parameterized test runs in both modes (io, cpu_bound) with 1, 2 and 4 workers unless
// it needs an event loop. Oracles: per-item run counters and values computed independently.
#include "sched/pool_test_support.hpp"

namespace {

using namespace saturn_test;
using namespace std::chrono_literals;

SATURN_POOL_TEST_SUITE(pool_fairness);

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
TEST_P(pool_fairness, yielding_tasks_do_not_starve_others) {
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
TEST_P(pool_fairness, wakeups_after_parking_are_not_lost) {
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

task<void> mark_ran(std::atomic<bool>* ran) {
  ran->store(true, std::memory_order_release);
  co_return;
}

/// Spawns a task (into this worker's LIFO slot) and then keeps the worker busy, never
/// suspending, until another worker has run it: false if none did within the deadline.
task<bool> hold_lifo_while_busy(thread_pool* pool, std::atomic<bool>* ran) {
  (void)pool->spawn(mark_ran(ran));
  const auto deadline = saturn::clock::now() + 10s * k_slow;
  while (!ran->load(std::memory_order_acquire))
    if (saturn::clock::now() > deadline)
      co_return false;
  co_return true;
}

// A task waiting in the LIFO slot of a worker that is busy with a long task (a TLS
// handshake) is taken by an idle worker even with no idle spin: the last look before
// parking steals LIFO slots too. Before, only spinning rounds after the first did, so with
// a zero (or decayed) spin the idle worker never took it, and since park() counts it as
// visible work it did not sleep either: it looped search-park-search until the busy
// worker got to the task itself.
TEST_P(pool_fairness, an_idle_worker_takes_a_busy_workers_lifo_task_without_spinning) {
  if (GetParam().threads < 2)
    GTEST_SKIP() << "needs a second worker";
  pool_options o = options_for(GetParam());
  o.spin_before_park_us = 0;
  thread_pool pool(o);
  for (int i = 0; i < 20; ++i) {
    std::atomic<bool> ran{false};
    ASSERT_TRUE(pool.block_on(hold_lifo_while_busy(&pool, &ran)))
        << "round " << i << ": the spawned task stayed in the busy worker's LIFO slot";
  }
}

double process_cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

// A timer on an io worker that never runs out of tasks fires within a few tasks of its
// deadline: the worker fires due timers every few tasks, not only at the I/O poll every
// 61. Counted in tasks (each 20 µs of spinning), not in time, so a slow machine cannot
// make it pass or fail: ten sleeps, each may see at most 20 tasks start after its
// deadline (with timers checked only at the I/O poll, a sleep sees up to 60). Their
// lengths differ by 137 µs (about 7 tasks), so the deadlines fall at different points of
// the worker's poll cycle: a sleep begun right after a poll always ended the same
// distance before the next one.
struct busy_chain {
  thread_pool* pool;
  std::atomic<bool> stop{false};
  std::atomic<bool> sleeping{false};
  std::atomic<std::int64_t> deadline_ns{0};
  std::atomic<int> late{0};  ///< tasks begun after the current sleep's deadline
};

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(saturn::clock::now().time_since_epoch()).count();
}

task<void> busy_step(busy_chain* c) {
  if (c->sleeping.load() && steady_ns() >= c->deadline_ns.load())
    c->late.fetch_add(1);
  const auto until = saturn::clock::now() + 20us;
  while (saturn::clock::now() < until) {
  }
  if (!c->stop.load())
    (void)c->pool->spawn(busy_step(c));  // the next step: the worker never runs dry
  co_return;
}

task<int> most_late_tasks(busy_chain* c) {
  int worst = 0;
  for (int i = 0; i < 10; ++i) {
    const auto length = 1000us + i * 137us;
    c->late.store(0);
    // At or before the sleep's own deadline.
    c->deadline_ns.store(steady_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(length).count());
    c->sleeping.store(true);
    auto s = co_await saturn::sleep_for(length);
    c->sleeping.store(false);
    EXPECT_TRUE(s);
    worst = std::max(worst, c->late.load());
  }
  co_return worst;
}

TEST(pool_timers, a_due_timer_fires_within_a_few_tasks_on_a_busy_worker) {
  thread_pool pool(pool_options{.threads = 1, .mode = pool_mode::io});
  busy_chain c{&pool};
  (void)pool.spawn(busy_step(&c));
  const int worst = pool.block_on(most_late_tasks(&c));
  c.stop.store(true);
  EXPECT_LE(worst, 20) << "tasks ran after a due timer before it fired";
}

// Once the work is done the workers go to sleep and stay asleep: an idle pool costs no
// CPU. (A worker that ends an unsuccessful search must not wake a sleeper just to have it
// search the empty pool too, and wake the next.) Three bursts, each followed by 200 ms of
// idleness in which the whole process may use at most 10% of one CPU.
TEST_P(pool_fairness, idle_workers_stay_asleep) {
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


}  // namespace
