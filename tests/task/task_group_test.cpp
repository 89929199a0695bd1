// task_group: run() joins every child; children interleave with the body; cancel() and the
// first exception stop everything; the caller's cancellation reaches the children (also
// from another thread); a randomized run against an oracle; 10,000 children in one group;
// a runtime destroyed under a group with suspended children frees them (ASan checks).
#include <gtest/gtest.h>
#include <saturn/saturn.hpp>
#include "task/task_test_util.hpp"
#include <saturn/sched/thread_pool.hpp>
#include <saturn/task/task_group.hpp>
#include <saturn/task/when_all.hpp>
#include <saturn/task/when_any.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using saturn::task;
using saturn::task_group;
using task_test::is_canceled;
using task_test::yield_n;
using task_test::child_error;
using task_test::outcome;
using task_test::logged;

/// Sleeps `d`, then records how the sleep ended (set only once it really ended).
task<> sleeper(std::chrono::nanoseconds d, int& state) {  // state: 1 slept, 2 cancelled
  auto r = co_await saturn::sleep_for(d);
  state = is_canceled(r) ? 2 : 1;
}

}  // namespace

TEST(task_group, run_waits_for_every_child) {
  saturn::runtime rt;
  std::vector<int> state(10, 0);
  bool body_ended_first = false;
  rt.block_on(task_group::run([&](task_group& g) -> task<> {
    for (std::size_t i = 0; i < state.size(); ++i)
      g.spawn(sleeper(std::chrono::milliseconds(i), state[i]));
    body_ended_first = std::all_of(state.begin(), state.end(), [](int s) { return s == 0; });
    co_return;
  }));
  EXPECT_TRUE(body_ended_first);
  EXPECT_TRUE(std::all_of(state.begin(), state.end(), [](int s) { return s == 1; }));
  EXPECT_EQ(rt.live_tasks(), 0u);
}

TEST(task_group, returns_the_bodys_value) {
  saturn::runtime rt;
  int side = 0;
  int v = rt.block_on([&]() -> task<int> {
    co_return co_await task_group::run([&](task_group& g) -> task<int> {
      g.spawn([](int& s) -> task<> {
        (void)co_await saturn::sleep_for(1ms);
        s = 5;
      }(side));
      co_return 42;
    });
  }());
  EXPECT_EQ(v, 42);
  EXPECT_EQ(side, 5);
}

TEST(task_group, children_interleave_with_the_body) {
  saturn::runtime rt;
  std::vector<std::string> log;
  rt.block_on(task_group::run([&](task_group& g) -> task<> {
    for (int c = 0; c < 2; ++c)
      g.spawn([](int id, std::vector<std::string>& l) -> task<> {
        for (int i = 0; i < 2; ++i) {
          l.push_back("c" + std::to_string(id) + "." + std::to_string(i));
          co_await saturn::yield();
        }
      }(c, log));
    log.emplace_back("body0");
    co_await saturn::yield();
    log.emplace_back("body1");
    co_await saturn::yield();
    log.emplace_back("body2");
  }));
  EXPECT_EQ(log, (std::vector<std::string>{"body0", "c0.0", "c1.0", "body1", "c0.1", "c1.1", "body2"}));
}

TEST(task_group, children_may_spawn_into_the_group) {
  saturn::runtime rt;
  int leaves = 0;
  rt.block_on(task_group::run([&](task_group& g) -> task<> {
    struct tree {
      static task<> grow(task_group& grp, int depth, int& count) {
        co_await saturn::yield();
        if (depth == 0) {
          ++count;
          co_return;
        }
        grp.spawn(grow(grp, depth - 1, count));
        grp.spawn(grow(grp, depth - 1, count));
      }
    };
    g.spawn(tree::grow(g, 8, leaves));
    co_return;
  }));
  EXPECT_EQ(leaves, 256);
}

