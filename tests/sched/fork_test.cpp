// saturn::join (src/sched/fork.cpp): results and checksums against sequential oracles,
// forced steals (the first branch waits until the second has started, which only a thief
// can do), exceptions from either branch, stolen or not, a stealing stress with throwing
// leaves, join_all / join_for coverage, and joins from many tasks at once. Every
// parameterized test runs in both modes with 1, 2 and 4 workers.
#include <saturn/task/join.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>

#include "sched/pool_test_support.hpp"

namespace {

using namespace saturn_test;
using namespace std::chrono_literals;

SATURN_POOL_TEST_SUITE(pool_fork);

/// Runs `f` inside a task on the pool and returns its result.
template <class F>
task<std::invoke_result_t<F&>> call_in_task(F f) {
  co_return f();
}

std::uint64_t fib(unsigned n) {
  if (n < 2)
    return n;
  auto [x, y] = saturn::join([&] { return fib(n - 1); }, [&] { return fib(n - 2); });
  return x + y;
}

std::uint64_t fib_seq(unsigned n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }

/// Sum of mix(i) over [lo, hi) by recursive halving, every branch marking its leaf.
std::uint64_t tree_sum(std::uint64_t lo, std::uint64_t hi, std::atomic<std::uint32_t>* ran) {
  if (hi - lo == 1) {
    ran[lo].fetch_add(1, std::memory_order_relaxed);
    return mix(lo);
  }
  const std::uint64_t mid = lo + (hi - lo) / 2;
  auto [a, b] = saturn::join([&] { return tree_sum(lo, mid, ran); }, [&] { return tree_sum(mid, hi, ran); });
  return a + b;
}

std::uint64_t expected_sum(std::uint64_t n) {
  std::uint64_t s = 0;
  for (std::uint64_t i = 0; i < n; ++i)
    s += mix(i);
  return s;
}

/// Spins until `flag` is set or `limit` passes; whether it was set.
bool spin_until(const std::atomic<bool>& flag, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!flag.load(std::memory_order_acquire)) {
    if (std::chrono::steady_clock::now() > until)
      return false;
    std::this_thread::yield();
  }
  return true;
}

TEST(fork_plain_thread, runs_both_branches_in_turn_off_the_pool) {
  std::vector<int> order;
  auto [a, b] = saturn::join([&] { order.push_back(1); return 10; }, [&] { order.push_back(2); return std::string("x"); });
  EXPECT_EQ(a, 10);
  EXPECT_EQ(b, "x");
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_EQ(fib(15), fib_seq(15));
}

TEST(fork_plain_thread, first_exception_wins_and_both_branches_run) {
  int ran_b = 0;
  try {
    saturn::join([] { throw std::runtime_error("a"); }, [&] { ++ran_b; throw std::logic_error("b"); });
    ADD_FAILURE() << "join did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "a");
  }
  EXPECT_EQ(ran_b, 1);
}

TEST_P(pool_fork, fib_matches_the_sequential_oracle) {
  thread_pool pool(options_for(GetParam()));
  EXPECT_EQ(pool.block_on(call_in_task([] { return fib(24); })), fib_seq(24));
}

TEST_P(pool_fork, tree_runs_every_leaf_once) {
  constexpr std::uint64_t n = 1 << 15;
  thread_pool pool(options_for(GetParam()));
  for (int round = 0; round < 5; ++round) {
    auto ran = make_flags(n);
    EXPECT_EQ(pool.block_on(call_in_task([&] { return tree_sum(0, n, ran.get()); })), expected_sum(n));
    expect_each_once(ran, n, "leaf");
  }
}

TEST_P(pool_fork, result_kinds_void_mixed_reference_move_only) {
  thread_pool pool(options_for(GetParam()));
  pool.block_on(call_in_task([] {
    int x = 0, y = 0;
    saturn::join([&] { x = 1; }, [&] { y = 2; });  // both void: returns nothing
    EXPECT_EQ(x + y, 3);
    auto [m, v] = saturn::join([] {}, [] { return 7; });
    static_assert(std::is_same_v<decltype(m), std::monostate>);
    EXPECT_EQ(v, 7);
    int target = 5;
    auto [r, p] = saturn::join([&]() -> int& { return target; }, [] { return std::make_unique<int>(9); });
    r.get() = 6;
    EXPECT_EQ(target, 6);
    EXPECT_EQ(*p, 9);
  }));
}

TEST_P(pool_fork, variadic_join_keeps_argument_order) {
  thread_pool pool(options_for(GetParam()));
  auto t = pool.block_on(call_in_task([] {
    return saturn::join([] { return 1; }, [] { return std::string("two"); }, [] {}, [] { return fib(18); });
  }));
  EXPECT_EQ(std::get<0>(t), 1);
  EXPECT_EQ(std::get<1>(t), "two");
  EXPECT_EQ(std::get<3>(t), fib_seq(18));
}

