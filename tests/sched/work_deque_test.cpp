// work_deque: single-thread behaviour against a std::deque oracle, edge cases, index
// wrap-around, and one owner racing three thieves with every item counted.
#include "sched/work_deque.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#if defined(__SANITIZE_THREAD__)
#define SATURN_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SATURN_TEST_TSAN 1
#endif
#endif

namespace {

using saturn::sched::work_deque;

#if defined(SATURN_TEST_TSAN)
constexpr int tsan_slowdown = 4; // keeps the suite well under a minute under TSan
#else
constexpr int tsan_slowdown = 1;
#endif

struct node {
  std::uint32_t id = 0;
  std::uint32_t payload = 0;  // plain memory written before push: checks publication
  std::uint32_t taken_by = 0; // plain memory written by the taker: TSan sees a double take
};

std::vector<node> make_nodes(std::size_t n) {
  std::vector<node> nodes(n);
  for (std::size_t i = 0; i < n; ++i) nodes[i].id = static_cast<std::uint32_t>(i);
  return nodes;
}

// ---------------------------------------------------------------- single thread, oracle

template <class Deque>
void expect_steal_half(Deque& from, std::deque<node*>& from_model, Deque& into, std::deque<node*>& into_model) {
  const std::size_t count = from_model.size();
  const std::size_t room = Deque::capacity - into_model.size();
  const std::size_t n = std::min({count - count / 2, Deque::max_batch, room + 1});
  std::size_t moved = 99;
  node* got = from.steal_half_into(into, &moved);
  if (count == 0) {
    ASSERT_EQ(got, nullptr);
    ASSERT_EQ(moved, 0u);
    return;
  }
  ASSERT_EQ(moved, n - 1);
  ASSERT_EQ(got, from_model[n - 1]);
  into_model.insert(into_model.end(), from_model.begin(), from_model.begin() + static_cast<std::ptrdiff_t>(n - 1));
  from_model.erase(from_model.begin(), from_model.begin() + static_cast<std::ptrdiff_t>(n));
}

// Random owner/thief actions on two deques from one thread, each checked against a
// std::deque model (bottom = back).
template <std::size_t Capacity, std::size_t MaxBatch>
void run_oracle(std::uint32_t first_index, std::uint32_t seed, int steps) {
  using deque_t = work_deque<node, Capacity, MaxBatch>;
  auto nodes = make_nodes(4096);
  auto a = std::make_unique<deque_t>(first_index);
  auto b = std::make_unique<deque_t>(first_index + 7);
  std::deque<node*> ma, mb;
  std::mt19937 rng(seed);
  std::size_t next = 0;
  for (int step = 0; step < steps; ++step) {
    const bool on_a = rng() % 4 != 0;
    deque_t& d = on_a ? *a : *b;
    deque_t& other = on_a ? *b : *a;
    std::deque<node*>& m = on_a ? ma : mb;
    std::deque<node*>& mo = on_a ? mb : ma;
    switch (rng() % 8) {
    case 0:
    case 1:
    case 2: { // push (biased so the deque fills up and overflows)
      node* x = &nodes[next++ % nodes.size()];
      const bool ok = d.push(x);
      ASSERT_EQ(ok, m.size() < Capacity) << "step " << step;
      if (ok) m.push_back(x);
      break;
    }
    case 3:
    case 4: { // pop: the newest
      node* got = d.pop();
      ASSERT_EQ(got, m.empty() ? nullptr : m.back()) << "step " << step;
      if (!m.empty()) m.pop_back();
      break;
    }
    case 5: { // steal: the oldest, one or a batch
      if (rng() % 2) {
        node* got = d.steal();
        ASSERT_EQ(got, m.empty() ? nullptr : m.front()) << "step " << step;
        if (!m.empty()) m.pop_front();
        break;
      }
      node* out[MaxBatch];
      const std::uint32_t max = 1 + rng() % static_cast<std::uint32_t>(MaxBatch + 2);
      const std::uint32_t got = d.steal_batch(out, max);
      ASSERT_EQ(got, std::min({m.size(), MaxBatch, std::size_t{max}})) << "step " << step;
      for (std::uint32_t i = 0; i < got; ++i) {
        ASSERT_EQ(out[i], m.front()) << "step " << step << " item " << i;
        m.pop_front();
      }
      break;
    }
    case 6:
      expect_steal_half(d, m, other, mo);
      break;
    default:
      ASSERT_EQ(d.size_approx(), m.size()) << "step " << step;
      break;
    }
    ASSERT_EQ(a->size_approx(), ma.size());
    ASSERT_EQ(b->size_approx(), mb.size());
  }
}

TEST(work_deque, matches_std_deque_oracle) {
  constexpr int steps = 200'000 / tsan_slowdown;
  run_oracle<16, 8>(0, 1, steps);
  run_oracle<16, 1>(0, 2, steps);
  run_oracle<8, 3>(0, 3, steps);
  run_oracle<256, 128>(0, 4, steps);
}

TEST(work_deque, matches_oracle_across_index_wrap) {
  // Indices are 32-bit; start just below 2^32 so the run crosses the wrap many times over.
  run_oracle<16, 8>(0xffff'ff00u, 5, 100'000 / tsan_slowdown);
  run_oracle<4, 2>(0xffff'fff0u, 6, 100'000 / tsan_slowdown);
}

TEST(work_deque, empty_deque_returns_nothing) {
  work_deque<node, 8> d, other;
  EXPECT_EQ(d.pop(), nullptr);
  EXPECT_EQ(d.steal(), nullptr);
  std::size_t moved = 99;
  EXPECT_EQ(d.steal_half_into(other, &moved), nullptr);
  EXPECT_EQ(moved, 0u);
  EXPECT_EQ(d.size_approx(), 0u);
  EXPECT_EQ(other.size_approx(), 0u);
  // Popping an empty deque must leave it usable.
  node n{};
  EXPECT_TRUE(d.push(&n));
  EXPECT_EQ(d.pop(), &n);
  EXPECT_EQ(d.pop(), nullptr);
  EXPECT_EQ(d.steal(), nullptr);
}

TEST(work_deque, full_deque_rejects_push_and_keeps_order) {
  auto nodes = make_nodes(9);
  work_deque<node, 8> d;
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(d.push(&nodes[i]));
  EXPECT_FALSE(d.push(&nodes[8]));
  EXPECT_EQ(d.size_approx(), 8u);
  EXPECT_EQ(d.steal(), &nodes[0]); // oldest
  EXPECT_TRUE(d.push(&nodes[8]));  // a freed slot is reusable
  EXPECT_FALSE(d.push(&nodes[0]));
  for (int i = 8; i >= 1; --i) EXPECT_EQ(d.pop(), &nodes[i]); // newest first
  EXPECT_EQ(d.pop(), nullptr);
}

TEST(work_deque, steal_half_takes_half_capped_by_batch_and_room) {
  auto nodes = make_nodes(64);
  work_deque<node, 32, 4> victim, thief;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(victim.push(&nodes[i]));
  std::size_t moved = 0;
  EXPECT_EQ(victim.steal_half_into(thief, &moved), &nodes[2]); // ceil(5 / 2) = 3 claimed
  EXPECT_EQ(moved, 2u);
  EXPECT_EQ(thief.steal(), &nodes[0]); // moved oldest first
  EXPECT_EQ(thief.pop(), &nodes[1]);
  EXPECT_EQ(victim.size_approx(), 2u);

  for (int i = 5; i < 25; ++i) ASSERT_TRUE(victim.push(&nodes[i])); // 22 items: cap 4 applies
  EXPECT_EQ(victim.steal_half_into(thief, &moved), &nodes[6]);
  EXPECT_EQ(moved, 3u);

  work_deque<node, 32, 4> full;
  for (int i = 0; i < 32; ++i) ASSERT_TRUE(full.push(&nodes[32 + i]));
  EXPECT_EQ(victim.steal_half_into(full, &moved), &nodes[7]); // no room: just one to run
  EXPECT_EQ(moved, 0u);
  EXPECT_EQ(full.size_approx(), 32u);

  work_deque<node, 32, 4> one;
  ASSERT_TRUE(one.push(&nodes[0]));
  EXPECT_EQ(one.steal_half_into(thief, &moved), &nodes[0]);
  EXPECT_EQ(moved, 0u);
  EXPECT_EQ(one.size_approx(), 0u);
}

// An item pushed with steal_alone (a join's fork) is claimed by a batch steal only by
// itself: alone when it is the oldest, and a claim of unmarked items stops before it.
// pop, steal and steal_batch return plain pointers, marked or not.
TEST(work_deque, steal_half_takes_a_marked_item_only_by_itself) {
  auto nodes = make_nodes(16);
  work_deque<node, 32, 8> victim, thief;
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(victim.push(&nodes[i], /*steal_alone=*/true));
  std::size_t moved = 99;
  EXPECT_EQ(victim.steal_half_into(thief, &moved), &nodes[0]); // the oldest fork alone
  EXPECT_EQ(moved, 0u);
  EXPECT_EQ(victim.size_approx(), 5u);

  work_deque<node, 32, 8> mixed;
  for (int i = 6; i < 9; ++i) ASSERT_TRUE(mixed.push(&nodes[i]));
  ASSERT_TRUE(mixed.push(&nodes[9], true));
  for (int i = 10; i < 14; ++i) ASSERT_TRUE(mixed.push(&nodes[i]));
  // 8 items: half is 4, but the claim stops before the marked nodes[9].
  EXPECT_EQ(mixed.steal_half_into(thief, &moved), &nodes[8]);
  EXPECT_EQ(moved, 2u);
  EXPECT_EQ(mixed.steal_half_into(thief, &moved), &nodes[9]); // now the oldest: alone
  EXPECT_EQ(moved, 0u);
  EXPECT_EQ(mixed.size_approx(), 4u);
  EXPECT_EQ(mixed.steal_half_into(thief, &moved), &nodes[11]); // unmarked: half again
  EXPECT_EQ(moved, 1u);
  EXPECT_EQ(thief.pop(), &nodes[10]);
  EXPECT_EQ(thief.pop(), &nodes[7]);
  EXPECT_EQ(thief.pop(), &nodes[6]);
  EXPECT_EQ(thief.pop(), nullptr);

  // Plain pointers from pop, steal and steal_batch, whatever the mark.
  EXPECT_EQ(victim.pop(), &nodes[5]);
  EXPECT_EQ(victim.steal(), &nodes[1]);
  node* out[4] = {};
  ASSERT_EQ(victim.steal_batch(out, 4), 3u); // steal_batch (the spill) ignores marks
  EXPECT_EQ(out[0], &nodes[2]);
  EXPECT_EQ(out[2], &nodes[4]);
  EXPECT_EQ(victim.pop(), nullptr);
}

// A batch claim takes the oldest items, capped by the caller's max and by MaxBatch.
TEST(work_deque, steal_batch_takes_the_oldest_capped_by_max_and_batch) {
  auto nodes = make_nodes(16);
  work_deque<node, 16, 4> d;
  node* out[4] = {};
  EXPECT_EQ(d.steal_batch(out, 4), 0u);
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(d.push(&nodes[i]));
  ASSERT_EQ(d.steal_batch(out, 3), 3u);
  EXPECT_EQ(out[0], &nodes[0]);
  EXPECT_EQ(out[2], &nodes[2]);
  ASSERT_EQ(d.steal_batch(out, 100), 4u); // MaxBatch caps it, and takes everything left
  EXPECT_EQ(out[0], &nodes[3]);
  EXPECT_EQ(out[3], &nodes[6]);
  EXPECT_EQ(d.size_approx(), 0u);
  EXPECT_EQ(d.pop(), nullptr);
  ASSERT_TRUE(d.push(&nodes[8])); // still usable: indices moved on consistently
  EXPECT_EQ(d.pop(), &nodes[8]);
}

// A registered submitter's deep queue is stolen into a worker's smaller deque.
TEST(work_deque, steal_half_into_a_deque_of_another_capacity) {
  auto nodes = make_nodes(300);
  work_deque<node, 512, 8> deep;
  work_deque<node, 16, 8> small;
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(deep.push(&nodes[i]));
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(small.push(&nodes[0])); // 4 slots of room left
  std::size_t moved = 0;
  EXPECT_EQ(deep.steal_half_into(small, &moved), &nodes[4]); // room + 1 = 5 claimed
  EXPECT_EQ(moved, 4u);
  EXPECT_EQ(small.size_approx(), 16u);
  for (int i = 3; i >= 0; --i) EXPECT_EQ(small.pop(), &nodes[i]);
  EXPECT_EQ(deep.size_approx(), 295u);
  EXPECT_EQ(deep.steal(), &nodes[5]); // the claim took the oldest, nothing else
}

TEST(work_deque, wraps_around_capacity_many_times) {
  auto nodes = make_nodes(16);
  work_deque<node, 8, 4> d;
  std::size_t oldest = 0, next = 0;
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(d.push(&nodes[next++ % 16]));
  for (int round = 0; round < 10'000; ++round) { // slots reused ~10,000 / 8 times over
    ASSERT_TRUE(d.push(&nodes[next++ % 16]));
    ASSERT_EQ(d.steal(), &nodes[oldest++ % 16]);
    ASSERT_EQ(d.size_approx(), 7u);
  }
  for (std::size_t i = next; i > oldest; --i) ASSERT_EQ(d.pop(), &nodes[(i - 1) % 16]);
  EXPECT_EQ(d.pop(), nullptr);
}

#ifndef NDEBUG
TEST(work_deque_death, steal_half_into_itself_is_a_bug) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  work_deque<node, 8> d;
  EXPECT_DEATH((void)d.steal_half_into(d), "thief_own");
}
#endif