TEST(task_group, cancel_stops_every_child_and_the_body) {
  saturn::runtime rt;
  std::vector<int> state(100, 0);
  int body_state = 0;
  const auto start = saturn::clock::now();
  rt.block_on(task_group::run([&](task_group& g) -> task<> {
    for (int& s : state)
      g.spawn(sleeper(10s, s));
    co_await saturn::yield();  // let them start and arm their timers
    g.cancel();
    EXPECT_TRUE(g.stop_requested());
    EXPECT_TRUE(g.token().stop_requested());
    co_await sleeper(10s, body_state);  // the body runs under the group's token too
  }));
  EXPECT_LT(saturn::clock::now() - start, 5s);
  EXPECT_TRUE(std::all_of(state.begin(), state.end(), [](int s) { return s == 2; }));
  EXPECT_EQ(body_state, 2);
  EXPECT_EQ(rt.loop().timer_count(), 0u);
}

TEST(task_group, first_child_exception_cancels_the_rest_and_is_rethrown) {
  saturn::runtime rt;
  std::vector<int> state(20, 0);
  int body_state = 0;
  bool late_ran = false;
  try {
    rt.block_on(task_group::run([&](task_group& g) -> task<> {
      for (int& s : state)
        g.spawn(sleeper(10s, s));
      g.spawn([]() -> task<> {
        co_await yield_n(2);
        throw child_error(1);
      }());
      g.spawn([](bool& ran) -> task<> {
        co_await yield_n(6);  // not cancellable: throws later; dropped
        ran = true;
        throw child_error(2);
      }(late_ran));
      co_await sleeper(10s, body_state);
    }));
    FAIL() << "run did not rethrow";
  } catch (const child_error& e) {
    EXPECT_EQ(e.index, 1u);
  }
  EXPECT_TRUE(std::all_of(state.begin(), state.end(), [](int s) { return s == 2; }));
  EXPECT_EQ(body_state, 2);
  EXPECT_TRUE(late_ran);
  EXPECT_EQ(rt.live_tasks(), 0u);
}

TEST(task_group, body_exception_cancels_children_and_is_rethrown) {
  saturn::runtime rt;
  std::vector<int> state(5, 0);
  EXPECT_THROW(rt.block_on(task_group::run([&](task_group& g) -> task<> {
    for (int& s : state)
      g.spawn(sleeper(10s, s));
    co_await saturn::yield();
    throw child_error(99);
  })),
               child_error);
  EXPECT_TRUE(std::all_of(state.begin(), state.end(), [](int s) { return s == 2; }));
}

TEST(task_group, parent_timeout_reaches_children) {
  saturn::runtime rt;
  std::vector<int> state(8, 0);
  int read_state = 0;
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  auto r = rt.block_on([&]() -> task<saturn::result<void>> {
    co_return co_await saturn::with_timeout(5ms, task_group::run([&](task_group& g) -> task<> {
      for (int& s : state)
        g.spawn(sleeper(10s, s));
      g.spawn([](int fd, int& st) -> task<> {
        std::byte buf[4];
        auto rr = co_await saturn::read(fd, buf);
        st = (!rr && rr.err() == std::errc::operation_canceled) ? 2 : 1;
      }(fds[0], read_state));
      co_return;
    }));
  }());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.err().code, std::make_error_code(std::errc::timed_out));
  EXPECT_TRUE(std::all_of(state.begin(), state.end(), [](int s) { return s == 2; }));
  EXPECT_EQ(read_state, 2);
  EXPECT_EQ(rt.loop().in_flight(), 0u);
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(task_group, stop_from_another_thread_reaches_children) {
  saturn::runtime rt;
  std::stop_source outside;
  saturn::task_context ctx{&rt, outside.get_token()};
  std::vector<int> state(16, 0);
  std::atomic<int> started{0};
  auto h = saturn::spawn_in(ctx, task_group::run([&](task_group& g) -> task<> {
    for (int& s : state)
      g.spawn([](int& st, std::atomic<int>& n) -> task<> {
        n.fetch_add(1);
        co_await sleeper(10s, st);
      }(s, started));
    co_return;
  }));
  std::thread stopper([&] {
    while (started.load() < 16)
      std::this_thread::yield();
    std::this_thread::sleep_for(2ms);  // the children are asleep in the loop by now
    outside.request_stop();            // callbacks run here, off the loop thread
  });
  rt.block_on([](saturn::join_handle<void>& jh) -> task<> { co_await jh; }(h));
  stopper.join();
  EXPECT_TRUE(std::all_of(state.begin(), state.end(), [](int s) { return s == 2; }));
}