TEST_P(pool_fork, join_all_and_join_for_cover_every_item_once) {
  constexpr std::size_t n = 1000;
  thread_pool pool(options_for(GetParam()));
  auto ran = make_flags(n);
  std::vector<std::uint64_t> got = pool.block_on(call_in_task([&] {
    std::vector<std::function<std::uint64_t()>> fns;
    for (std::size_t i = 0; i < n; ++i)
      fns.emplace_back([i] { return mix(i); });
    return saturn::join_all(fns);
  }));
  ASSERT_EQ(got.size(), n);
  for (std::size_t i = 0; i < n; ++i)
    EXPECT_EQ(got[i], mix(i)) << i;
  pool.block_on(call_in_task([&] {
    saturn::join_for(0, n, 7, [&](std::size_t i) { ran[i].fetch_add(1, std::memory_order_relaxed); });
    std::vector<std::function<void()>> none;
    saturn::join_all(none);
  }));
  expect_each_once(ran, n, "index");
}

// The first branch waits until the second has started: on a multi-worker pool only a
// thief can start it, so this checks the stolen path (and that the fork woke a worker).
TEST_P(pool_fork, a_stolen_branch_runs_on_another_worker_and_returns_its_value) {
  if (GetParam().threads < 2)
    GTEST_SKIP() << "needs a second worker to steal";
  thread_pool pool(options_for(GetParam()));
  for (int round = 0; round < 20; ++round) {
    auto [joiner, thief, value] = pool.block_on(call_in_task([] {
      std::atomic<bool> started{false};
      std::thread::id b_thread;
      auto [ok, v] = saturn::join([&] { return spin_until(started, 10s); },
                                  [&] {
                                    started.store(true, std::memory_order_release);
                                    b_thread = std::this_thread::get_id();
                                    std::this_thread::sleep_for(1ms);
                                    return std::string(100, 'v');  // heap value through the fork
                                  });
      EXPECT_TRUE(ok) << "the second branch never started: nobody stole it";
      return std::make_tuple(std::this_thread::get_id(), b_thread, v);
    }));
    EXPECT_NE(joiner, thief);
    EXPECT_EQ(value, std::string(100, 'v'));
  }
}

TEST_P(pool_fork, exceptions_propagate_stolen_or_not) {
  thread_pool pool(options_for(GetParam()));
  const bool can_steal = GetParam().threads >= 2;
  pool.block_on(call_in_task([can_steal] {
    // b throws inline (or stolen, by chance).
    EXPECT_THROW(saturn::join([] { return 1; }, [] { throw std::runtime_error("b"); return 2; }), std::runtime_error);
    // a throws: b still runs to its end, and a's exception is the one seen.
    std::atomic<int> b_done{0};
    try {
      saturn::join([] { throw std::logic_error("a"); }, [&] { b_done.fetch_add(1); });
      ADD_FAILURE() << "no exception";
    } catch (const std::logic_error& e) {
      EXPECT_STREQ(e.what(), "a");
    }
    EXPECT_EQ(b_done.load(), 1);
    if (!can_steal)
      return;
    // b stolen and throwing (forced steal, as above).
    std::atomic<bool> started{false};
    try {
      saturn::join([&] { (void)spin_until(started, 10s); },
                   [&] {
                     started.store(true, std::memory_order_release);
                     throw std::out_of_range("stolen b");
                   });
      ADD_FAILURE() << "no exception";
    } catch (const std::out_of_range& e) {
      EXPECT_STREQ(e.what(), "stolen b");
    }
    // a throws while the stolen b is still running: join waits for b first.
    std::atomic<bool> started2{false};
    std::atomic<bool> b_finished{false};
    try {
      saturn::join(
          [&] {
            (void)spin_until(started2, 10s);
            throw std::runtime_error("a first");
          },
          [&] {
            started2.store(true, std::memory_order_release);
            std::this_thread::sleep_for(5ms);
            b_finished.store(true, std::memory_order_release);
          });
      ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "a first");
    }
    EXPECT_TRUE(b_finished.load(std::memory_order_acquire)) << "join returned before the stolen branch ended";
  }));
}

/// A tree whose leaves throw when mix(i) % 97 == 0; every leaf still runs once.
std::uint64_t throwing_tree(std::uint64_t lo, std::uint64_t hi, std::atomic<std::uint32_t>* ran) {
  if (hi - lo == 1) {
    ran[lo].fetch_add(1, std::memory_order_relaxed);
    if (mix(lo) % 97 == 0)
      throw std::runtime_error("leaf " + std::to_string(lo));
    return mix(lo);
  }
  const std::uint64_t mid = lo + (hi - lo) / 2;
  auto [a, b] = saturn::join([&] { return throwing_tree(lo, mid, ran); }, [&] { return throwing_tree(mid, hi, ran); });
  return a + b;
}

