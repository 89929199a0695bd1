// Destroying a runtime while tasks are suspended: spawned tasks blocked in pipe reads, in
// 10 s sleeps, in joins of other tasks, inside with_timeout, and spawned tasks that never
// started (queued locally and handed over from another thread). Every frame must be
// destroyed exactly once (counted by probes living in the frames) with no use-after-free
// (the asan-ubsan build). And a detached task that throws prints a message, not a crash.
#include <gtest/gtest.h>
#include <saturn/saturn.hpp>
#include "task/task_test_util.hpp"

#include "loop/test_support.hpp"

#include <atomic>
#include <memory>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using saturn::join_handle;
using saturn::task;
using saturn_test::pipe_fds;
using task_test::root_ctx;
using task_test::bytes;

/// Counts frames: constructed into a frame as a by-value coroutine parameter, counted as
/// destroyed when that frame goes.
struct probe_counts {
  std::atomic<int> created{0};
  std::atomic<int> destroyed{0};
  std::atomic<int> finished{0};  // bodies that ran to their end (must stay 0 for abandoned ones)
};
struct probe {
  probe_counts* c;
  explicit probe(probe_counts* counts) : c(counts) { c->created.fetch_add(1); }
  probe(probe&& o) noexcept : c(std::exchange(o.c, nullptr)) {}
  probe(const probe&) = delete;
  ~probe() {
    if (c != nullptr)
      c->destroyed.fetch_add(1);
  }
};
// A moved-from probe does not count; the frame's copy does. `created` counts the original,
// which is moved into the frame, so created == destroyed once every frame is gone.

task<int> blocked_reader(probe pr, int fd) {
  std::string buf(16, '\0');
  auto r = co_await saturn::read(fd, bytes(buf));
  pr.c->finished.fetch_add(1);
  co_return r ? 1 : 0;
}
task<int> long_sleeper(probe pr) {
  (void)co_await saturn::sleep_for(10s);
  pr.c->finished.fetch_add(1);
  co_return 2;
}
task<int> joiner(probe pr, join_handle<int> h) {
  int v = co_await std::move(h);
  pr.c->finished.fetch_add(1);
  co_return v;
}
task<int> timed_reader(probe pr, int fd) {
  auto r = co_await saturn::with_timeout(10s, blocked_reader(probe(pr.c), fd));
  pr.c->finished.fetch_add(1);
  co_return r ? *r : -1;
}
task<int> never_started(probe pr) {
  pr.c->finished.fetch_add(1);
  co_return 3;
}
task<> yielder_forever(probe pr) {
  (void)pr;
  for (;;)
    co_await saturn::yield();  // always in the ready queue
}

}  // namespace

TEST(task_shutdown, runtime_destroyed_with_suspended_tasks_frees_every_frame) {
  saturn_test::watchdog dog(30s, "runtime shutdown with suspended tasks");
  probe_counts counts;
  pipe_fds p;  // outlives the runtime: the reads are cancelled while it is open
  std::thread remote;
  {
    saturn::runtime rt;
    rt.block_on([](probe_counts* c, int rfd, saturn::runtime* r, std::thread* th) -> task<> {
      auto* root = co_await root_ctx();
      for (int i = 0; i < 8; ++i)
        (void)saturn::spawn_in(*root, blocked_reader(probe(c), rfd));  // detached
      for (int i = 0; i < 8; ++i)
        (void)saturn::spawn_in(*root, long_sleeper(probe(c)));
      // joins: a joiner of a sleeper, and a joiner of that joiner (handles live in frames)
      auto inner = saturn::spawn_in(*root, joiner(probe(c), saturn::spawn_in(*root, long_sleeper(probe(c)))));
      (void)saturn::spawn_in(*root, joiner(probe(c), std::move(inner)));
      // one more joiner, detached explicitly below
      auto held = saturn::spawn_in(*root, joiner(probe(c), saturn::spawn_in(*root, long_sleeper(probe(c)))));
      // with_timeout in the middle of a frame chain
      for (int i = 0; i < 4; ++i)
        (void)saturn::spawn_in(*root, timed_reader(probe(c), rfd));
      (void)saturn::spawn_in(*root, yielder_forever(probe(c)));
      co_await saturn::yield();  // let them all start and suspend
      co_await saturn::yield();
      EXPECT_EQ(r->live_tasks(), 8u + 8u + 1u + 1u + 1u + 1u + 1u + 4u + 1u);
      EXPECT_GT(saturn::event_loop::current()->in_flight(), 0u);
      // handed over from another thread, never run: still in the remote queue at shutdown
      *th = std::thread([r, c] {
        for (int i = 0; i < 8; ++i)
          (void)r->spawn(never_started(probe(c)));
      });
      th->join();
      held.detach();
    }(&counts, p.r, &rt, &remote));
    // never started: queued on the runtime's own thread after block_on returned
    for (int i = 0; i < 8; ++i)
      (void)rt.spawn(never_started(probe(&counts)));
    // a joiner whose target is a never-started task
    (void)rt.spawn(joiner(probe(&counts), rt.spawn(never_started(probe(&counts)))));
    EXPECT_GT(counts.created.load(), 0);
    EXPECT_LT(counts.destroyed.load(), counts.created.load());
  }  // ~runtime: cancel I/O, abandon and free every task
  EXPECT_EQ(counts.finished.load(), 0);  // nothing ran on after its runtime went
  EXPECT_EQ(counts.destroyed.load(), counts.created.load());
  // the pipe is intact: no cancelled read consumes data written now
  ASSERT_EQ(::write(p.w, "q", 1), 1);
  char c = 0;
  ASSERT_EQ(::read(p.r, &c, 1), 1);
}

