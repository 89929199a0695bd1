// live_slots: the owner's track / untrack reuse slots at once; slots cleared by other
// threads come back only through a sweep; the shutdown walk sees exactly the tasks alive;
// and a thread clearing slots while the owner tracks never loses or reuses a live one.
#include <gtest/gtest.h>

#include "sched/live_slots.hpp"

#include <saturn/task/detail/promise_base.hpp>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

namespace {

using saturn::detail::live_slots;
using saturn::detail::promise_base;

std::set<promise_base*> alive(live_slots& t) {
  std::set<promise_base*> out;
  t.for_each_alive([&](promise_base* p) { EXPECT_TRUE(out.insert(p).second) << "a task recorded twice"; });
  return out;
}

TEST(live_slots, owner_untrack_frees_the_slot_for_the_next_track) {
  live_slots t;
  std::vector<promise_base> ps(3);
  const std::uint32_t a = t.track(&ps[0]);
  const std::uint32_t b = t.track(&ps[1]);
  EXPECT_NE(a, b);
  t.untrack_local(a);
  EXPECT_EQ(t.track(&ps[2]), a);  // reused at once
  EXPECT_EQ(alive(t), (std::set<promise_base*>{&ps[1], &ps[2]}));
}

TEST(live_slots, remote_clears_come_back_through_a_sweep) {
  live_slots t;
  std::vector<promise_base> ps(300);
  std::vector<std::uint32_t> slot(ps.size());
  for (std::size_t i = 0; i < 200; ++i)
    slot[i] = t.track(&ps[i]);
  // 100 remote clears: at least 64 and an eighth of the 200 slots used, so the next track
  // sweeps and reuses one of them instead of taking slot 200.
  for (std::size_t i = 0; i < 100; ++i)
    t.untrack_remote(slot[i]);
  const std::uint32_t s = t.track(&ps[200]);
  EXPECT_LT(s, 100u);  // slots were handed out in order: one the remote thread cleared
  std::set<promise_base*> expect;
  for (std::size_t i = 100; i <= 200; ++i)
    expect.insert(&ps[i]);
  EXPECT_EQ(alive(t), expect);
}

TEST(live_slots, few_remote_clears_do_not_trigger_a_sweep) {
  live_slots t;
  std::vector<promise_base> ps(20);
  for (std::size_t i = 0; i < 10; ++i)
    (void)t.track(&ps[i]);
  t.untrack_remote(0);
  EXPECT_EQ(t.track(&ps[10]), 10u);  // a fresh slot: one clear is not worth a sweep
  EXPECT_EQ(alive(t).size(), 10u);
}

TEST(live_slots, grows_across_chunks_and_the_walk_tolerates_untracks) {
  live_slots t;
  const std::uint32_t n = 3 * live_slots::k_chunk + 5;
  std::vector<promise_base> ps(n);
  std::vector<std::uint32_t> slot(n);
  for (std::uint32_t i = 0; i < n; ++i)
    slot[i] = t.track(&ps[i]);
  // The walk may untrack the current task and others (discarding a frame frees others).
  std::uint32_t visited = 0;
  t.for_each_alive([&](promise_base* p) {
    ++visited;
    const auto i = static_cast<std::uint32_t>(p - ps.data());
    t.untrack_remote(slot[i]);
    if (i + 1 < n && i % 2 == 0)
      t.untrack_remote(slot[i + 1]);  // its neighbour goes too and is not visited
  });
  EXPECT_EQ(visited, (n + 1) / 2);
  EXPECT_TRUE(alive(t).empty());
}

// The owner tracks and untracks while another thread clears the slots of tasks handed to
// it; the owner's final view must hold exactly the tasks neither side cleared.
TEST(live_slots, remote_clears_race_owner_tracks) {
  live_slots t;
  constexpr int k_tasks = 200'000;
  std::vector<promise_base> ps(k_tasks);
  std::vector<std::uint32_t> slot(k_tasks);
  std::vector<std::atomic<std::uint32_t>> handed(k_tasks);
  std::atomic<int> published{-1};
  std::thread remote([&] {
    int next = 0;
    while (next < k_tasks) {
      const int upto = published.load(std::memory_order_acquire);
      for (; next <= upto; ++next)
        if (next % 3 == 0)
          t.untrack_remote(handed[next].load(std::memory_order_relaxed));
      if (next <= upto)
        continue;
      std::this_thread::yield();
    }
  });
  std::set<promise_base*> expect;
  for (int i = 0; i < k_tasks; ++i) {
    slot[i] = t.track(&ps[i]);
    handed[i].store(slot[i], std::memory_order_relaxed);
    if (i % 3 == 1)
      t.untrack_local(slot[i]);
    published.store(i, std::memory_order_release);  // hands task i to the remote thread
  }
  remote.join();
  for (int i = 0; i < k_tasks; ++i)
    if (i % 3 == 2)
      expect.insert(&ps[i]);
  EXPECT_EQ(alive(t), expect);
}

}  // namespace
