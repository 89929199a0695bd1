// work_deque under targeted races: the batch steal against an owner popping on the
// no-CAS (far) path, and the classic last-item race. Every item must be taken once.
//
// These find real bugs only with real parallelism or an instrumented build
// (SATURN_INSTRUMENTED_ATOMICS with random delays in every atomic access), which widens
// the windows between a thief's read of bottom and its CAS.
#include "sched/work_deque.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#if defined(__SANITIZE_THREAD__)
#define SATURN_STRESS_SCALE 8
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SATURN_STRESS_SCALE 8
#endif
#endif
#ifndef SATURN_STRESS_SCALE
#define SATURN_STRESS_SCALE 1
#endif

namespace {

using saturn::sched::work_deque;

struct stress_item {
  std::uint32_t id = 0;
  std::uint32_t payload = 0;  // plain memory written before push
  std::uint32_t taken_by = 0; // plain memory written by the taker (TSan sees a double take)
};

struct scenario {
  std::uint32_t items;
  int thieves;
  std::uint32_t low;  // the owner keeps at least this many items queued (sweep mode)
  std::uint32_t high; // and at most this many; in drain mode, pushes up to this many
  bool drain;         // push a few, then pop until empty (the last-item race)
  bool only_half;     // thieves use steal_half_into only
};

// The owner sweeps its deque's size up and down between low and high (or fills and
// drains it), taking what it pops; thieves steal from the owner into their own deques
// and drain those. Long monotone runs of pops are what overrun a stale batch claim.
template <std::size_t Capacity, std::size_t MaxBatch>
void stress(const scenario& s) {
  using deque_t = work_deque<stress_item, Capacity, MaxBatch>;
  const std::uint32_t n = s.items / SATURN_STRESS_SCALE;
  std::vector<stress_item> items(n);
  auto taken = std::make_unique<std::atomic<std::uint32_t>[]>(n);
  auto victim = std::make_unique<deque_t>();
  std::vector<std::unique_ptr<deque_t>> own;
  for (int i = 0; i < s.thieves; ++i) own.push_back(std::make_unique<deque_t>());
  std::atomic<std::uint32_t> total{0};
  std::atomic<bool> give_up{false};
  std::atomic<int> ready{0};
  auto start = [&] {
    ready.fetch_add(1);
    while (ready.load() <= s.thieves) std::this_thread::yield();
  };
  // ordering: relaxed counters and flags; join() orders them before the final checks.
  auto take = [&](stress_item* x, std::uint32_t who) {
    ASSERT_EQ(x->payload, x->id ^ 0x5a5a5a5au) << "item " << x->id << " seen before it was published";
    x->taken_by = who;
    taken[x->id].fetch_add(1, std::memory_order_relaxed);
    total.fetch_add(1, std::memory_order_relaxed);
  };
  auto done = [&] { return total.load(std::memory_order_relaxed) >= n || give_up.load(std::memory_order_relaxed); };

  std::vector<std::thread> threads;
  for (int t = 0; t < s.thieves; ++t) {
    threads.emplace_back([&, t] {
      deque_t& mine = *own[static_cast<std::size_t>(t)];
      const std::uint32_t me = static_cast<std::uint32_t>(t) + 1;
      start();
      for (std::uint32_t round = 0; !done(); ++round) {
        if (stress_item* x = mine.pop()) {
          take(x, me);
        } else if (stress_item* y = s.only_half || round % 2 ? victim->steal_half_into(mine) : victim->steal()) {
          take(y, me);
        }
      }
    });
  }
  threads.emplace_back([&] {
    std::uint64_t r = 0x9e3779b97f4a7c15ull;
    auto rand = [&r] {
      r ^= r << 13;
      r ^= r >> 7;
      r ^= r << 17;
      return static_cast<std::uint32_t>(r >> 32);
    };
    start();
    std::uint32_t next = 0;
    bool filling = true;
    std::uint32_t turn = s.high;
    auto push_next = [&] {
      stress_item* x = &items[next];
      x->id = next;
      x->payload = next ^ 0x5a5a5a5au;
      if (victim->push(x)) ++next;
    };
    while (next < n && !give_up.load(std::memory_order_relaxed)) {
      if (s.drain) {
        for (std::uint32_t k = 1 + rand() % s.high; k > 0 && next < n; --k) push_next();
        while (stress_item* x = victim->pop()) take(x, 0);
      } else if (filling) {
        push_next();
        if (victim->size_approx() >= turn) {
          filling = false;
          turn = s.low + rand() % (s.high - s.low);
        }
      } else {
        if (stress_item* x = victim->pop()) take(x, 0);
        if (victim->size_approx() <= turn) {
          filling = true;
          turn = s.low + 1 + rand() % (s.high - s.low);
        }
      }
    }
    while (stress_item* x = victim->pop()) take(x, 0);
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  give_up.store(true);
  for (auto& th : threads) th.join();

  std::uint32_t lost = 0, twice = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    lost += taken[i].load() == 0;
    twice += taken[i].load() > 1;
  }
  EXPECT_EQ(lost, 0u) << "items never taken (a lost item stalls the run until the 60 s deadline)";
  EXPECT_EQ(twice, 0u) << "items taken more than once";
}

// Big batches: the thief claims up to 128 while the owner pops without a CAS whenever at
// least 128 items are left; the owner never empties the deque, so no tag bump hides a bug.
TEST(work_deque_stress, batch_steal_against_far_path_pops) {
  stress<256, 128>({.items = 2'000'000, .thieves = 1, .low = 64, .high = 256, .drain = false, .only_half = true});
}

// Small batches: nearly every owner pop takes the far path.
TEST(work_deque_stress, small_batches_against_far_path_pops) {
  stress<64, 4>({.items = 2'000'000, .thieves = 2, .low = 2, .high = 64, .drain = false, .only_half = false});
}

// Plain Chase-Lev's hard case: the owner pops its last items while thieves steal them.
TEST(work_deque_stress, last_item_race) {
  stress<8, 4>({.items = 1'000'000, .thieves = 2, .low = 0, .high = 3, .drain = true, .only_half = false});
}

} // namespace