// Many suspended tasks: 10,000 sleepers and 1,000 readers abandoned at once.
TEST(task_shutdown, many_suspended_tasks) {
  saturn_test::watchdog dog(60s, "shutdown with many suspended tasks");
  probe_counts counts;
  pipe_fds p;
  {
    saturn::runtime rt(saturn::runtime_options{saturn::loop_options{1024, 0, true}});
    rt.block_on([](probe_counts* c, int rfd) -> task<> {
      auto* root = co_await root_ctx();
      for (int i = 0; i < 10'000; ++i)
        (void)saturn::spawn_in(*root, long_sleeper(probe(c)));
      for (int i = 0; i < 1'000; ++i)
        (void)saturn::spawn_in(*root, blocked_reader(probe(c), rfd));
      for (int i = 0; i < 100; ++i)
        co_await saturn::yield();
    }(&counts, p.r));
    EXPECT_EQ(rt.live_tasks(), 11'000u);
  }
  EXPECT_EQ(counts.finished.load(), 0);
  EXPECT_EQ(counts.destroyed.load(), counts.created.load());
}

// A runtime whose block_on returned while joins are outstanding in frames; then a second
// block_on on the same runtime finishes them normally (nothing is abandoned early).
TEST(task_shutdown, outstanding_tasks_survive_between_block_on_calls) {
  probe_counts counts;
  saturn::runtime rt;
  join_handle<int> h = rt.spawn(long_sleeper(probe(&counts)));
  rt.block_on([]() -> task<> { co_await saturn::yield(); }());
  EXPECT_FALSE(h.is_finished());
  // detach it; the runtime's destruction frees it
  h.detach();
  EXPECT_EQ(rt.live_tasks(), 1u);
}

TEST(task_shutdown, detached_task_exception_is_reported_on_stderr) {
  saturn::runtime rt;
  ::testing::internal::CaptureStderr();
  rt.block_on([](saturn::runtime* r) -> task<> {
    auto* root = co_await root_ctx();
    (void)saturn::spawn_in(*root, []() -> task<int> {
      co_await saturn::yield();
      throw std::runtime_error("boom from a detached task");
    }());
    (void)saturn::spawn_in(*root, []() -> task<> {
      throw 42;  // not a std::exception
      co_return;
    }());
    for (int i = 0; i < 10; ++i)
      co_await saturn::yield();
    EXPECT_EQ(r->live_tasks(), 0u);
  }(&rt));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("boom from a detached task"), std::string::npos) << err;
  EXPECT_NE(err.find("detached task"), std::string::npos) << err;
  EXPECT_NE(err.find("non-std exception"), std::string::npos) << err;
}

// A task that finished while its handle was held keeps its frame (and result) until the
// handle goes; dropping the handle then frees it.
TEST(task_shutdown, dropped_handle_of_a_finished_task_frees_it) {
  saturn::runtime rt;
  probe_counts counts;
  rt.block_on([](probe_counts* c) -> task<> {
    auto* root = co_await root_ctx();
    auto h = saturn::spawn_in(*root, never_started(probe(c)));
    co_await saturn::yield();
    EXPECT_TRUE(h.is_finished());
    EXPECT_EQ(c->destroyed.load(), 0);  // the finished frame waits for its handle
  }(&counts));
  EXPECT_EQ(counts.finished.load(), 1);
  EXPECT_EQ(counts.destroyed.load(), counts.created.load());
}

// A task spawned under a context of the caller's making (not the runtime's root context)
// and still suspended when the runtime goes must be freed like any other.
TEST(task_shutdown, task_spawned_under_a_custom_context_is_freed) {
  saturn_test::watchdog dog(30s, "shutdown with a task under a custom context");
  probe_counts counts;
  pipe_fds p;
  std::stop_source src;  // outlives the runtime (and so the context below)
  saturn::task_context custom{};
  {
    saturn::runtime rt;
    custom.sched = &rt;
    custom.token = src.get_token();
    rt.block_on([](probe_counts* c, int rfd, saturn::task_context* ctx) -> task<> {
      (void)saturn::spawn_in(*ctx, long_sleeper(probe(c)));
      (void)saturn::spawn_in(*ctx, blocked_reader(probe(c), rfd));
      co_await saturn::yield();
    }(&counts, p.r, &custom));
  }
  EXPECT_EQ(counts.finished.load(), 0);
  EXPECT_EQ(counts.destroyed.load(), counts.created.load()) << "frames of tasks spawned under a custom context leaked";
}
