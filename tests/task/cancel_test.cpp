// Cancellation racing completion. with_timeout around sleeps and pipe reads whose
// durations straddle the deadline, thousands of times: every iteration ends exactly once
// with the value or timed_out, the child is resumed exactly once, and no byte is lost.
// Cross-thread cancellation: a std::stop_source stopped from another OS thread while the
// task is suspended in the kernel (the cancellable protocol's posted path).
#include <gtest/gtest.h>
#include <saturn/saturn.hpp>
#include "task/task_test_util.hpp"

#include "loop/test_support.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <random>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using saturn::result;
using saturn::task;
using saturn_test::pipe_fds;
using task_test::root_ctx;
using task_test::bytes;

/// Awaits `t` under `ctx` (another stop token), the way with_timeout awaits its child.
template <class T>
task<T> await_under(saturn::task_context* ctx, task<T> t) {
  co_return co_await saturn::await_under(t, *ctx);
}

/// Bytes waiting in a pipe; drained with read(2), which cannot block for them.
std::size_t drain(int fd) {
  int avail = 0;
  if (::ioctl(fd, FIONREAD, &avail) != 0 || avail <= 0)
    return 0;
  std::string junk(static_cast<std::size_t>(avail), '\0');
  const ssize_t n = ::read(fd, junk.data(), junk.size());
  return n > 0 ? static_cast<std::size_t>(n) : 0;
}

}  // namespace

// Deterministic orders first: the child clearly wins, then the deadline clearly wins.
TEST(task_cancel, completion_first_and_cancel_first) {
  saturn::runtime rt;
  rt.block_on([]() -> task<> {
    int resumed = 0;
    auto child = [](int* n, std::chrono::microseconds d) -> task<result<void>> {
      auto s = co_await saturn::sleep_for(d);
      ++*n;
      co_return s;
    };
    auto won = co_await saturn::with_timeout(1s, child(&resumed, 10us));
    EXPECT_TRUE(won.has_value());
    auto lost = co_await saturn::with_timeout(10us, child(&resumed, 1s));
    EXPECT_FALSE(lost.has_value());
    EXPECT_EQ(resumed, 2);
  }());
}

// with_timeout(50 µs) around sleeps of 0..100 µs, 2,000 times. Each outcome must be
// consistent: a value means the child's sleep completed normally; timed_out means the
// child was stopped or finished in the same instant. The child resumes exactly once per
// iteration. Both orders must have occurred.
TEST(task_cancel, with_timeout_races_a_sleep) {
  saturn_test::watchdog dog(60s, "with_timeout racing a sleep");
  saturn::runtime rt;
  constexpr int iterations = 2000;
  struct tally {
    int values = 0;
    int timed_out = 0;
    int child_resumes = 0;
    int child_cancelled = 0;
    int inconsistent = 0;
  } t;
  rt.block_on([](tally* tl) -> task<> {
    std::mt19937 rng(5150);
    for (int i = 0; i < iterations; ++i) {
      const auto sleep = std::chrono::microseconds(rng() % 101);
      const int before = tl->child_resumes;
      const int cancelled_before = tl->child_cancelled;
      auto r = co_await saturn::with_timeout(50us, [](tally* x, std::chrono::microseconds d) -> task<result<void>> {
        auto s = co_await saturn::sleep_for(d);
        ++x->child_resumes;
        if (!s)
          ++x->child_cancelled;
        co_return s;
      }(tl, sleep));
      if (tl->child_resumes != before + 1)
        ++tl->inconsistent;  // resumed never, or twice
      if (r.has_value()) {
        ++tl->values;  // the sleep completed (before or after the deadline)
        if (tl->child_cancelled != cancelled_before)
          ++tl->inconsistent;  // a value, yet the sleep was cancelled
      } else if (r.err() == std::errc::timed_out) {
        ++tl->timed_out;
      } else {
        ++tl->inconsistent;
      }
    }
  }(&t));
  EXPECT_EQ(t.inconsistent, 0);
  EXPECT_EQ(t.values + t.timed_out, iterations);
  EXPECT_EQ(t.child_resumes, iterations);
  EXPECT_GT(t.values, 0) << "the child never won the race";
  EXPECT_GT(t.timed_out, 0) << "the deadline never won the race";
  EXPECT_GT(t.child_cancelled, 0) << "no sleep was ever cancelled";
  EXPECT_EQ(rt.loop().timer_count(), 0u);
}

