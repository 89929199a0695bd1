// Destroying a loop: every operation still in the kernel is cancelled and its completion
// delivered (-ECANCELED) before the destructor returns, so buffers may be freed right
// after it (ASan would see a late kernel write only as corruption, so the test checks
// the completions arrived). Queued runnables and armed timers are discarded without
// being called, and their callables destroyed (shared_ptr use counts, ASan leak check).
#include <saturn/ext/submit.hpp>
#include <sys/uio.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace saturn_test;
using saturn::clock;
using saturn::event_loop;
using saturn::kernel_timespec;
using saturn::loop_options;
using saturn::run_mode;
using saturn::runnable;
using saturn::timer_node;

class shutdown : public ::testing::TestWithParam<bool> {
 protected:
  loop_options opts() const { return loop_options{.defer_taskrun = GetParam()}; }
};

struct outcome {
  int calls = 0;
  int res = 1;
};

TEST_P(shutdown, in_flight_operations_complete_cancelled_before_buffers_are_freed) {
  constexpr int n_pipes = 16;
  std::vector<std::unique_ptr<pipe_fds>> pipes;
  for (int i = 0; i < n_pipes; ++i)
    pipes.push_back(std::make_unique<pipe_fds>());
  std::vector<char*> buffers;  // new[]: freed only after the loop is gone
  std::vector<outcome> reads(n_pipes);
  std::vector<outcome> fixed_reads(n_pipes);
  std::vector<outcome> deadline_reads(n_pipes);
  std::vector<outcome> timeouts(n_pipes);
  auto raw_timeout = std::make_unique<raw_op>();
  auto raw_ts = std::make_unique<kernel_timespec>(kernel_timespec::from(1h));
  char* fixed_area = new char[n_pipes * 512];
  {
    watchdog dog(30s, "destroying a loop with operations in flight hung");
    event_loop loop(opts());
    const ::iovec reg{fixed_area, n_pipes * 512};
    ASSERT_FALSE(saturn::ext::register_buffers(loop, std::span<const ::iovec>(&reg, 1)));
    for (int i = 0; i < n_pipes; ++i) {
      const auto k = static_cast<std::size_t>(i);
      char* b = new char[256];
      buffers.push_back(b);
      loop.read(pipes[k]->r, b, 256, 0, [&reads, k](int r) {
        ++reads[k].calls;
        reads[k].res = r;
      });
      loop.read_fixed(pipes[k]->r, fixed_area + k * 512, 512, 0, 0, [&fixed_reads, k](int r) {
        ++fixed_reads[k].calls;
        fixed_reads[k].res = r;
      });
      char* d = new char[64];
      buffers.push_back(d);
      loop.read_with_timeout(pipes[k]->r, d, 64, 0, 1h, [&deadline_reads, k](int r) {
        ++deadline_reads[k].calls;
        deadline_reads[k].res = r;
      });
      loop.timeout(1h, [&timeouts, k](int r) {
        ++timeouts[k].calls;
        timeouts[k].res = r;
      });
    }
    saturn::ext::submit_timeout(loop, raw_timeout.get(), raw_ts.get());
    loop.run_once(false);  // everything is in the kernel now
    EXPECT_EQ(loop.in_flight(), static_cast<std::size_t>(4 * n_pipes + 1));
  }
  // The loop is gone: every completion must have been delivered, cancelled.
  for (int i = 0; i < n_pipes; ++i) {
    const auto k = static_cast<std::size_t>(i);
    EXPECT_EQ(reads[k].calls, 1) << "read " << i;
    EXPECT_EQ(reads[k].res, -ECANCELED) << "read " << i;
    EXPECT_EQ(fixed_reads[k].calls, 1) << "fixed read " << i;
    EXPECT_EQ(fixed_reads[k].res, -ECANCELED) << "fixed read " << i;
    EXPECT_EQ(deadline_reads[k].calls, 1) << "read_with_timeout " << i;
    EXPECT_EQ(deadline_reads[k].res, -ECANCELED) << "read_with_timeout " << i;
    EXPECT_EQ(timeouts[k].calls, 1) << "timeout " << i;
    EXPECT_EQ(timeouts[k].res, -ECANCELED) << "timeout " << i;
  }
  EXPECT_EQ(raw_timeout->calls, 1);
  EXPECT_EQ(raw_timeout->res, -ECANCELED);
  // Data written now must land in the pipes, not in freed memory.
  for (auto& p : pipes)
    ASSERT_EQ(::write(p->w, "late", 4), 4);
  for (char* b : buffers)
    delete[] b;
  delete[] fixed_area;
  for (auto& p : pipes) {
    char buf[8];
    EXPECT_EQ(::read(p->r, buf, sizeof buf), 4) << "a cancelled read consumed data";
  }
}

