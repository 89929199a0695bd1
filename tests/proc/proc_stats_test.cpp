// process_stats's mailbox high-water mark: a backlog a process takes at once raises it to
// at least the backlog; messages taken one at a time raise it to no more than one.
#include "helpers.hpp"

#include <saturn/proc/proc_stats.hpp>
#include <saturn/sync.hpp>

#include <gtest/gtest.h>

#include <algorithm>

using namespace saturn;
using proc_test::eventually;

namespace {

// The results are named: g++ 12.2 miscompiles a body with no local variable and a
// co_await in a condition (README.md, "Known compiler issues").
process<int> drains_after_event(event* ev, int expect, std::atomic<int>* got) {
  const wait_result w = co_await ev->wait();
  (void)w;
  for (int i = 0; i < expect; ++i) {
    const int v = co_await saturn::receive();
    (void)v;
    got->fetch_add(1);
  }
}

process<int> acks_each(std::atomic<int>* got) {
  for (;;) {
    const int v = co_await saturn::receive();
    if (v < 0)
      co_return;
    got->fetch_add(1);
  }
}

}  // namespace

TEST(ProcStats, ABacklogTakenAtOnceRaisesTheMailboxHighWaterMark) {
  thread_pool pool({.threads = 2});
  event ev;
  std::atomic<int> got{0};
  constexpr int backlog = 1537;
  auto p = spawn_process(pool, drains_after_event, &ev, backlog, &got);
  for (int i = 0; i < backlog; ++i)
    ASSERT_TRUE(send(p, i));
  // Every message is queued before the process may take its inbox for the first time.
  std::thread([&] { ev.set(); }).join();
  ASSERT_TRUE(eventually([&] { return got.load() == backlog; }));
  EXPECT_GE(process_stats().mailbox_depth_max, std::uint64_t(backlog));
  EXPECT_TRUE(eventually([&] { return !alive(p); }));
}

TEST(ProcStats, MessagesTakenOneAtATimeDoNotRaiseItPastOne) {
  const std::uint64_t before = process_stats().mailbox_depth_max;
  thread_pool pool({.threads = 2});
  std::atomic<int> got{0};
  auto p = spawn_process(pool, acks_each, &got);
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(send(p, i));
    ASSERT_TRUE(eventually([&] { return got.load() == i + 1; }));
  }
  ASSERT_TRUE(send(p, -1));
  EXPECT_TRUE(eventually([&] { return !alive(p); }));
  EXPECT_EQ(process_stats().mailbox_depth_max, std::max<std::uint64_t>(before, 1));
}
