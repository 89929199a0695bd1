// when_all: values in argument order, interleaving, first-exception-wins with the others
// cancelled and awaited, parent cancellation, and a randomized run checked against an
// oracle built from the children's own completion log.
#include <gtest/gtest.h>
#include <saturn/saturn.hpp>
#include "task/task_test_util.hpp"
#include <saturn/sched/thread_pool.hpp>
#include <saturn/task/task_group.hpp>
#include <saturn/task/when_all.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

namespace {

using namespace std::chrono_literals;
using saturn::task;
using task_test::is_canceled;
using task_test::yield_n;
using task_test::child_error;
using task_test::outcome;
using task_test::logged;
using task_test::sleeper;


/// Logs "<name><step>" around yields: shows how children interleave.
task<int> stepper(std::string name, int steps, std::vector<std::string>& log) {
  for (int i = 0; i < steps; ++i) {
    log.push_back(name + std::to_string(i));
    co_await saturn::yield();
  }
  co_return steps;
}

task<int> thrower_after(int yields, std::size_t index, bool* reached = nullptr) {
  co_await yield_n(yields);
  if (reached)
    *reached = true;
  throw child_error(index);
}

int g_target = 5;
task<int&> ref_child() { co_return g_target; }

}  // namespace

TEST(when_all, values_in_argument_order_with_void_as_monostate) {
  saturn::runtime rt;
  auto [a, s, v, b] = rt.block_on([]() -> task<std::tuple<int, std::string, std::monostate, int>> {
    bool unused = false;
    co_return co_await saturn::when_all(sleeper(3ms, unused, 1), []() -> task<std::string> { co_return "two"; }(),
                                        yield_n(3), sleeper(0ms, unused, 4));
  }());
  EXPECT_EQ(a, 1);
  EXPECT_EQ(s, "two");
  EXPECT_EQ(v, std::monostate{});
  EXPECT_EQ(b, 4);
}

TEST(when_all, children_interleave) {
  saturn::runtime rt;
  std::vector<std::string> log;
  auto [x, y] = rt.block_on([&]() -> task<std::tuple<int, int>> {
    co_return co_await saturn::when_all(stepper("a", 3, log), stepper("b", 3, log));
  }());
  EXPECT_EQ(x, 3);
  EXPECT_EQ(y, 3);
  EXPECT_EQ(log, (std::vector<std::string>{"a0", "b0", "a1", "b1", "a2", "b2"}));
}

TEST(when_all, empty_inputs_finish_at_once) {
  saturn::runtime rt;
  auto t = rt.block_on([]() -> task<std::tuple<>> { co_return co_await saturn::when_all(); }());
  EXPECT_EQ(std::tuple_size_v<decltype(t)>, 0u);
  auto v = rt.block_on([]() -> task<std::vector<int>> { co_return co_await saturn::when_all(std::vector<task<int>>{}); }());
  EXPECT_TRUE(v.empty());
  rt.block_on([]() -> task<> { co_await saturn::when_all(std::vector<task<>>{}); }());
}

TEST(when_all, references_come_back_as_reference_wrappers) {
  saturn::runtime rt;
  rt.block_on([]() -> task<> {
    auto [r] = co_await saturn::when_all(ref_child());
    r.get() = 9;
  }());
  EXPECT_EQ(g_target, 9);
}

