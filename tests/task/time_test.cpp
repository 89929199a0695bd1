// Time for tasks: sleep_for / sleep_until never end before their deadline, past deadlines
// return promptly, many random sleeps wake in deadline order (checked against a sorted
// oracle), and with_timeout in both outcomes, including a nested pair and the guarantee
// that a timed-out child's in-flight read was cancelled in the kernel and awaited before
// with_timeout returned.
#include <gtest/gtest.h>
#include <saturn/saturn.hpp>
#include "task/task_test_util.hpp"

#include "loop/test_support.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using saturn::result;
using saturn::task;
using saturn_test::pipe_fds;
using task_test::root_ctx;
using task_test::bytes;

/// What a child task reports about its own read, written before it returns.
struct read_report {
  bool finished = false;
  saturn::error err{};
  bool ok = false;
  std::size_t n = 0;
};

/// Children in these tests return the result of what they awaited: with_timeout reports
/// timed_out when the deadline passed and the child ended with operation_canceled.
task<result<std::size_t>> read_one_byte(int fd, read_report* rep) {
  std::string buf(1, '\0');
  auto r = co_await saturn::read(fd, bytes(buf));
  rep->ok = r.has_value();
  if (r)
    rep->n = *r;
  else
    rep->err = r.err();
  rep->finished = true;
  co_return r;
}

}  // namespace

TEST(task_time, sleep_for_never_returns_before_its_deadline) {
  saturn::runtime rt;
  const int early = rt.block_on([]() -> task<int> {
    std::mt19937 rng(7);
    int too_early = 0;
    for (int i = 0; i < 300; ++i) {
      // 0 .. ~1 ms, with a few exact zeros and sub-microsecond values
      const auto d = std::chrono::nanoseconds(i % 10 == 0 ? 0 : static_cast<long>(rng() % 1'000'000));
      const auto t0 = saturn::clock::now();
      auto r = co_await saturn::sleep_for(d);
      const auto t1 = saturn::clock::now();
      EXPECT_TRUE(r.has_value());
      if (t1 - t0 < d)
        ++too_early;
    }
    co_return too_early;
  }());
  EXPECT_EQ(early, 0);
}

TEST(task_time, sleep_until_never_returns_before_its_deadline) {
  saturn::runtime rt;
  rt.block_on([]() -> task<> {
    for (auto d : {1us, 50us, 500us, 2000us}) {
      const auto deadline = saturn::clock::now() + d;
      auto r = co_await saturn::sleep_until(deadline);
      EXPECT_TRUE(r.has_value());
      EXPECT_GE(saturn::clock::now(), deadline);
    }
  }());
}

TEST(task_time, sleep_until_in_the_past_returns_promptly) {
  saturn::runtime rt;
  rt.block_on([]() -> task<> {
    const auto t0 = saturn::clock::now();
    for (int i = 0; i < 100; ++i) {
      auto r = co_await saturn::sleep_until(saturn::clock::now() - 1s);
      EXPECT_TRUE(r.has_value());
    }
    auto r = co_await saturn::sleep_for(-5ms);
    EXPECT_TRUE(r.has_value());
    // 101 past deadlines: no waiting at all (generous bound against a loaded machine)
    EXPECT_LT(saturn::clock::now() - t0, 200ms);
  }());
  EXPECT_EQ(rt.loop().timer_count(), 0u);
}