// ---------------------------------------------------------------- owner vs thieves

constexpr std::uint32_t race_items = 1'000'000 / tsan_slowdown;

struct xorshift {
  std::uint64_t s;
  std::uint32_t operator()() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<std::uint32_t>(s >> 32);
  }
};

// Thread 0 owns deques[0]: it pushes every item in bursts, popping some after each burst
// (all sizes, so both pop paths run), then helps steal. Threads 1..thieves own
// deques[1..]: they run their own deque, and when it is dry steal from any other deque,
// one item, half into their own deque, or a batch. Every item must be taken exactly once.
template <std::size_t Capacity, std::size_t MaxBatch>
void run_race(std::uint32_t items, int thieves, std::uint32_t first_index) {
  using deque_t = work_deque<node, Capacity, MaxBatch>;
  auto nodes = make_nodes(items);
  auto taken = std::make_unique<std::atomic<std::uint32_t>[]>(items);
  std::vector<std::unique_ptr<deque_t>> deques;
  for (int i = 0; i <= thieves; ++i) deques.push_back(std::make_unique<deque_t>(first_index));
  std::atomic<std::uint32_t> total{0};
  std::atomic<bool> give_up{false};
  std::atomic<int> ready{0}; // start together: thread start-up is slow on small VMs
  auto start = [&] {
    ready.fetch_add(1);
    while (ready.load() <= thieves) std::this_thread::yield();
  };

  // ordering: relaxed counters and flags; join() orders them before the final checks.
  auto take = [&](node* x, std::uint32_t who) {
    ASSERT_LT(x->id, items);
    ASSERT_EQ(x->payload, x->id * 3 + 1) << "item " << x->id << " seen before it was published";
    x->taken_by = who;
    taken[x->id].fetch_add(1, std::memory_order_relaxed);
    total.fetch_add(1, std::memory_order_relaxed);
  };
  auto done = [&] { return total.load(std::memory_order_relaxed) >= items || give_up.load(std::memory_order_relaxed); };
  auto help = [&](std::uint32_t me, xorshift& rng) { // steal until everything is taken
    deque_t& own = *deques[me];
    int misses = 0;
    while (!done()) {
      if (node* x = own.pop()) {
        take(x, me);
        continue;
      }
      const std::uint32_t victim = (me + 1 + rng() % static_cast<std::uint32_t>(thieves)) % (thieves + 1);
      node* x = nullptr;
      switch (rng() % 3) {
      case 0: x = deques[victim]->steal(); break;
      case 1: x = deques[victim]->steal_half_into(own); break;
      default: { // a batch claim, as the spill to the injection queue takes
        node* got[MaxBatch];
        const std::uint32_t n = deques[victim]->steal_batch(got, MaxBatch);
        for (std::uint32_t i = 1; i < n; ++i) take(got[i], me);
        x = n != 0 ? got[0] : nullptr;
      }
      }
      if (x != nullptr) {
        take(x, me);
        misses = 0;
      } else if (++misses % 16 == 0) {
        std::this_thread::yield(); // few cores: let the owner run
      }
    }
  };

  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    xorshift rng{0x9e3779b97f4a7c15ull};
    deque_t& own = *deques[0];
    start();
    std::uint32_t next = 0;
    while (next < items && !give_up.load(std::memory_order_relaxed)) {
      const std::uint32_t burst = 1 + rng() % static_cast<std::uint32_t>(Capacity + Capacity / 4);
      for (std::uint32_t i = 0; i < burst && next < items; ++i) {
        node* x = &nodes[next];
        x->payload = x->id * 3 + 1;
        if (own.push(x)) {
          ++next;
        } else if (node* y = own.pop()) { // full: a scheduler would spill to the injector
          take(y, 0);
        }
      }
      for (std::uint32_t pops = rng() % (burst + 1); pops > 0; --pops) {
        if (node* y = own.pop()) take(y, 0);
      }
    }
    help(0, rng);
  });
  for (int t = 1; t <= thieves; ++t) {
    threads.emplace_back([&, t] {
      xorshift rng{0x2545f4914f6cdd1dull * static_cast<std::uint64_t>(t)};
      start();
      help(static_cast<std::uint32_t>(t), rng);
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (total.load(std::memory_order_relaxed) < items && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  give_up.store(true);
  for (auto& th : threads) th.join();

  std::uint32_t lost = 0, twice = 0;
  for (std::uint32_t i = 0; i < items; ++i) {
    const std::uint32_t n = taken[i].load(std::memory_order_relaxed);
    lost += n == 0;
    twice += n > 1;
  }
  EXPECT_EQ(lost, 0u) << "items never taken (a lost item stalls the run until the 60 s deadline)";
  EXPECT_EQ(twice, 0u) << "items taken more than once";
  EXPECT_EQ(total.load(), items);
  for (auto& d : deques) EXPECT_EQ(d->size_approx(), 0u);
}

TEST(work_deque, race_owner_and_three_thieves_take_each_item_once) { run_race<256, 128>(race_items, 3, 0); }

TEST(work_deque, race_small_deque_small_batches_across_index_wrap) {
  run_race<16, 2>(race_items / 4, 3, 0xffff'0000u);
}

} // namespace