// with_timeout(50 µs) around a one-byte pipe read while a sibling task writes the byte
// after 0..100 µs. Every byte written is either the child's (its read returned it) or
// still in the pipe afterwards — a read that was cancelled in the kernel must not have
// consumed it, and a read that completed must not report operation_canceled.
TEST(task_cancel, with_timeout_races_a_pipe_read) {
  saturn_test::watchdog dog(60s, "with_timeout racing a pipe read");
  saturn::runtime rt;
  pipe_fds p;
  constexpr int iterations = 2000;
  struct tally {
    int values = 0;
    int timed_out = 0;
    int child_resumes = 0;
    int child_got_byte = 0;
    int child_cancelled = 0;
    std::size_t left_in_pipe = 0;
    int inconsistent = 0;
  } t;
  rt.block_on([](pipe_fds* pp, tally* tl) -> task<> {
    auto* root = co_await root_ctx();
    std::mt19937 rng(8086);
    for (int i = 0; i < iterations; ++i) {
      const auto delay = std::chrono::microseconds(rng() % 101);
      auto writer = saturn::spawn_in(*root, [](int wfd, std::chrono::microseconds d) -> task<> {
        (void)co_await saturn::sleep_for(d);
        std::string b = "b";
        auto w = co_await saturn::write(wfd, std::as_bytes(std::span<const char>(b.data(), 1)));
        EXPECT_TRUE(w.has_value());
      }(pp->w, delay));
      const int before = tl->child_resumes;
      auto r = co_await saturn::with_timeout(50us, [](int rfd, tally* x) -> task<result<std::size_t>> {
        std::string buf(1, '\0');
        auto rr = co_await saturn::read(rfd, bytes(buf));
        ++x->child_resumes;
        if (rr && *rr == 1)
          ++x->child_got_byte;
        else if (!rr && rr.err() == std::errc::operation_canceled)
          ++x->child_cancelled;
        else
          ++x->inconsistent;
        co_return rr;
      }(pp->r, tl));
      if (tl->child_resumes != before + 1)
        ++tl->inconsistent;
      if (r.has_value()) {
        ++tl->values;
        if (*r != 1)
          ++tl->inconsistent;  // a value, yet the child has no byte
      } else if (r.err() == std::errc::timed_out) {
        ++tl->timed_out;
      } else {
        ++tl->inconsistent;
      }
      co_await std::move(writer);
      tl->left_in_pipe += drain(pp->r);
    }
  }(&p, &t));
  EXPECT_EQ(t.inconsistent, 0);
  EXPECT_EQ(t.values + t.timed_out, iterations);
  EXPECT_EQ(t.child_resumes, iterations);
  EXPECT_EQ(t.child_got_byte + t.child_cancelled, iterations);
  // conservation: every byte is accounted for exactly once
  EXPECT_EQ(static_cast<std::size_t>(t.child_got_byte) + t.left_in_pipe, static_cast<std::size_t>(iterations));
  EXPECT_GT(t.values, 0);
  EXPECT_GT(t.timed_out, 0);
  EXPECT_EQ(rt.loop().in_flight(), 0u);
}