// 400 spawned tasks sleep until distinct random deadlines (all at least 40 ms away, so
// every timer is armed before the first is due). Oracle: they wake in deadline order, and
// each one after its deadline.
TEST(task_time, many_random_sleeps_wake_in_deadline_order) {
  saturn::runtime rt;
  constexpr int n = 400;
  struct wake {
    int id;
    saturn::clock::time_point deadline;
    saturn::clock::time_point woke;
  };
  std::vector<wake> wakes;
  std::vector<saturn::clock::time_point> deadlines(n);
  rt.block_on([](std::vector<wake>* ws, std::vector<saturn::clock::time_point>* dl) -> task<> {
    auto* root = co_await root_ctx();
    std::vector<int> slot(n);
    std::iota(slot.begin(), slot.end(), 0);
    std::shuffle(slot.begin(), slot.end(), std::mt19937(31337));
    const auto base = saturn::clock::now() + 40ms;
    std::vector<saturn::join_handle<void>> hs;
    for (int i = 0; i < n; ++i) {
      // distinct: 50 µs apart, in shuffled order → 40..60 ms from now
      (*dl)[static_cast<std::size_t>(i)] = base + std::chrono::microseconds(50 * slot[static_cast<std::size_t>(i)]);
      hs.push_back(saturn::spawn_in(*root, [](int id, saturn::clock::time_point d, std::vector<wake>* w) -> task<> {
        auto r = co_await saturn::sleep_until(d);
        EXPECT_TRUE(r.has_value());
        w->push_back({id, d, saturn::clock::now()});
      }(i, (*dl)[static_cast<std::size_t>(i)], ws)));
    }
    for (auto& h : hs)
      co_await std::move(h);
  }(&wakes, &deadlines));
  ASSERT_EQ(wakes.size(), static_cast<std::size_t>(n));
  std::vector<int> expected(n);
  std::iota(expected.begin(), expected.end(), 0);
  std::sort(expected.begin(), expected.end(), [&](int a, int b) {
    return deadlines[static_cast<std::size_t>(a)] < deadlines[static_cast<std::size_t>(b)];
  });
  std::vector<int> actual;
  for (const auto& w : wakes) {
    actual.push_back(w.id);
    EXPECT_GE(w.woke, w.deadline) << "task " << w.id << " woke before its deadline";
  }
  EXPECT_EQ(actual, expected);
}

TEST(task_time, with_timeout_task_finishes_first_gives_its_value) {
  saturn::runtime rt;
  rt.block_on([]() -> task<> {
    const auto t0 = saturn::clock::now();
    auto r = co_await saturn::with_timeout(5s, []() -> task<int> {
      (void)co_await saturn::sleep_for(200us);
      co_return 42;
    }());
    EXPECT_TRUE(r.has_value());
    EXPECT_EQ(r ? *r : 0, 42);
    EXPECT_LT(saturn::clock::now() - t0, 1s);  // did not wait for the deadline
    // the deadline timer was disarmed
    EXPECT_EQ(saturn::event_loop::current()->timer_count(), 0u);
    // void and move-only results
    auto v = co_await saturn::with_timeout(5s, []() -> task<> { co_return; }());
    EXPECT_TRUE(v.has_value());
    auto p = co_await saturn::with_timeout(5s, []() -> task<std::unique_ptr<int>> { co_return std::make_unique<int>(3); }());
    EXPECT_TRUE(p.has_value());
    if (p) {
      EXPECT_EQ(**p, 3);
    }
  }());
}

// The deadline passes while the child waits in a pipe read: with_timeout reports
// timed_out, and by then the child's read has ended in the kernel with operation_canceled
// and the child has run to its end.
TEST(task_time, with_timeout_deadline_first_cancels_the_childs_read) {
  saturn::runtime rt;
  pipe_fds p;
  rt.block_on([](int rfd) -> task<> {
    read_report rep;
    const auto t0 = saturn::clock::now();
    auto r = co_await saturn::with_timeout(3ms, read_one_byte(rfd, &rep));
    const auto t1 = saturn::clock::now();
    EXPECT_FALSE(r.has_value());
    if (!r) {
      EXPECT_TRUE(r.err() == std::errc::timed_out) << r.err().message();
      EXPECT_STREQ(r.err().operation, "with_timeout");
    }
    EXPECT_GE(t1 - t0, 3ms);
    EXPECT_TRUE(rep.finished) << "with_timeout returned before its child ended";
    EXPECT_FALSE(rep.ok);
    EXPECT_TRUE(rep.err == std::errc::operation_canceled) << rep.err.message();
    EXPECT_EQ(saturn::event_loop::current()->in_flight(), 0u);  // nothing left in the kernel
    EXPECT_EQ(saturn::event_loop::current()->timer_count(), 0u);
  }(p.r));
  // the pipe is still usable: no stale read swallows the next byte
  ASSERT_EQ(::write(p.w, "z", 1), 1);
  char c = 0;
  ASSERT_EQ(::read(p.r, &c, 1), 1);
  EXPECT_EQ(c, 'z');
}

