// when_any: the first child to end wins; losers are cancelled (sleeps, in-flight io_uring
// reads) and awaited until they have really ended; values of late losers are dropped; a
// randomized run is checked against an oracle built from the children's completion log.
#include <gtest/gtest.h>
#include <saturn/saturn.hpp>
#include "task/task_test_util.hpp"

#include "loop/test_support.hpp"
#include <saturn/sched/thread_pool.hpp>
#include <saturn/task/when_any.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>
#include <stdexcept>
#include <string>
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


task<int> nop_child(int value) {
  auto r = co_await saturn::nop();
  co_return r ? value : -1;
}

/// Not cancellable (only yields): ends with its value even after losing.
task<int> yielder(int n, int value, bool& ended) {
  co_await yield_n(n);
  ended = true;
  co_return value;
}

using pipe_pair = saturn_test::pipe_fds;

/// Reads from an empty pipe: an io_uring read that stays in the kernel until cancelled.
task<long> pipe_reader(int fd, bool& cancelled) {
  std::byte buf[16];
  auto r = co_await saturn::read(fd, buf);
  if (!r) {
    cancelled = r.err() == std::errc::operation_canceled;
    co_return -1;
  }
  co_return static_cast<long>(*r);
}

}  // namespace

TEST(when_any, fast_nop_beats_ten_second_sleeper_which_is_cancelled_and_awaited) {
  saturn::runtime rt;
  bool sleeper_cancelled = false;
  const auto start = saturn::clock::now();
  auto r = rt.block_on([&]() -> task<std::variant<int, int>> {
    co_return co_await saturn::when_any(nop_child(7), sleeper(10s, sleeper_cancelled, 1));
  }());
  EXPECT_LT(saturn::clock::now() - start, 5s);  // promptly: not after the sleep
  ASSERT_EQ(r.index(), 0u);
  EXPECT_EQ(std::get<0>(r), 7);
  EXPECT_TRUE(sleeper_cancelled);  // it ended before when_any returned
  EXPECT_EQ(rt.loop().timer_count(), 0u);
}

TEST(when_any, pipe_read_loser_is_cancelled_in_the_kernel_and_awaited) {
  pipe_pair p;
  saturn::runtime rt;
  bool read_cancelled = false;
  std::size_t in_flight_at_return = 99;
  auto r = rt.block_on([&]() -> task<std::variant<long, int>> {
    auto v = co_await saturn::when_any(pipe_reader(p.r, read_cancelled), []() -> task<int> {
      (void)co_await saturn::sleep_for(2ms);  // by now the read is waiting in the kernel
      co_return 5;
    }());
    in_flight_at_return = saturn::event_loop::current()->in_flight();
    co_return v;
  }());
  ASSERT_EQ(r.index(), 1u);
  EXPECT_EQ(std::get<1>(r), 5);
  EXPECT_TRUE(read_cancelled);
  EXPECT_EQ(in_flight_at_return, 0u);  // the read's final CQE had arrived
  // Nothing still reads the pipe: a byte written now stays there for us.
  const char c = 'x';
  ASSERT_EQ(::write(p.w, &c, 1), 1);
  ASSERT_EQ(::fcntl(p.r, F_SETFL, O_NONBLOCK), 0);
  char got = 0;
  EXPECT_EQ(::read(p.r, &got, 1), 1);
  EXPECT_EQ(got, 'x');
}

TEST(when_any, index_distinguishes_children_of_the_same_type) {
  saturn::runtime rt;
  bool c0 = false;
  bool c2 = false;
  auto r = rt.block_on([&]() -> task<std::variant<int, int, int>> {
    co_return co_await saturn::when_any(sleeper(10s, c0, 0), sleeper(1ms, c0, 11), sleeper(10s, c2, 2));
  }());
  ASSERT_EQ(r.index(), 1u);
  EXPECT_EQ(std::get<1>(r), 11);
  EXPECT_TRUE(c0);
  EXPECT_TRUE(c2);
}

TEST(when_any, void_children_give_monostate) {
  saturn::runtime rt;
  auto r = rt.block_on([]() -> task<std::variant<std::monostate, int>> {
    bool unused = false;
    co_return co_await saturn::when_any(yield_n(1), sleeper(10s, unused, 3));
  }());
  EXPECT_EQ(r.index(), 0u);
}

TEST(when_any, a_loser_that_finishes_anyway_is_discarded_but_awaited) {
  saturn::runtime rt;
  bool a_ended = false;
  bool b_ended = false;
  auto r = rt.block_on([&]() -> task<std::variant<int, int>> {
    co_return co_await saturn::when_any(yielder(1, 10, a_ended), yielder(5, 20, b_ended));
  }());
  ASSERT_EQ(r.index(), 0u);
  EXPECT_EQ(std::get<0>(r), 10);
  EXPECT_TRUE(a_ended);
  EXPECT_TRUE(b_ended);  // not cancellable, so it ran to its end — and when_any waited
}