TEST(when_all, vector_keeps_order_whatever_the_finish_order) {
  saturn::runtime rt;
  constexpr int n = 1000;
  std::vector<int> got = rt.block_on([]() -> task<std::vector<int>> {
    std::vector<task<int>> ts;
    for (int i = 0; i < n; ++i)
      ts.push_back([](int v) -> task<int> {
        co_await yield_n((v * 7919) % 13);  // finish in a scrambled order
        co_return v * v;
      }(i));
    co_return co_await saturn::when_all(std::move(ts));
  }());
  ASSERT_EQ(got.size(), static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(got[static_cast<std::size_t>(i)], i * i);
}

TEST(when_all, void_vector_runs_every_child) {
  saturn::runtime rt;
  int done = 0;
  rt.block_on([&]() -> task<> {
    std::vector<task<>> ts;
    for (int i = 0; i < 50; ++i)
      ts.push_back([](int& d, int k) -> task<> {
        co_await yield_n(k % 5);
        auto r = co_await saturn::nop();
        if (r)
          ++d;
      }(done, i));
    co_await saturn::when_all(std::move(ts));
  }());
  EXPECT_EQ(done, 50);
}

TEST(when_all, first_exception_wins_others_cancelled_and_awaited) {
  saturn::runtime rt;
  bool sleeper_cancelled = false;
  bool late_thrower_ran = false;
  try {
    rt.block_on([&]() -> task<> {
      // child 1 throws first (1 yield); child 2 throws later (not cancellable: yields
      // only) and its exception is dropped; child 0 sleeps 10 s and must be cancelled.
      co_await saturn::when_all(sleeper(10s, sleeper_cancelled, 0), thrower_after(1, 1),
                                thrower_after(4, 2, &late_thrower_ran));
    }());
    FAIL() << "when_all did not rethrow";
  } catch (const child_error& e) {
    EXPECT_EQ(e.index, 1u);
  }
  EXPECT_TRUE(sleeper_cancelled);  // ended (cancelled) before when_all returned
  EXPECT_TRUE(late_thrower_ran);   // awaited to its end, its exception dropped
  EXPECT_EQ(rt.loop().timer_count(), 0u);
}

TEST(when_all, in_flight_read_of_a_failing_sibling_is_cancelled_in_the_kernel) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  saturn::runtime rt;
  bool read_cancelled = false;
  EXPECT_THROW(rt.block_on([&]() -> task<> {
    co_await saturn::when_all(
        [](int fd, bool& c) -> task<> {
          std::byte buf[8];
          auto r = co_await saturn::read(fd, buf);
          c = !r && r.err() == std::errc::operation_canceled;
        }(fds[0], read_cancelled),
        [](std::size_t i) -> task<> {
          (void)co_await saturn::sleep_for(1ms);  // the read is in the kernel by now
          throw child_error(i);
        }(1));
  }()),
               child_error);
  EXPECT_TRUE(read_cancelled);
  EXPECT_EQ(rt.loop().in_flight(), 0u);
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(when_all, parent_timeout_reaches_the_children) {
  saturn::runtime rt;
  bool c0 = false;
  bool c1 = false;
  const auto start = saturn::clock::now();
  std::tuple<int, int> got{0, 0};
  auto r = rt.block_on([&]() -> task<saturn::result<void>> {
    co_return co_await saturn::with_timeout(5ms, [](std::tuple<int, int>& out, bool& a, bool& b) -> task<> {
      out = co_await saturn::when_all(sleeper(10s, a, 0), sleeper(10s, b, 1));
    }(got, c0, c1));
  }());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.err().code, std::make_error_code(std::errc::timed_out));
  EXPECT_EQ(got, std::make_tuple(-1, -1));  // when_all returned the children's own results
  EXPECT_TRUE(c0);
  EXPECT_TRUE(c1);
  EXPECT_LT(saturn::clock::now() - start, 5s);  // promptly, not after the 10 s sleeps
}

TEST(when_all, already_stopped_parent_cancels_children_at_their_first_await) {
  saturn::runtime rt;
  bool c0 = false;
  bool c1 = false;
  auto [a, b] = rt.block_on([&]() -> task<std::tuple<int, int>> {
    co_return co_await saturn::task_group::run([&](saturn::task_group& g) -> task<std::tuple<int, int>> {
      g.cancel();  // the body's own token is stopped before when_all starts
      co_return co_await saturn::when_all(sleeper(10s, c0, 0), sleeper(10s, c1, 1));
    });
  }());
  EXPECT_EQ(a, -1);
  EXPECT_EQ(b, -1);
  EXPECT_TRUE(c0 && c1);
}

TEST(when_all, empty_task_is_rejected) {
  saturn::runtime rt;
  EXPECT_THROW(rt.block_on([]() -> task<> {
    std::vector<task<int>> ts;
    ts.push_back(task<int>{});
    co_await saturn::when_all(std::move(ts));
  }()),
               std::invalid_argument);
}

TEST(when_all, nested_when_all) {
  saturn::runtime rt;
  auto [inner, c] = rt.block_on([]() -> task<std::tuple<std::tuple<int, int>, int>> {
    bool unused = false;
    co_return co_await saturn::when_all(saturn::when_all(sleeper(1ms, unused, 1), sleeper(2ms, unused, 2)),
                                        sleeper(1ms, unused, 3));
  }());
  EXPECT_EQ(std::get<0>(inner), 1);
  EXPECT_EQ(std::get<1>(inner), 2);
  EXPECT_EQ(c, 3);
}

// ---- randomized: N children, random sleeps 0-2 ms, random failures, fixed seed.
namespace {
struct plan {
  std::chrono::microseconds sleep;
  bool fail;
};

task<int> planned(std::size_t i, plan p, std::vector<logged>& log) {
  auto r = co_await saturn::sleep_for(p.sleep);
  if (!r) {
    log.push_back({i, outcome::cancelled});
    co_return -1;
  }
  if (p.fail) {
    log.push_back({i, outcome::failed});
    throw child_error(i);
  }
  log.push_back({i, outcome::ok});
  co_return static_cast<int>(i * 3 + 1);
}
}  // namespace