TEST(task_time, with_timeout_around_a_long_sleep) {
  saturn::runtime rt;
  rt.block_on([]() -> task<> {
    saturn::error inner{};
    const auto t0 = saturn::clock::now();
    auto r = co_await saturn::with_timeout(2ms, [](saturn::error* e) -> task<> {
      auto s = co_await saturn::sleep_for(10s);
      if (!s)
        *e = s.err();
    }(&inner));
    EXPECT_FALSE(r.has_value());
    EXPECT_LT(saturn::clock::now() - t0, 5s);
    EXPECT_TRUE(inner == std::errc::operation_canceled);
    EXPECT_STREQ(inner.operation, "sleep");
  }());
}

TEST(task_time, with_timeout_propagates_the_childs_exception) {
  saturn::runtime rt;
  EXPECT_THROW(rt.block_on([]() -> task<> {
                 (void)co_await saturn::with_timeout(1s, []() -> task<int> {
                   (void)co_await saturn::nop();
                   throw std::runtime_error("child failed");
                 }());
               }()),
               std::runtime_error);
}

// Outer deadline first: the stop reaches the inner with_timeout's child through the chain;
// the inner one did not time out itself, so it reports operation_canceled (a stop from
// its caller), and the outer reports timed_out.
TEST(task_time, nested_with_timeout_outer_fires_first) {
  saturn::runtime rt;
  rt.block_on([]() -> task<> {
    saturn::error inner_sleep{};
    bool inner_returned = false;
    saturn::error inner_error{};
    const auto t0 = saturn::clock::now();
    auto outer = co_await saturn::with_timeout(
        3ms, [](saturn::error* e, bool* returned, saturn::error* inner_err) -> task<result<void>> {
          auto inner = co_await saturn::with_timeout(10s, [](saturn::error* ee) -> task<result<void>> {
            auto s = co_await saturn::sleep_for(10s);
            if (!s)
              *ee = s.err();
            co_return s;
          }(e));
          *returned = true;
          *inner_err = inner.err();
          co_return inner;
        }(&inner_sleep, &inner_returned, &inner_error));
    EXPECT_LT(saturn::clock::now() - t0, 5s);
    EXPECT_FALSE(outer.has_value());
    if (!outer) {
      EXPECT_TRUE(outer.err() == std::errc::timed_out);
    }
    EXPECT_TRUE(inner_returned);
    // the inner deadline (10 s) did not pass: cancelled by its caller, not timed out
    EXPECT_TRUE(inner_error == std::errc::operation_canceled) << inner_error.message();
    EXPECT_STREQ(inner_error.operation, "with_timeout");
    EXPECT_TRUE(inner_sleep == std::errc::operation_canceled);
    EXPECT_EQ(saturn::event_loop::current()->timer_count(), 0u);
  }());
}

TEST(task_time, nested_with_timeout_inner_fires_first) {
  saturn::runtime rt;
  rt.block_on([]() -> task<> {
    const auto t0 = saturn::clock::now();
    // the middle task turns the inner outcome into a plain value, so the outer one can be
    // told apart: 1 = the inner with_timeout timed out
    auto outer = co_await saturn::with_timeout(10s, []() -> task<int> {
      auto inner = co_await saturn::with_timeout(2ms, []() -> task<result<void>> {
        co_return co_await saturn::sleep_for(10s);
      }());
      co_return inner.has_value() ? 0 : inner.err() == std::errc::timed_out ? 1 : 2;
    }());
    EXPECT_LT(saturn::clock::now() - t0, 5s);
    EXPECT_TRUE(outer.has_value());  // the outer deadline did not pass
    if (outer) {
      EXPECT_EQ(*outer, 1);
    }
    EXPECT_EQ(saturn::event_loop::current()->timer_count(), 0u);
  }());
}

TEST(task_time, with_timeout_zero_deadline) {
  saturn::runtime rt;
  rt.block_on([]() -> task<> {
    // a child that finishes without suspending beats even a zero deadline
    auto quick = co_await saturn::with_timeout(0ns, []() -> task<int> { co_return 5; }());
    EXPECT_TRUE(quick.has_value());
    // one that suspends does not
    auto slow = co_await saturn::with_timeout(0ns, []() -> task<result<void>> {
      co_return co_await saturn::sleep_for(1s);
    }());
    EXPECT_FALSE(slow.has_value());
  }());
}