TEST_P(shutdown, operations_never_submitted_are_handled_too) {
  pipe_fds p;
  outcome read_out;
  outcome nop_out;
  char* buf = new char[32];
  {
    watchdog dog(30s, "destroying a loop with unsubmitted SQEs hung");
    event_loop loop(opts());
    // Prepared but never handed to the kernel (no run_once).
    loop.read(p.r, buf, 32, 0, [&](int r) {
      ++read_out.calls;
      read_out.res = r;
    });
    loop.nop([&](int r) {
      ++nop_out.calls;
      nop_out.res = r;
    });
  }
  EXPECT_EQ(read_out.calls, 1);
  EXPECT_EQ(read_out.res, -ECANCELED);
  EXPECT_EQ(nop_out.calls, 1);
  EXPECT_EQ(nop_out.res, 0);  // a NOP completes as soon as it is submitted
  delete[] buf;
}

TEST_P(shutdown, queued_defers_are_discarded_not_called) {
  auto token = std::make_shared<int>(7);
  int called = 0;
  {
    event_loop loop(opts());
    for (int i = 0; i < 100; ++i)
      loop.defer([token, &called] { ++called; });
    EXPECT_EQ(token.use_count(), 101);
  }
  EXPECT_EQ(called, 0);
  EXPECT_EQ(token.use_count(), 1) << "discarded callables were not destroyed";
}

TEST_P(shutdown, armed_after_timers_are_discarded_not_called) {
  auto token = std::make_shared<int>(7);
  int called = 0;
  {
    event_loop loop(opts());
    for (int i = 0; i < 100; ++i)
      loop.after(std::chrono::hours(1 + i), [token, &called] { ++called; });
    loop.run_once(false);
    EXPECT_EQ(loop.timer_count(), 100u);
  }
  EXPECT_EQ(called, 0);
  EXPECT_EQ(token.use_count(), 1);
}

TEST_P(shutdown, custom_timers_and_runnables_see_discard) {
  struct counted_timer : timer_node {
    int runs = 0;
    int discards = 0;
    counted_timer() {
      m_fire = [](timer_node* self, run_mode mode) noexcept {
        auto* t = static_cast<counted_timer*>(self);
        (mode == run_mode::run ? t->runs : t->discards)++;
      };
    }
  } t;
  struct counted_runnable : runnable {
    int runs = 0;
    int discards = 0;
    counted_runnable() {
      m_fn = [](runnable* self, run_mode mode) noexcept {
        auto* r = static_cast<counted_runnable*>(self);
        (mode == run_mode::run ? r->runs : r->discards)++;
      };
    }
  } local, remote;
  {
    event_loop loop(opts());
    loop.add_timer(&t, clock::now() + 1h);
    loop.post(&local);
    std::thread([&] { loop.post_remote(&remote); }).join();
  }
  EXPECT_EQ(t.runs, 0);
  EXPECT_EQ(t.discards, 1);
  EXPECT_EQ(local.runs, 0);
  EXPECT_EQ(local.discards, 1);
  EXPECT_EQ(remote.runs, 0);
  EXPECT_EQ(remote.discards, 1);
}

TEST_P(shutdown, remote_defers_never_run_are_freed) {
  auto token = std::make_shared<int>(7);
  int called = 0;
  {
    event_loop loop(opts());
    std::thread([&] {
      for (int i = 0; i < 1000; ++i)
        loop.defer_remote([token, &called] { ++called; });
    }).join();
  }
  EXPECT_EQ(called, 0);
  EXPECT_EQ(token.use_count(), 1);
}

// Completions delivered during destruction run user code; what that code queues must be
// released as well: a defer() and an after() armed from a cancelled read's callback.
TEST_P(shutdown, work_queued_by_cancelled_completions_is_released) {
  pipe_fds p;
  char buf[8];
  auto deferred = std::make_shared<int>(0);
  auto timed = std::make_shared<int>(0);
  int read_res = 1;
  int ran = 0;
  {
    event_loop loop(opts());
    loop.read(p.r, buf, sizeof buf, 0, [&, deferred, timed](int r) {
      read_res = r;
      loop.defer([deferred, &ran] { ++ran; });
      loop.after(1h, [timed, &ran] { ++ran; });  // e.g. "retry later"
    });
    loop.run_once(false);
  }
  EXPECT_EQ(read_res, -ECANCELED);
  EXPECT_EQ(ran, 0);
  EXPECT_EQ(deferred.use_count(), 1) << "a defer() queued during shutdown was not released";
  EXPECT_EQ(timed.use_count(), 1) << "an after() armed during shutdown was never released (leak)";
}