TEST(task_group, empty_task_is_rejected_and_the_group_still_joins) {
  saturn::runtime rt;
  int s = 0;
  EXPECT_THROW(rt.block_on(task_group::run([&](task_group& g) -> task<> {
    g.spawn(sleeper(1ms, s));
    g.spawn(task<>{});
    co_return;
  })),
               std::invalid_argument);
  EXPECT_EQ(s, 2);  // cancelled by the body's failure, and awaited
}

TEST(task_group, composes_with_when_all_and_when_any) {
  saturn::runtime rt;
  std::vector<int> sums(10, 0);
  rt.block_on(task_group::run([&](task_group& g) -> task<> {
    for (std::size_t i = 0; i < sums.size(); ++i)
      g.spawn([](int k, int& out) -> task<> {
        auto [a, b] = co_await saturn::when_all([](int v) -> task<int> { co_return v; }(k),
                                                [](int v) -> task<int> {
                                                  (void)co_await saturn::sleep_for(1ms);
                                                  co_return v * 10;
                                                }(k));
        int st = 0;
        auto w = co_await saturn::when_any(sleeper(10s, st), [](int v) -> task<int> { co_return v; }(a + b));
        out = std::get<1>(w);
      }(static_cast<int>(i), sums[i]));
    co_return;
  }));
  for (std::size_t i = 0; i < sums.size(); ++i)
    EXPECT_EQ(sums[i], static_cast<int>(i) * 11);
}

TEST(task_group, ten_thousand_children) {
  saturn::runtime rt;
  constexpr int n = 10'000;
  int done = 0;
  int failed_io = 0;
  rt.block_on(task_group::run([&](task_group& g) -> task<> {
    for (int i = 0; i < n; ++i)
      g.spawn([](int k, int& d, int& f) -> task<> {
        switch (k % 3) {
          case 0: co_await saturn::yield(); break;
          case 1:
            if (!co_await saturn::nop())
              ++f;
            break;
          default:
            if (!co_await saturn::sleep_for(std::chrono::microseconds(k % 1000)))
              ++f;
            break;
        }
        ++d;
      }(i, done, failed_io));
    co_return;
  }));
  EXPECT_EQ(done, n);
  EXPECT_EQ(failed_io, 0);
  EXPECT_EQ(rt.live_tasks(), 0u);
}

TEST(task_group, runtime_shutdown_frees_suspended_children) {
  // Children suspended on timers and in-flight reads, under a group and a when_all, when
  // the runtime is destroyed: the runtime abandons them; ASan reports any leak.
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  auto counter = std::make_shared<int>(0);
  {
    saturn::runtime rt;
    rt.spawn(task_group::run([fd = fds[0], counter](task_group& g) -> task<> {
      for (int i = 0; i < 4; ++i)
        g.spawn([](std::shared_ptr<int> c) -> task<> {
          int st = 0;
          co_await sleeper(10s, st);
          ++*c;
        }(counter));
      g.spawn([](int f) -> task<> {
        std::byte buf[4];
        (void)co_await saturn::read(f, buf);
      }(fd));
      g.spawn([](std::shared_ptr<int> c) -> task<> {
        int a = 0;
        int b = 0;
        co_await saturn::when_all(sleeper(10s, a), sleeper(10s, b));
        ++*c;
      }(counter));
      (void)co_await saturn::sleep_for(10s);
    })).detach();
    rt.block_on([]() -> task<> { (void)co_await saturn::sleep_for(2ms); }());
    EXPECT_GT(rt.live_tasks(), 1u);
  }
  EXPECT_EQ(*counter, 0);            // no child ran past its sleep
  EXPECT_EQ(counter.use_count(), 1);  // every frame holding a copy was destroyed
  ::close(fds[0]);
  ::close(fds[1]);
}

// ---- randomized: N children, random sleeps 0-2 ms, random failures, fixed seed.
namespace {
task<> planned(std::size_t i, std::chrono::microseconds sleep, bool fail, std::vector<logged>& log,
               std::vector<int>& out) {
  auto r = co_await saturn::sleep_for(sleep);
  if (!r) {
    log.push_back({i, outcome::cancelled});
    co_return;
  }
  if (fail) {
    log.push_back({i, outcome::failed});
    throw child_error(i);
  }
  log.push_back({i, outcome::ok});
  out[i] = static_cast<int>(i * 3 + 1);
}
}  // namespace