TEST(when_all, randomized_against_oracle) {
  std::mt19937 rng(20240607);
  saturn::runtime rt;
  for (int round = 0; round < 40; ++round) {
    const std::size_t n = 1 + rng() % 64;
    const double fail_rate = (round % 3 == 0) ? 0.0 : 0.05;
    std::vector<plan> plans(n);
    bool any_fail = false;
    for (plan& p : plans) {
      p.sleep = std::chrono::microseconds(rng() % 2001);
      p.fail = std::uniform_real_distribution<>(0, 1)(rng) < fail_rate;
      any_fail |= p.fail;
    }
    std::vector<logged> log;
    std::vector<int> values;
    std::size_t thrown = ~std::size_t{0};
    try {
      values = rt.block_on([&]() -> task<std::vector<int>> {
        std::vector<task<int>> ts;
        for (std::size_t i = 0; i < n; ++i)
          ts.push_back(planned(i, plans[i], log));
        co_return co_await saturn::when_all(std::move(ts));
      }());
    } catch (const child_error& e) {
      thrown = e.index;
    }
    // Every child ended before when_all returned, exactly once.
    ASSERT_EQ(log.size(), n) << "round " << round;
    std::vector<int> seen(n, 0);
    for (const logged& l : log)
      ++seen[l.index];
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; })) << "round " << round;

    const auto first_failure =
        std::find_if(log.begin(), log.end(), [](const logged& l) { return l.what == outcome::failed; });
    if (!any_fail) {
      ASSERT_EQ(values.size(), n);
      for (std::size_t i = 0; i < n; ++i)
        EXPECT_EQ(values[i], static_cast<int>(i * 3 + 1));
      EXPECT_TRUE(std::none_of(log.begin(), log.end(), [](const logged& l) { return l.what != outcome::ok; }));
    } else {
      // The first failure by completion order is the one rethrown...
      ASSERT_NE(first_failure, log.end()) << "round " << round;
      EXPECT_EQ(thrown, first_failure->index) << "round " << round;
      // ...nothing was cancelled before it, and whatever failed was planned to.
      EXPECT_TRUE(std::none_of(log.begin(), first_failure, [](const logged& l) { return l.what == outcome::cancelled; }));
      for (const logged& l : log) {
        if (l.what == outcome::failed) {
          EXPECT_TRUE(plans[l.index].fail);
        }
      }
    }
  }
  EXPECT_EQ(rt.loop().timer_count(), 0u);
}

// ---- on the work-stealing thread_pool: children end on other workers than the parent.
TEST(when_all, on_a_thread_pool) {
  saturn::thread_pool pool(saturn::pool_options{.threads = 4});
  constexpr std::size_t n = 2000;
  std::vector<std::size_t> got = pool.block_on([]() -> task<std::vector<std::size_t>> {
    std::vector<task<std::size_t>> ts;
    for (std::size_t i = 0; i < n; ++i)
      ts.push_back([](std::size_t k) -> task<std::size_t> {
        for (std::size_t j = 0; j < k % 4; ++j)
          co_await saturn::yield();
        auto r = co_await saturn::nop();
        co_return r ? k * k : 0;
      }(i));
    co_return co_await saturn::when_all(std::move(ts));
  }());
  ASSERT_EQ(got.size(), n);
  for (std::size_t i = 0; i < n; ++i)
    EXPECT_EQ(got[i], i * i);
}

TEST(when_all, on_a_thread_pool_a_failure_cancels_sleepers_on_other_workers) {
  saturn::thread_pool pool(saturn::pool_options{.threads = 4});
  std::atomic<int> cancelled{0};
  constexpr int sleepers = 200;
  const auto start = saturn::clock::now();
  EXPECT_THROW(pool.block_on([&]() -> task<> {
    std::vector<task<>> ts;
    for (int i = 0; i < sleepers; ++i)
      ts.push_back([](std::atomic<int>& c) -> task<> {
        auto r = co_await saturn::sleep_for(10s);
        if (is_canceled(r))
          c.fetch_add(1);
      }(cancelled));
    ts.push_back([]() -> task<> {
      (void)co_await saturn::sleep_for(2ms);
      throw child_error(999);
    }());
    co_await saturn::when_all(std::move(ts));
  }()),
               child_error);
  EXPECT_EQ(cancelled.load(), sleepers);  // every sleeper ended before when_all returned
  EXPECT_LT(saturn::clock::now() - start, 5s);
}