TEST(when_any, a_losers_exception_is_dropped) {
  saturn::runtime rt;
  bool ended = false;
  auto r = rt.block_on([&]() -> task<std::variant<int, int>> {
    co_return co_await saturn::when_any(yielder(1, 10, ended), []() -> task<int> {
      co_await yield_n(3);
      throw child_error(1);
    }());
  }());
  EXPECT_EQ(r.index(), 0u);
}

TEST(when_any, a_winners_exception_is_rethrown_after_the_losers_ended) {
  saturn::runtime rt;
  bool cancelled = false;
  try {
    rt.block_on([&]() -> task<> {
      co_await saturn::when_any(sleeper(10s, cancelled, 0), []() -> task<int> {
        co_await yield_n(2);
        throw child_error(1);
      }());
    }());
    FAIL() << "when_any did not rethrow";
  } catch (const child_error& e) {
    EXPECT_EQ(e.index, 1u);
  }
  EXPECT_TRUE(cancelled);
}

TEST(when_any, vector_form_returns_the_index_of_the_winner) {
  saturn::runtime rt;
  constexpr std::size_t n = 100;
  constexpr std::size_t fast = 37;
  std::vector<char> cancelled(n, 0);
  auto r = rt.block_on([&]() -> task<saturn::when_any_result<int>> {
    std::vector<task<int>> ts;
    for (std::size_t i = 0; i < n; ++i)
      ts.push_back([](std::size_t k, char& c) -> task<int> {
        bool b = false;
        int v = co_await sleeper(k == fast ? 1ms : 10s, b, static_cast<int>(k) * 2);
        c = b;
        co_return v;
      }(i, cancelled[i]));
    co_return co_await saturn::when_any(std::move(ts));
  }());
  EXPECT_EQ(r.index, fast);
  EXPECT_EQ(r.value, static_cast<int>(fast) * 2);
  EXPECT_EQ(std::count(cancelled.begin(), cancelled.end(), 1), static_cast<long>(n - 1));
  EXPECT_EQ(cancelled[fast], 0);
}

TEST(when_any, empty_vector_is_rejected) {
  saturn::runtime rt;
  EXPECT_THROW(rt.block_on([]() -> task<saturn::when_any_result<int>> {
    co_return co_await saturn::when_any(std::vector<task<int>>{});
  }()),
               std::invalid_argument);
}

TEST(when_any, parent_timeout_cancels_every_child) {
  saturn::runtime rt;
  bool c0 = false;
  bool c1 = false;
  bool read_cancelled = false;
  pipe_pair p;
  std::size_t winner = 99;
  auto r = rt.block_on([&]() -> task<saturn::result<void>> {
    co_return co_await saturn::with_timeout(5ms, [](std::size_t& w, bool& a, bool& b, int fd, bool& rc) -> task<> {
      auto v = co_await saturn::when_any(sleeper(10s, a, 0), sleeper(10s, b, 1), pipe_reader(fd, rc));
      w = v.index();  // whichever cancelled child ended first
    }(winner, c0, c1, p.r, read_cancelled));
  }());
  ASSERT_FALSE(r.has_value());
  EXPECT_LT(winner, 3u);
  EXPECT_EQ(r.err().code, std::make_error_code(std::errc::timed_out));
  EXPECT_TRUE(c0);
  EXPECT_TRUE(c1);
  EXPECT_TRUE(read_cancelled);
  EXPECT_EQ(rt.loop().in_flight(), 0u);
}

TEST(when_any, nested_in_when_any) {
  saturn::runtime rt;
  bool c = false;
  auto r = rt.block_on([&]() -> task<std::variant<std::variant<int, int>, int>> {
    co_return co_await saturn::when_any(saturn::when_any(sleeper(10s, c, 1), nop_child(2)), sleeper(10s, c, 3));
  }());
  ASSERT_EQ(r.index(), 0u);
  EXPECT_EQ(std::get<0>(r).index(), 1u);
  EXPECT_EQ(std::get<1>(std::get<0>(r)), 2);
}

// ---- randomized: N children, random sleeps 0-2 ms, random failures, fixed seed.
namespace {
task<int> planned(std::size_t i, std::chrono::microseconds sleep, bool fail, std::vector<logged>& log) {
  auto r = co_await saturn::sleep_for(sleep);
  if (!r) {
    log.push_back({i, outcome::cancelled});
    co_return -1;
  }
  if (fail) {
    log.push_back({i, outcome::failed});
    throw child_error(i);
  }
  log.push_back({i, outcome::ok});
  co_return static_cast<int>(i * 5 + 2);
}
}  // namespace