TEST(task_group, randomized_against_oracle) {
  std::mt19937 rng(4242);
  saturn::runtime rt;
  for (int round = 0; round < 40; ++round) {
    const std::size_t n = 1 + rng() % 64;
    const bool may_fail = round % 3 != 0;
    std::vector<std::chrono::microseconds> sleeps(n);
    std::vector<bool> fails(n);
    bool any_fail = false;
    for (std::size_t i = 0; i < n; ++i) {
      sleeps[i] = std::chrono::microseconds(rng() % 2001);
      fails[i] = may_fail && rng() % 16 == 0;
      any_fail = any_fail || fails[i];
    }
    std::vector<logged> log;
    std::vector<int> out(n, 0);
    std::size_t thrown = ~std::size_t{0};
    try {
      rt.block_on(task_group::run([&](task_group& g) -> task<> {
        for (std::size_t i = 0; i < n; ++i) {
          g.spawn(planned(i, sleeps[i], fails[i], log, out));
          if (rng() % 4 == 0)
            co_await saturn::yield();  // interleave spawning with running
        }
      }));
    } catch (const child_error& e) {
      thrown = e.index;
    }
    ASSERT_EQ(log.size(), n) << "round " << round;
    std::vector<int> seen(n, 0);
    for (const logged& l : log)
      ++seen[l.index];
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
    const auto first_failure =
        std::find_if(log.begin(), log.end(), [](const logged& l) { return l.what == outcome::failed; });
    if (!any_fail) {
      EXPECT_EQ(thrown, ~std::size_t{0});
      for (std::size_t i = 0; i < n; ++i)
        EXPECT_EQ(out[i], static_cast<int>(i * 3 + 1)) << "round " << round;
    } else {
      ASSERT_NE(first_failure, log.end()) << "round " << round;
      EXPECT_EQ(thrown, first_failure->index) << "round " << round;
      EXPECT_TRUE(std::none_of(log.begin(), first_failure, [](const logged& l) { return l.what == outcome::cancelled; }));
    }
    EXPECT_EQ(rt.live_tasks(), 0u);
  }
}

// ---- on the work-stealing thread_pool: children end on any worker; the join wake-up
// (atomic count + promise->wake) crosses threads.
TEST(task_group, on_a_thread_pool_ten_thousand_children) {
  saturn::thread_pool pool(saturn::pool_options{.threads = 4});
  constexpr int n = 10'000;
  std::atomic<int> done{0};
  std::atomic<int> failed_io{0};
  pool.block_on(task_group::run([&](task_group& g) -> task<> {
    for (int i = 0; i < n; ++i)
      g.spawn([](int k, std::atomic<int>& d, std::atomic<int>& f) -> task<> {
        switch (k % 3) {
          case 0: co_await saturn::yield(); break;
          case 1:
            if (!co_await saturn::nop())
              f.fetch_add(1);
            break;
          default:
            if (!co_await saturn::sleep_for(std::chrono::microseconds(k % 500)))
              f.fetch_add(1);
            break;
        }
        d.fetch_add(1);
      }(i, done, failed_io));
    co_return;
  }));
  EXPECT_EQ(done.load(), n);
  EXPECT_EQ(failed_io.load(), 0);
}

TEST(task_group, on_a_thread_pool_cancel_and_failure) {
  saturn::thread_pool pool(saturn::pool_options{.threads = 4});
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> cancelled{0};
    constexpr int sleepers = 300;
    const bool by_failure = round % 2 == 1;
    bool threw = false;
    try {
      pool.block_on(task_group::run([&](task_group& g) -> task<> {
        for (int i = 0; i < sleepers; ++i)
          g.spawn([](std::atomic<int>& c) -> task<> {
            auto r = co_await saturn::sleep_for(10s);
            if (is_canceled(r))
              c.fetch_add(1);
          }(cancelled));
        (void)co_await saturn::sleep_for(1ms);
        if (by_failure)
          g.spawn([]() -> task<> { throw child_error(0); }());
        else
          g.cancel();
      }));
    } catch (const child_error&) {
      threw = true;
    }
    EXPECT_EQ(threw, by_failure) << "round " << round;
    EXPECT_EQ(cancelled.load(), sleepers) << "round " << round;
  }
}
