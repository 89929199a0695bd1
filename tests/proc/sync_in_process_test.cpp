// A process awaits the task sync primitives like a task does: through its promise's
// await_transform (by reference, so the empty event awaiter keeps its address), woken
// from a plain thread.
#include "helpers.hpp"

#include <saturn/sync.hpp>

#include <gtest/gtest.h>

#include <thread>

using namespace saturn;
using proc_test::eventually;

namespace {

// The results are named: with no local variable in the body, g++ 12.2 miscompiles an
// `if (co_await ...)` (README.md, "Known compiler issues").
process<int> waits_for_event_then_latch(event* ev, latch* l, std::atomic<int>* stage) {
  stage->store(1);
  const wait_result first = co_await ev->wait();
  if (first)
    stage->store(2);
  const wait_result second = co_await l->wait();
  if (second)
    stage->store(3);
}

}  // namespace

TEST(ProcSync, AProcessWaitsOnAnEventAndALatch) {
  thread_pool pool({.threads = 2});
  event ev;
  latch l(1);
  std::atomic<int> stage{0};
  auto p = spawn_process(pool, waits_for_event_then_latch, &ev, &l, &stage);
  ASSERT_TRUE(eventually([&] { return stage.load() == 1; })) << stage.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(stage.load(), 1) << "the process did not wait for the event";
  std::thread([&] { ev.set(); }).join();
  ASSERT_TRUE(eventually([&] { return stage.load() == 2; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(stage.load(), 2) << "the process did not wait for the latch";
  l.count_down();
  ASSERT_TRUE(eventually([&] { return stage.load() == 3; }));
  EXPECT_TRUE(eventually([&] { return !alive(p); }));
}