TEST_P(pool_fork, stealing_stress_with_throwing_leaves) {
  constexpr std::uint64_t n = 1 << 14;
  std::uint64_t first_bad = n;
  for (std::uint64_t i = 0; i < n && first_bad == n; ++i)
    if (mix(i) % 97 == 0)
      first_bad = i;
  ASSERT_LT(first_bad, n);
  thread_pool pool(options_for(GetParam()));
  for (int round = 0; round < 10 / k_slow + 1; ++round) {
    auto ran = make_flags(n);
    // The leftmost throwing leaf's exception wins (the first branch's exception is kept).
    const std::string what = pool.block_on(call_in_task([&]() -> std::string {
      try {
        (void)throwing_tree(0, n, ran.get());
      } catch (const std::runtime_error& e) {
        return e.what();
      }
      return "no exception";
    }));
    EXPECT_EQ(what, "leaf " + std::to_string(first_bad));
    expect_each_once(ran, n, "leaf");
  }
}

TEST_P(pool_fork, many_tasks_join_at_once_and_a_branch_may_spawn) {
  constexpr int tasks = 16;
  constexpr std::uint64_t n = 1 << 12;
  thread_pool pool(options_for(GetParam()));
  auto body = [](thread_pool* p, int k) -> task<std::uint64_t> {
    std::vector<join_handle<std::uint64_t>> spawned;
    auto ran = make_flags(n);
    auto [sum, extra] = saturn::join([&] { return tree_sum(0, n, ran.get()); },
                                     [&] {
                                       // a spawn inside a branch: runs during or after the join
                                       spawned.push_back(p->spawn(call_in_task([k] { return mix(k); })));
                                       return std::uint64_t{1};
                                     });
    std::uint64_t total = sum + extra;
    for (auto& h : spawned)
      total += co_await std::move(h);
    co_return total;
  };
  auto all = [&]() -> task<std::uint64_t> {
    std::vector<join_handle<std::uint64_t>> hs;
    for (int k = 0; k < tasks; ++k)
      hs.push_back(pool.spawn(body(&pool, k)));
    std::uint64_t total = 0;
    for (auto& h : hs)
      total += co_await std::move(h);
    co_return total;
  };
  std::uint64_t want = 0;
  for (int k = 0; k < tasks; ++k)
    want += expected_sum(n) + 1 + mix(k);
  EXPECT_EQ(pool.block_on(all()), want);
}

TEST_P(pool_fork, a_joiner_waiting_long_for_a_thief_sleeps_and_wakes) {
  if (GetParam().threads < 2)
    GTEST_SKIP() << "needs a second worker to steal";
  thread_pool pool(options_for(GetParam()));
  const auto elapsed = pool.block_on(call_in_task([] {
    std::atomic<bool> started{false};
    const auto t0 = std::chrono::steady_clock::now();
    auto [a, b] = saturn::join([&] { return spin_until(started, 10s); },
                               [&] {
                                 started.store(true, std::memory_order_release);
                                 std::this_thread::sleep_for(30ms);  // long past the joiner's spin
                                 return 5;
                               });
    EXPECT_TRUE(a);
    EXPECT_EQ(b, 5);
    return std::chrono::steady_clock::now() - t0;
  }));
  EXPECT_GE(elapsed, 30ms);
}

}  // namespace

namespace {

std::uint64_t total_wakeups() {
  std::uint64_t n = 0;
  for (const saturn::pool_stats& p : saturn::live_pool_stats())
    for (const saturn::worker_stats& w : p.workers)
      n += w.wakeups;
  return n;
}

// The cost model: a wake of a parked worker is tens of microseconds, so forks must not
// wake one each. A fork wakes a sleeper only when nobody searches; once the other workers
// are busy stealing, forking wakes nobody. 2^16 forks may cost a handful of wake-ups (a
// worker that ran dry parks and is woken by the next fork), far below one per fork.
TEST_P(pool_fork, forks_do_not_wake_a_parked_worker_each) {
  if (GetParam().threads < 2)
    GTEST_SKIP() << "a single worker has nobody to wake";
  constexpr std::uint64_t n = 1 << 16;
  thread_pool pool(options_for(GetParam()));
  auto ran = make_flags(n);
  std::this_thread::sleep_for(20ms);  // the idle workers park
  const std::uint64_t before = total_wakeups();
  EXPECT_EQ(pool.block_on(call_in_task([&] { return tree_sum(0, n, ran.get()); })), expected_sum(n));
  const std::uint64_t woken = total_wakeups() - before;
  EXPECT_LT(woken, n / 64) << "forks woke parked workers " << woken << " times";
}

}  // namespace