// A callback that resubmits on cancellation a few times: the destructor cancels again
// until nothing is left in flight.
TEST_P(shutdown, resubmission_during_shutdown_is_cancelled_again) {
  pipe_fds p;
  char buf[8];
  int cancelled = 0;
  struct rearm {
    event_loop* loop;
    int fd;
    char* buf;
    int* cancelled;
    void operator()(int r) const {
      if (r == -ECANCELED && ++*cancelled < 4)
        loop->read(fd, buf, 8, 0, *this);
    }
  };
  {
    watchdog dog(30s, "a loop whose callbacks resubmit during shutdown never finished destruction");
    event_loop loop(opts());
    loop.read(p.r, buf, sizeof buf, 0, rearm{&loop, p.r, buf, &cancelled});
    loop.run_once(false);
  }
  EXPECT_EQ(cancelled, 4);
  ASSERT_EQ(::write(p.w, "abc", 3), 3);
  EXPECT_EQ(::read(p.r, buf, sizeof buf), 3);
}

TEST_P(shutdown, many_loops_created_and_destroyed) {
  for (int i = 0; i < 50; ++i) {
    pipe_fds p;
    char buf[4];
    int res = 1;
    event_loop loop(opts());  // last: destroyed (and its read cancelled) first
    loop.read(p.r, buf, sizeof buf, 0, [&](int r) { res = r; });
    loop.run_once(false);
    loop.add_keep_alive();
    std::thread stopper([&] {
      wait_until_sleeping(loop);
      loop.stop();
    });
    loop.run();
    stopper.join();
    loop.release_keep_alive();
    EXPECT_EQ(res, 1) << "the read (still pending when run() stopped) must not have completed yet";
  }
}

// event_loop::current(): a thread's current loop while several exist, destroyed in
// construction order (as a std::vector of loops is). Runs on a fresh thread so a dangling
// thread-local cannot leak into the other tests of this process.
TEST_P(shutdown, current_is_not_left_dangling_when_loops_die_out_of_order) {
  const loop_options o = opts();
  std::thread([o] {
    EXPECT_EQ(event_loop::current(), nullptr);
    auto a = std::make_unique<event_loop>(o);
    auto b = std::make_unique<event_loop>(o);
    EXPECT_EQ(event_loop::current(), b.get());
    a.reset();
    EXPECT_EQ(event_loop::current(), b.get()) << "b is alive and was the current loop";
    b.reset();
    EXPECT_EQ(event_loop::current(), nullptr) << "current() points at a destroyed loop";
  }).join();
}

TEST_P(shutdown, current_is_restored_when_loops_die_in_reverse_order) {
  const loop_options o = opts();
  std::thread([o] {
    auto a = std::make_unique<event_loop>(o);
    {
      event_loop b(o);
      EXPECT_EQ(event_loop::current(), &b);
    }
    EXPECT_EQ(event_loop::current(), a.get());
    a.reset();
    EXPECT_EQ(event_loop::current(), nullptr);
  }).join();
}

// shutdown() is public: it cancels what is in flight, discards what is queued, and
// leaves the loop usable.
TEST_P(shutdown, explicit_shutdown_leaves_the_loop_usable) {
  pipe_fds p;
  char buf[8];
  outcome read_out;
  auto token = std::make_shared<int>(0);
  int ran = 0;
  event_loop loop(opts());
  loop.read(p.r, buf, sizeof buf, 0, [&](int r) {
    ++read_out.calls;
    read_out.res = r;
  });
  loop.defer([token, &ran] { ++ran; });
  loop.after(1h, [token, &ran] { ++ran; });
  loop.run_once(false);
  loop.defer([token, &ran] { ++ran; });
  loop.shutdown();
  EXPECT_EQ(read_out.calls, 1);
  EXPECT_EQ(read_out.res, -ECANCELED);
  EXPECT_EQ(loop.in_flight(), 0u);
  EXPECT_EQ(loop.timer_count(), 0u);
  EXPECT_EQ(token.use_count(), 1);
  EXPECT_EQ(ran, 1) << "only the defer that was ready in run_once ran";
  // Still a working loop.
  int nop_res = 1;
  loop.nop([&](int r) { nop_res = r; });
  ASSERT_EQ(::write(p.w, "ab", 2), 2);
  int again = 0;
  loop.read(p.r, buf, sizeof buf, 0, [&](int r) { again = r; });
  watchdog dog(10s, "a loop did not work after shutdown()");
  loop.run();
  EXPECT_EQ(nop_res, 0);
  EXPECT_EQ(again, 2);
}