// A stop requested on the awaiting task's own loop thread before the await even starts:
// the I/O is not submitted and ends with operation_canceled at once.
TEST(task_cancel, stop_requested_before_the_await) {
  saturn::runtime rt;
  pipe_fds p;
  rt.block_on([](int rfd) -> task<> {
    saturn::task_context& here = co_await saturn::this_task::context();
    std::stop_source src;
    src.request_stop();
    saturn::task_context ctx{here.sched, src.get_token()};
    const auto completions = saturn::event_loop::current()->stats().completions;
    auto r = co_await await_under(&ctx, [](int fd) -> task<result<std::size_t>> {
      std::string buf(1, '\0');
      co_return co_await saturn::read(fd, bytes(buf));
    }(rfd));
    EXPECT_FALSE(r.has_value());
    if (!r) {
      EXPECT_TRUE(r.err() == std::errc::operation_canceled);
    }
    auto s = co_await await_under(&ctx, []() -> task<result<void>> { co_return co_await saturn::sleep_for(1s); }());
    EXPECT_FALSE(s.has_value());
    EXPECT_EQ(saturn::event_loop::current()->stats().completions, completions);  // nothing went to the kernel
  }(p.r));
}

// The token reaches grandchildren: a stop on the context cancels a read two awaits down.
TEST(task_cancel, stop_reaches_a_nested_child) {
  saturn::runtime rt;
  pipe_fds p;
  rt.block_on([](int rfd) -> task<> {
    saturn::task_context& here = co_await saturn::this_task::context();
    auto* root = co_await root_ctx();
    std::stop_source src;
    saturn::task_context ctx{here.sched, src.get_token()};
    auto stopper = saturn::spawn_in(*root, [](std::stop_source* s) -> task<> {
      (void)co_await saturn::sleep_for(1ms);
      s->request_stop();  // on the loop thread: the cancellable's direct path
    }(&src));
    auto grandchild = [](int fd) -> task<result<std::size_t>> {
      std::string buf(1, '\0');
      co_return co_await saturn::read(fd, bytes(buf));
    };
    auto r = co_await await_under(&ctx, [](int fd, auto gc) -> task<result<std::size_t>> {
      co_return co_await gc(fd);
    }(rfd, grandchild));
    co_await std::move(stopper);
    EXPECT_FALSE(r.has_value());
    if (!r) {
      EXPECT_TRUE(r.err() == std::errc::operation_canceled) << r.err().message();
    }
  }(p.r));
}

// Cross-thread: another OS thread requests the stop while the task is suspended in a read
// and the loop sleeps in the kernel. The read ends with operation_canceled.
TEST(task_cancel, stop_from_another_thread_cancels_a_read) {
  saturn_test::watchdog dog(20s, "cross-thread stop of a read");
  saturn::runtime rt;
  pipe_fds p;
  std::stop_source src;
  std::thread stopper;
  rt.block_on([](int rfd, std::stop_source* s, std::thread* th, saturn::event_loop* loop) -> task<> {
    saturn::task_context& here = co_await saturn::this_task::context();
    saturn::task_context ctx{here.sched, s->get_token()};
    *th = std::thread([s, loop] {
      saturn_test::wait_until_sleeping(*loop);
      s->request_stop();
    });
    auto r = co_await await_under(&ctx, [](int fd) -> task<result<std::size_t>> {
      std::string buf(1, '\0');
      co_return co_await saturn::read(fd, bytes(buf));
    }(rfd));
    EXPECT_FALSE(r.has_value());
    if (!r) {
      EXPECT_TRUE(r.err() == std::errc::operation_canceled) << r.err().message();
      EXPECT_EQ(r.err().message().rfind("read: ", 0), 0u);
    }
  }(p.r, &src, &stopper, &rt.loop()));
  stopper.join();
  EXPECT_EQ(rt.loop().in_flight(), 0u);
}

