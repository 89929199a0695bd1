// Leaves on a real loop: tier A start(), tier B co_await, block_on on a runtime and a
// thread_pool, from_task; cancellation through the stop token reaching the ring
// (ASYNC_CANCEL of a pipe read that would never complete), when_any / with_timeout
// awaiting their losers, retry's attempt count and backoff.
#include <gtest/gtest.h>
#include <saturn/effect/effect.hpp>
#include <saturn/saturn.hpp>

#include "loop/test_support.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

namespace {
namespace fx = saturn::effect;
using namespace std::chrono_literals;
using saturn::task;
using saturn_test::pipe_fds;

std::span<std::byte> bytes(std::string& s) { return std::as_writable_bytes(std::span<char>(s.data(), s.size())); }
std::span<const std::byte> cbytes(const std::string& s) { return std::as_bytes(std::span<const char>(s.data(), s.size())); }

/// Runs the loop until `done` (bounded by the test watchdog).
void run_until(saturn::event_loop& loop, const bool& done) {
  while (!done)
    loop.run_once(true);
}

TEST(effect_io, nop_then_through_a_callback) {
  saturn::event_loop loop;
  std::optional<fx::outcome<int>> got;
  bool done = false;
  fx::start(fx::nop() | fx::then([] { return 7; }), loop, [&](fx::outcome<int> o) {
    got.emplace(std::move(o));
    done = true;
  });
  run_until(loop, done);
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(**got, 7);
  EXPECT_EQ(loop.in_flight(), 0u);
}

TEST(effect_io, write_then_read_a_pipe_and_an_error_named_by_its_operation) {
  saturn::event_loop loop;
  pipe_fds p;
  std::string in = "hello", out(5, '\0');
  bool done = false;
  std::optional<fx::outcome<std::size_t>> got;
  auto e = fx::write(p.w, cbytes(in)) |
           fx::let_value([&](std::size_t&) { return fx::read(p.r, bytes(out)); });
  fx::start(std::move(e), loop, [&](fx::outcome<std::size_t> o) {
    got.emplace(std::move(o));
    done = true;
  });
  run_until(loop, done);
  ASSERT_TRUE(got->has_value()) << got->error().message();
  EXPECT_EQ(**got, 5u);
  EXPECT_EQ(out, "hello");
  // A read of a bad descriptor: an error value naming "read", seen by upon_error.
  done = false;
  std::string seen;
  fx::start(fx::read(-1, bytes(out)) | fx::upon_error([&](const fx::failure& f) {
              seen = f.message();
              return std::size_t{0};
            }),
            loop, [&](fx::outcome<std::size_t> o) {
              EXPECT_TRUE(o.has_value());
              done = true;
            });
  run_until(loop, done);
  EXPECT_EQ(seen.rfind("read: ", 0), 0u) << seen;
}

TEST(effect_io, kernel_timeout_and_sleep_complete_as_values) {
  saturn::event_loop loop;
  int ends = 0;
  const auto t0 = saturn::clock::now();
  fx::start(fx::kernel_timeout(2ms), loop, [&](fx::outcome<void> o) { ends += o.has_value(); });
  fx::start(fx::sleep_for(3ms), loop, [&](fx::outcome<void> o) { ends += o.has_value(); });
  loop.run();
  EXPECT_EQ(ends, 2);
  EXPECT_GE(saturn::clock::now() - t0, 3ms);  // a timer never fires early
}

TEST(effect_io, a_stop_token_cancels_the_in_flight_read) {
  saturn_test::watchdog dog(20s, "stop of a callback-started read");
  saturn::event_loop loop;
  pipe_fds p;
  std::string buf(1, '\0');
  std::stop_source src;
  bool done = false;
  std::optional<fx::outcome<std::size_t>> got;
  fx::start(fx::read(p.r, bytes(buf)), loop,
            [&](fx::outcome<std::size_t> o) {
              got.emplace(std::move(o));
              done = true;
            },
            src.get_token());
  loop.run_once(false);  // submitted, in the kernel
  EXPECT_EQ(loop.in_flight(), 1u);
  src.request_stop();  // on the loop thread: ASYNC_CANCEL at once
  run_until(loop, done);
  ASSERT_FALSE(got->has_value());
  EXPECT_TRUE(got->error().is_canceled());
  EXPECT_STREQ(got->error().err().operation, "read");
  EXPECT_EQ(loop.in_flight(), 0u);
}

TEST(effect_io, a_stop_before_start_submits_nothing) {
  saturn::event_loop loop;
  std::stop_source src;
  src.request_stop();
  bool canceled = false;
  fx::start(fx::nop() | fx::then([] { return 1; }), loop,
            [&](fx::outcome<int> o) { canceled = !o.has_value() && o.error().is_canceled(); }, src.get_token());
  EXPECT_TRUE(canceled);  // delivered inline
  EXPECT_EQ(loop.in_flight(), 0u);
}

TEST(effect_io, a_stop_from_another_thread_cancels_a_read) {
  saturn_test::watchdog dog(20s, "cross-thread stop of an effect");
  saturn::event_loop loop;
  pipe_fds p;
  std::string buf(1, '\0');
  std::stop_source src;
  bool done = false;
  bool canceled = false;
  fx::start(fx::read(p.r, bytes(buf)), loop,
            [&](fx::outcome<std::size_t> o) {
              canceled = !o.has_value() && o.error().is_canceled();
              done = true;
            },
            src.get_token());
  std::thread stopper([&] {
    saturn_test::wait_until_sleeping(loop);
    src.request_stop();
  });
  run_until(loop, done);
  stopper.join();
  EXPECT_TRUE(canceled);
}

TEST(effect_io, an_outer_stop_reaches_every_branch_through_let_value_and_when_all) {
  saturn_test::watchdog dog(20s, "outer stop of a composite");
  saturn::event_loop loop;
  pipe_fds a, b;
  std::string ba(1, '\0'), bb(1, '\0');
  std::stop_source src;
  bool done = false;
  int then_calls = 0;
  auto e = fx::just(0) | fx::let_value([&](int&) {
             return fx::when_all(fx::read(a.r, bytes(ba)), fx::read(b.r, bytes(bb)));
           }) |
           fx::then([&](std::tuple<std::size_t, std::size_t> t) {
             ++then_calls;
             return std::get<0>(t);
           });
  fx::start(std::move(e), loop,
            [&](fx::outcome<std::size_t> o) {
              ASSERT_FALSE(o.has_value());
              EXPECT_TRUE(o.error().is_canceled()) << o.error().message();
              done = true;
            },
            src.get_token());
  loop.run_once(false);
  EXPECT_EQ(loop.in_flight(), 2u);
  src.request_stop();
  run_until(loop, done);
  EXPECT_EQ(then_calls, 0);
  EXPECT_EQ(loop.in_flight(), 0u);
}

TEST(effect_io, with_timeout_cancels_a_read_and_awaits_it) {
  saturn_test::watchdog dog(20s, "with_timeout of a read");
  saturn::event_loop loop;
  pipe_fds p;
  std::string buf(1, '\0');
  bool loser_ended = false, done = false;
  auto e = fx::read(p.r, bytes(buf)) | fx::upon_error([&](const fx::failure& f) {
             loser_ended = f.is_canceled();  // the read ended in the kernel with ECANCELED
             return std::size_t{0};
           }) |
           fx::with_timeout(5ms);
  fx::start(std::move(e), loop, [&](fx::outcome<std::size_t> o) {
    EXPECT_TRUE(loser_ended) << "with_timeout completed before its child ended";
    ASSERT_FALSE(o.has_value());
    EXPECT_TRUE(o.error().err() == std::errc::timed_out);
    EXPECT_STREQ(o.error().err().operation, "with_timeout");
    done = true;
  });
  run_until(loop, done);
  EXPECT_EQ(loop.in_flight(), 0u);
  EXPECT_EQ(loop.timer_count(), 0u);
}

TEST(effect_io, with_timeout_passes_a_fast_value) {
  saturn::event_loop loop;
  bool done = false;
  fx::start(fx::nop() | fx::then([] { return 3; }) | fx::with_timeout(10s), loop, [&](fx::outcome<int> o) {
    ASSERT_TRUE(o.has_value());
    EXPECT_EQ(*o, 3);
    done = true;
  });
  run_until(loop, done);
  EXPECT_EQ(loop.timer_count(), 0u);  // the deadline was disarmed
}

TEST(effect_io, when_any_cancels_and_awaits_the_losers) {
  saturn_test::watchdog dog(20s, "when_any losers");
  saturn::event_loop loop;
  pipe_fds a, b;
  std::string ba(1, '\0'), bb(1, '\0');
  int losers_ended = 0;
  bool done = false;
  auto loser = [&](pipe_fds& p, std::string& buf) {
    return fx::read(p.r, bytes(buf)) | fx::upon_error([&](const fx::failure& f) {
             losers_ended += f.is_canceled();
             return std::size_t{0};
           });
  };
  auto winner = fx::sleep_for(1ms) | fx::then([] { return std::size_t{99}; });
  fx::start(fx::when_any(loser(a, ba), std::move(winner), loser(b, bb)), loop, [&](fx::outcome<std::size_t> o) {
    EXPECT_EQ(losers_ended, 2) << "when_any completed before every loser ended";
    ASSERT_TRUE(o.has_value());
    EXPECT_EQ(*o, 99u);
    done = true;
  });
  run_until(loop, done);
  EXPECT_EQ(loop.in_flight(), 0u);
}

TEST(effect_io, when_all_stops_the_others_on_the_first_error) {
  saturn_test::watchdog dog(20s, "when_all error");
  saturn::event_loop loop;
  pipe_fds p;
  std::string buf(1, '\0');
  bool read_canceled = false, done = false;
  auto reader = fx::read(p.r, bytes(buf)) | fx::upon_error([&](const fx::failure& f) {
                  read_canceled = f.is_canceled();
                  return std::size_t{0};
                });
  auto failing = fx::sleep_for(1ms) | fx::then([]() -> std::size_t { throw std::runtime_error("bad"); });
  fx::start(fx::when_all(std::move(reader), std::move(failing)), loop, [&](auto o) {
    EXPECT_TRUE(read_canceled);
    ASSERT_FALSE(o.has_value());
    EXPECT_TRUE(o.error().is_exception());
    done = true;
  });
  run_until(loop, done);
  EXPECT_EQ(loop.in_flight(), 0u);
}

/// A nop whose result is an EAGAIN error on the first `fail_first` attempts.
auto flaky(int& attempts, int fail_first) {
  return fx::nop() | fx::let_value([&attempts, fail_first] {
           ++attempts;
           return fx::just_result(attempts <= fail_first ? saturn::result<int>(saturn::errno_error(-EAGAIN, "flaky"))
                                                          : saturn::result<int>(attempts));
         });
}

TEST(effect_io, retry_counts_attempts_and_waits_the_backoff) {
  saturn::event_loop loop;
  int attempts = 0;
  std::optional<fx::outcome<int>> got;
  const auto t0 = saturn::clock::now();
  fx::start(flaky(attempts, 2) | fx::retry({.max_attempts = 5, .backoff = 2ms, .multiplier = 2.0}), loop,
            [&](fx::outcome<int> o) { got.emplace(std::move(o)); });
  loop.run();
  ASSERT_TRUE(got && got->has_value()) << got->error().message();
  EXPECT_EQ(**got, 3);
  EXPECT_EQ(attempts, 3);
  EXPECT_GE(saturn::clock::now() - t0, 2ms + 4ms);  // the two waits; timers never fire early

  // Exhausted: the last error is delivered, after exactly max_attempts attempts.
  attempts = 0;
  got.reset();
  fx::start(flaky(attempts, 100) | fx::retry({.max_attempts = 4}), loop,
            [&](fx::outcome<int> o) { got.emplace(std::move(o)); });
  loop.run();
  ASSERT_TRUE(got && !got->has_value());
  EXPECT_EQ(attempts, 4);
  EXPECT_EQ(got->error().code(), std::errc::resource_unavailable_try_again);
  EXPECT_STREQ(got->error().err().operation, "flaky");
}

TEST(effect_io, retry_does_not_retry_exceptions_or_cancellation) {
  saturn::event_loop loop;
  int attempts = 0;
  bool exception = false;
  fx::start(fx::nop() | fx::then([&]() -> int {
              ++attempts;
              throw std::runtime_error("bug");
            }) | fx::retry({.max_attempts = 5}),
            loop, [&](fx::outcome<int> o) { exception = !o.has_value() && o.error().is_exception(); });
  loop.run();
  EXPECT_TRUE(exception);
  EXPECT_EQ(attempts, 1);

  // A stop during the backoff ends the retry with operation_canceled.
  attempts = 0;
  std::stop_source src;
  bool canceled = false;
  fx::start(flaky(attempts, 100) | fx::retry({.max_attempts = 5, .backoff = 10s}), loop,
            [&](fx::outcome<int> o) { canceled = !o.has_value() && o.error().is_canceled(); }, src.get_token());
  while (attempts < 1 || loop.timer_count() == 0)
    loop.run_once(true);
  src.request_stop();
  loop.run();
  EXPECT_TRUE(canceled);
  EXPECT_EQ(attempts, 1);
  EXPECT_EQ(loop.timer_count(), 0u);
}

// ---- tier B interop

task<int> add_one_after_a_nop(int x) {
  auto r = co_await saturn::nop();
  EXPECT_TRUE(r.has_value());
  co_return x + 1;
}

TEST(effect_task, co_await_an_effect_inside_a_task) {
  saturn::runtime rt;
  int v = rt.block_on([]() -> task<int> {
    auto e = fx::nop() | fx::then([] { return 20; }) | fx::then([](int x) { return x * 2; });
    saturn::result<int> r = co_await std::move(e);
    EXPECT_TRUE(r.has_value());
    auto pure = fx::just(2);  // completes inline: the task does not suspend
    saturn::result<int> p = co_await std::move(pure);
    auto bad = fx::read(-1, {});
    saturn::result<std::size_t> b = co_await std::move(bad);
    EXPECT_FALSE(b.has_value());
    EXPECT_STREQ(b.err().operation, "read");
    co_return *r + *p;
  }());
  EXPECT_EQ(v, 42);
}

TEST(effect_task, an_exception_in_an_awaited_effect_is_rethrown_into_the_task) {
  saturn::runtime rt;
  EXPECT_THROW(rt.block_on([]() -> task<int> {
    auto e = fx::nop() | fx::then([]() -> int { throw std::runtime_error("x"); });
    auto r = co_await std::move(e);
    co_return *r;
  }()),
               std::runtime_error);
}

TEST(effect_task, from_task_and_block_on) {
  saturn::runtime rt;
  auto o = fx::block_on(rt, fx::from_task(add_one_after_a_nop(1)) | fx::then([](int x) { return x * 10; }));
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(*o, 20);
  // A task ending with result<U> holding an error fails the effect with it.
  auto e = fx::block_on(rt, fx::from_task([]() -> task<saturn::result<int>> {
    co_return saturn::errno_error(-EIO, "inner");
  }()));
  ASSERT_FALSE(e.has_value());
  EXPECT_STREQ(e.error().err().operation, "inner");
}

TEST(effect_task, block_on_a_thread_pool) {
  saturn::thread_pool pool({.threads = 2, .mode = saturn::pool_mode::io});
  auto o = fx::block_on(pool, fx::when_all(fx::nop() | fx::then([] { return 1; }), fx::from_task(add_one_after_a_nop(2))));
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(std::get<0>(*o), 1);
  EXPECT_EQ(std::get<1>(*o), 3);
}

TEST(effect_task, stopping_the_task_cancels_the_effect_in_the_ring) {
  saturn_test::watchdog dog(20s, "tier B with_timeout over an effect");
  saturn::runtime rt;
  pipe_fds p;
  auto r = rt.block_on([](int fd) -> task<saturn::result<std::size_t>> {
    co_return co_await saturn::with_timeout(5ms, [](int rfd) -> task<saturn::result<std::size_t>> {
      std::string buf(1, '\0');
      auto e = fx::read(rfd, bytes(buf)) | fx::then([](std::size_t n) { return n; });
      co_return co_await std::move(e);
    }(fd));
  }(p.r));
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(r.err() == std::errc::timed_out);
  EXPECT_EQ(rt.loop().in_flight(), 0u);
}

TEST(effect_task, when_any_stops_a_task_child) {
  saturn_test::watchdog dog(20s, "when_any over a task");
  saturn::runtime rt;
  bool task_saw_cancel = false;
  auto sleeper = [](bool* saw) -> task<int> {
    auto r = co_await saturn::sleep_for(10s);
    *saw = !r.has_value() && r.err() == std::errc::operation_canceled;
    co_return 0;
  };
  auto o = fx::block_on(rt, fx::when_any(fx::from_task(sleeper(&task_saw_cancel)), fx::nop() | fx::then([] { return 5; })));
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(*o, 5);
  EXPECT_TRUE(task_saw_cancel);
}

}  // namespace