TEST(when_any, randomized_against_oracle) {
  std::mt19937 rng(77031);
  saturn::runtime rt;
  for (int round = 0; round < 60; ++round) {
    const std::size_t n = 1 + rng() % 48;
    std::vector<std::chrono::microseconds> sleeps(n);
    std::vector<bool> fails(n);
    for (std::size_t i = 0; i < n; ++i) {
      sleeps[i] = std::chrono::microseconds(rng() % 2001);
      fails[i] = rng() % 4 == 0;
    }
    std::vector<logged> log;
    std::size_t thrown = ~std::size_t{0};
    saturn::when_any_result<int> res{~std::size_t{0}, 0};
    try {
      res = rt.block_on([&]() -> task<saturn::when_any_result<int>> {
        std::vector<task<int>> ts;
        for (std::size_t i = 0; i < n; ++i)
          ts.push_back(planned(i, sleeps[i], fails[i], log));
        co_return co_await saturn::when_any(std::move(ts));
      }());
    } catch (const child_error& e) {
      thrown = e.index;
    }
    // Every child, winner and losers, ended before when_any returned.
    ASSERT_EQ(log.size(), n) << "round " << round;
    std::vector<int> seen(n, 0);
    for (const logged& l : log)
      ++seen[l.index];
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
    // The oracle: the first entry of the log is the winner.
    const logged& first = log.front();
    ASSERT_NE(first.what, outcome::cancelled) << "round " << round;
    if (first.what == outcome::failed) {
      EXPECT_EQ(thrown, first.index) << "round " << round;
    } else {
      EXPECT_EQ(thrown, ~std::size_t{0}) << "round " << round;
      EXPECT_EQ(res.index, first.index) << "round " << round;
      EXPECT_EQ(res.value, static_cast<int>(first.index * 5 + 2)) << "round " << round;
    }
  }
  EXPECT_EQ(rt.loop().timer_count(), 0u);
}

// ---- on the work-stealing thread_pool: losers sleep on other workers' loops, so the
// winner's stop reaches them across threads (the posted-cancel path).
TEST(when_any, on_a_thread_pool_losers_on_other_workers_are_cancelled_and_awaited) {
  saturn::thread_pool pool(saturn::pool_options{.threads = 4});
  std::atomic<int> cancelled{0};
  constexpr std::size_t sleepers = 100;
  const auto start = saturn::clock::now();
  auto r = pool.block_on([&]() -> task<saturn::when_any_result<int>> {
    std::vector<task<int>> ts;
    for (std::size_t i = 0; i < sleepers; ++i)
      ts.push_back([](std::atomic<int>& c) -> task<int> {
        auto s = co_await saturn::sleep_for(10s);
        if (is_canceled(s))
          c.fetch_add(1);
        co_return 0;
      }(cancelled));
    ts.push_back([]() -> task<int> {
      (void)co_await saturn::sleep_for(2ms);  // the sleepers are armed by now
      auto n = co_await saturn::nop();
      co_return n ? 99 : -1;
    }());
    co_return co_await saturn::when_any(std::move(ts));
  }());
  EXPECT_EQ(r.index, sleepers);
  EXPECT_EQ(r.value, 99);
  EXPECT_EQ(cancelled.load(), static_cast<int>(sleepers));
  EXPECT_LT(saturn::clock::now() - start, 5s);
}

TEST(when_any, on_a_thread_pool_many_rounds) {
  saturn::thread_pool pool(saturn::pool_options{.threads = 4});
  std::mt19937 rng(99);
  for (int round = 0; round < 50; ++round) {
    const std::size_t n = 2 + rng() % 30;
    std::vector<unsigned> sleeps(n);
    for (unsigned& s : sleeps)
      s = static_cast<unsigned>(rng() % 2001);
    std::atomic<int> ended{0};
    auto r = pool.block_on([&]() -> task<saturn::when_any_result<std::size_t>> {
      std::vector<task<std::size_t>> ts;
      for (std::size_t i = 0; i < n; ++i)
        ts.push_back([](std::size_t k, unsigned us, std::atomic<int>& e) -> task<std::size_t> {
          auto s = co_await saturn::sleep_for(std::chrono::microseconds(us));
          e.fetch_add(1);
          co_return s ? k : ~std::size_t{0};
        }(i, sleeps[i], ended));
      co_return co_await saturn::when_any(std::move(ts));
    }());
    EXPECT_EQ(ended.load(), static_cast<int>(n)) << "round " << round;  // all awaited
    EXPECT_EQ(r.value, r.index) << "round " << round;                    // the winner slept fully
  }
}