TEST_P(shutdown, shutdown_from_a_deferred_callback) {
  pipe_fds p;
  char buf[8];
  outcome read_out;
  event_loop loop(opts());
  loop.read(p.r, buf, sizeof buf, 0, [&](int r) {
    ++read_out.calls;
    read_out.res = r;
  });
  loop.after(2ms, [&] { loop.defer([&] { loop.shutdown(); }); });
  watchdog dog(10s, "shutdown() from a deferred callback hung");
  loop.run();
  EXPECT_EQ(read_out.calls, 1);
  EXPECT_EQ(read_out.res, -ECANCELED);
}

// drain_io(): the first half of shutdown. Completions are delivered, what they queue
// stays queued (and runs on the next run()).
TEST_P(shutdown, drain_io_delivers_completions_and_keeps_what_they_queue) {
  pipe_fds p;
  char buf[8];
  int read_res = 1;
  int deferred_ran = 0;
  bool timer_fired = false;
  event_loop loop(opts());
  loop.read(p.r, buf, sizeof buf, 0, [&](int r) {
    read_res = r;
    loop.defer([&] { ++deferred_ran; });
  });
  loop.after(1ms, [&] { timer_fired = true; });
  loop.run_once(false);
  loop.drain_io();
  EXPECT_EQ(read_res, -ECANCELED);
  EXPECT_EQ(loop.in_flight(), 0u);
  EXPECT_EQ(deferred_ran, 0);
  EXPECT_EQ(loop.timer_count(), 1u) << "drain_io() must leave timers armed";
  loop.run();
  EXPECT_EQ(deferred_ran, 1);
  EXPECT_TRUE(timer_fired);
}

// discard_all(): the second half, callable from another thread while the loop's own
// thread is not running it.
TEST_P(shutdown, discard_all_from_another_thread_releases_everything_queued) {
  struct counted_timer : timer_node {
    int runs = 0;
    int discards = 0;
    counted_timer() {
      m_fire = [](timer_node* self, run_mode mode) noexcept {
        auto* t = static_cast<counted_timer*>(self);
        (mode == run_mode::run ? t->runs : t->discards)++;
      };
    }
  } custom;
  auto token = std::make_shared<int>(0);
  int ran = 0;
  event_loop loop(opts());
  loop.defer([token, &ran] { ++ran; });
  loop.after(1h, [token, &ran] { ++ran; });
  loop.add_timer(&custom, clock::now() + 1h);
  std::thread([&] { loop.defer_remote([token, &ran] { ++ran; }); }).join();
  std::thread([&] { loop.discard_all(); }).join();
  EXPECT_EQ(ran, 0);
  EXPECT_EQ(token.use_count(), 1);
  EXPECT_EQ(custom.discards, 1);
  EXPECT_EQ(custom.runs, 0);
  EXPECT_EQ(loop.timer_count(), 0u);
  EXPECT_FALSE(loop.has_work());
  int after = 0;
  loop.defer([&] { ++after; });
  loop.run();
  EXPECT_EQ(after, 1) << "the loop keeps working after discard_all()";
}

// shutdown() from a completion callback ("loop thread only": a callback runs there): the
// callback runs inside the reap loop, and shutdown reaps too. CQEs of the same batch
// must still be delivered exactly once. Run in a child process: a double delivery calls
// a completion through storage already returned to the pool and may crash.
[[noreturn]] void shutdown_inside_a_completion(bool defer) {
  pipe_fds p;
  char buf[8];
  int b_calls = 0;
  int c_calls = 0;
  int r_calls = 0;
  {
    event_loop loop(loop_options{.defer_taskrun = defer});
    loop.read(p.r, buf, sizeof buf, 0, [&](int) { ++r_calls; });
    loop.run_once(false);
    // Three NOPs complete in one batch; the first one's callback shuts the loop down.
    loop.nop([&](int) { loop.shutdown(); });
    loop.nop([&](int) { ++b_calls; });
    loop.nop([&](int) { ++c_calls; });
    loop.run();
  }
  std::fprintf(stderr, "read=%d b=%d c=%d\n", r_calls, b_calls, c_calls);
  std::_Exit(r_calls == 1 && b_calls == 1 && c_calls == 1 ? 0 : 1);
}

TEST_P(shutdown, shutdown_from_a_completion_callback_delivers_each_cqe_once) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(shutdown_inside_a_completion(GetParam()), ::testing::ExitedWithCode(0), "read=1 b=1 c=1");
}

INSTANTIATE_TEST_SUITE_P(modes, shutdown, ::testing::Bool(), mode_name);

}  // namespace