TEST(task_cancel, stop_from_another_thread_cancels_a_sleep) {
  saturn_test::watchdog dog(20s, "cross-thread stop of a sleep");
  saturn::runtime rt;
  std::stop_source src;
  std::thread stopper;
  rt.block_on([](std::stop_source* s, std::thread* th, saturn::event_loop* loop) -> task<> {
    saturn::task_context& here = co_await saturn::this_task::context();
    saturn::task_context ctx{here.sched, s->get_token()};
    *th = std::thread([s, loop] {
      saturn_test::wait_until_sleeping(*loop);
      s->request_stop();
    });
    const auto t0 = saturn::clock::now();
    auto r = co_await await_under(&ctx, []() -> task<result<void>> { co_return co_await saturn::sleep_for(10s); }());
    EXPECT_LT(saturn::clock::now() - t0, 5s);
    EXPECT_FALSE(r.has_value());
    if (!r) {
      EXPECT_TRUE(r.err() == std::errc::operation_canceled);
    }
    EXPECT_EQ(saturn::event_loop::current()->timer_count(), 0u);
  }(&src, &stopper, &rt.loop()));
  stopper.join();
}

// Cross-thread stop racing the read's completion: the byte is written by a sibling task at
// a random moment and another thread stops at a random moment. Each iteration: the read
// ends exactly once with the byte or operation_canceled, and bytes are conserved.
TEST(task_cancel, cross_thread_stop_races_completion) {
  saturn_test::watchdog dog(60s, "cross-thread stop racing completion");
  saturn::runtime rt;
  pipe_fds p;
  constexpr int iterations = 500;
  struct tally {
    int got = 0;
    int cancelled = 0;
    int resumes = 0;
    int inconsistent = 0;
    std::size_t left = 0;
  } t;
  rt.block_on([](pipe_fds* pp, tally* tl) -> task<> {
    saturn::task_context& here = co_await saturn::this_task::context();
    auto* root = co_await root_ctx();
    std::mt19937 rng(4242);
    for (int i = 0; i < iterations; ++i) {
      std::stop_source src;
      saturn::task_context ctx{here.sched, src.get_token()};
      const auto stop_after = std::chrono::microseconds(rng() % 80);
      const auto write_after = std::chrono::microseconds(rng() % 80);
      // Every 20th iteration the byte is written only once the stop was requested, so the
      // cancellation path is taken however the threads are scheduled (a loaded machine can
      // delay the stopping thread past every random write).
      const bool stop_first = i % 20 == 0;
      std::atomic<bool> go{false};
      std::atomic<bool> stopped{false};
      std::thread th([&src, &go, &stopped, stop_after] {
        while (!go.load())
          std::this_thread::yield();
        std::this_thread::sleep_for(stop_after);
        src.request_stop();
        stopped.store(true);
      });
      auto writer = saturn::spawn_in(*root, [](int wfd, std::chrono::microseconds d, std::atomic<bool>* gate) -> task<> {
        (void)co_await saturn::sleep_for(d);
        while (gate != nullptr && !gate->load())
          (void)co_await saturn::sleep_for(std::chrono::microseconds(50));
        std::string b = "b";
        (void)co_await saturn::write(wfd, std::as_bytes(std::span<const char>(b.data(), 1)));
      }(pp->w, write_after, stop_first ? &stopped : nullptr));
      go.store(true);
      const int before = tl->resumes;
      auto r = co_await await_under(&ctx, [](int fd, tally* x) -> task<result<std::size_t>> {
        std::string buf(1, '\0');
        auto rr = co_await saturn::read(fd, bytes(buf));
        ++x->resumes;
        co_return rr;
      }(pp->r, tl));
      if (tl->resumes != before + 1)
        ++tl->inconsistent;
      if (r && *r == 1)
        ++tl->got;
      else if (!r && r.err() == std::errc::operation_canceled)
        ++tl->cancelled;
      else
        ++tl->inconsistent;
      th.join();  // the stop callback has returned: src may go
      co_await std::move(writer);
      tl->left += drain(pp->r);
    }
  }(&p, &t));
  EXPECT_EQ(t.inconsistent, 0);
  EXPECT_EQ(t.resumes, iterations);
  EXPECT_EQ(t.got + t.cancelled, iterations);
  EXPECT_EQ(static_cast<std::size_t>(t.got) + t.left, static_cast<std::size_t>(iterations));
  EXPECT_GT(t.cancelled, 0);
  EXPECT_EQ(rt.loop().in_flight(), 0u);
}
