// The injection queue: FIFO order against a std::deque oracle (random sequences of push,
// push_list and pop_batch with fixed seeds), the length hints, and concurrent pushers
// with one and with two consumers: every item taken exactly once, and each consumer sees
// each producer's items in the order they were pushed.
#include <gtest/gtest.h>

#include "sched/injection_queue.hpp"

#include <atomic>
#include <cstdint>
#include <deque>
#include <latch>
#include <memory>
#include <random>
#include <thread>
#include <vector>

namespace {

using saturn::runnable;
using saturn::sched::injection_queue;

#if defined(SATURN_TSAN) || defined(SATURN_ASAN)
constexpr int k_queue_slow = 4;
#else
constexpr int k_queue_slow = 1;
#endif

/// A runnable that knows who pushed it and its sequence number.
struct item : runnable {
  std::uint32_t producer = 0;
  std::uint32_t seq = 0;
};

/// Takes a batch and appends it to `out`; returns the count and checks the list shape.
std::size_t take(injection_queue& q, std::size_t max, std::vector<item*>& out) {
  runnable* first = reinterpret_cast<runnable*>(0x1);  // must be overwritten when n > 0
  const std::size_t n = q.pop_batch(max, &first);
  std::size_t walked = 0;
  for (runnable* r = n ? first : nullptr; r != nullptr; r = r->m_next_runnable) {
    out.push_back(static_cast<item*>(r));
    ++walked;
  }
  EXPECT_EQ(walked, n) << "pop_batch's list is not terminated after the count it returned";
  EXPECT_LE(n, max);
  return n;
}

TEST(injection_queue, empty_queue) {
  injection_queue q;
  EXPECT_TRUE(q.empty_hint());
  EXPECT_EQ(q.size_hint(), 0u);
  runnable* first = nullptr;
  EXPECT_EQ(q.pop_batch(8, &first), 0u);
  EXPECT_EQ(first, nullptr);
}

TEST(injection_queue, fifo_order_single_pops) {
  injection_queue q;
  std::vector<item> items(100);
  for (std::uint32_t i = 0; i < items.size(); ++i) {
    items[i].seq = i;
    q.push(&items[i]);
    EXPECT_EQ(q.size_hint(), i + 1u);
  }
  std::vector<item*> out;
  while (take(q, 1, out) != 0) {
  }
  ASSERT_EQ(out.size(), items.size());
  for (std::uint32_t i = 0; i < out.size(); ++i)
    EXPECT_EQ(out[i]->seq, i);
  EXPECT_TRUE(q.empty_hint());
}

TEST(injection_queue, batches_take_the_oldest_first) {
  injection_queue q;
  std::vector<item> items(50);
  for (std::uint32_t i = 0; i < items.size(); ++i) {
    items[i].seq = i;
    q.push(&items[i]);
  }
  std::vector<item*> out;
  EXPECT_EQ(take(q, 7, out), 7u);
  EXPECT_EQ(q.size_hint(), 43u);
  EXPECT_EQ(take(q, 0, out), 0u);  // a zero batch takes nothing
  EXPECT_EQ(take(q, 1000, out), 43u);
  EXPECT_TRUE(q.empty_hint());
  for (std::uint32_t i = 0; i < out.size(); ++i)
    EXPECT_EQ(out[i]->seq, i);
  // usable again after running empty (head and tail reset)
  q.push(&items[3]);
  q.push(&items[4]);
  out.clear();
  EXPECT_EQ(take(q, 10, out), 2u);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0]->seq, 3u);
  EXPECT_EQ(out[1]->seq, 4u);
}

TEST(injection_queue, push_list_appends_in_order) {
  injection_queue q;
  std::vector<item> items(10);
  for (std::uint32_t i = 0; i < items.size(); ++i)
    items[i].seq = i;
  q.push(&items[0]);
  // link 1..8 by hand; item 8's stale next pointer must be cut by push_list
  for (std::size_t i = 1; i < 8; ++i)
    items[i].m_next_runnable = &items[i + 1];
  items[8].m_next_runnable = &items[9];
  q.push_list(&items[1], &items[8], 8);
  EXPECT_EQ(q.size_hint(), 9u);
  q.push(&items[9]);
  std::vector<item*> out;
  EXPECT_EQ(take(q, 100, out), 10u);
  ASSERT_EQ(out.size(), 10u);
  for (std::uint32_t i = 0; i < out.size(); ++i)
    EXPECT_EQ(out[i]->seq, i);
}

// Random sequences of push / push_list / pop_batch against a std::deque.
TEST(injection_queue, random_sequences_match_a_deque) {
  for (std::uint32_t seed : {1u, 2u, 3u, 0xC0FFEEu, 20240601u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    constexpr std::size_t k_items = 20'000;
    std::vector<item> pool(k_items);
    std::size_t next = 0;
    injection_queue q;
    std::deque<item*> oracle;
    while (next < k_items || !oracle.empty()) {
      const unsigned op = rng() % 10;
      if (op < 4 && next < k_items) {
        item* it = &pool[next];
        it->seq = static_cast<std::uint32_t>(next++);
        q.push(it);
        oracle.push_back(it);
      } else if (op < 6 && next < k_items) {
        const std::size_t n = std::min<std::size_t>(1 + rng() % 40, k_items - next);
        for (std::size_t i = 0; i < n; ++i) {
          pool[next + i].seq = static_cast<std::uint32_t>(next + i);
          pool[next + i].m_next_runnable = i + 1 < n ? &pool[next + i + 1] : nullptr;
          oracle.push_back(&pool[next + i]);
        }
        q.push_list(&pool[next], &pool[next + n - 1], n);
        next += n;
      } else {
        const std::size_t max = rng() % 50;
        std::vector<item*> out;
        const std::size_t n = take(q, max, out);
        ASSERT_EQ(n, std::min(max, oracle.size()));
        for (item* it : out) {
          ASSERT_EQ(it, oracle.front());
          oracle.pop_front();
        }
      }
      ASSERT_EQ(q.size_hint(), oracle.size());
      ASSERT_EQ(q.empty_hint(), oracle.empty());
    }
  }
}

/// Producers push (singly and in lists of up to 8) while `consumers` threads pop batches.
void concurrent_run(unsigned producers, unsigned consumers, std::uint32_t per_producer) {
  injection_queue q;
  std::vector<std::unique_ptr<item[]>> items;
  for (unsigned p = 0; p < producers; ++p) {
    items.emplace_back(new item[per_producer]);
    for (std::uint32_t i = 0; i < per_producer; ++i) {
      items[p][i].producer = p;
      items[p][i].seq = i;
    }
  }
  const std::size_t total = std::size_t{producers} * per_producer;
  std::unique_ptr<std::atomic<std::uint32_t>[]> taken(new std::atomic<std::uint32_t>[total]());
  std::atomic<std::size_t> consumed{0};
  std::atomic<bool> order_ok{true};
  std::atomic<bool> list_ok{true};
  std::latch go(producers + consumers);
  std::vector<std::thread> threads;
  for (unsigned p = 0; p < producers; ++p)
    threads.emplace_back([&, p] {
      std::minstd_rand rng(p + 1);
      go.arrive_and_wait();
      std::uint32_t i = 0;
      while (i < per_producer) {
        if (rng() % 2 == 0) {
          q.push(&items[p][i++]);
        } else {
          const std::uint32_t n = std::min<std::uint32_t>(1 + rng() % 8, per_producer - i);
          for (std::uint32_t k = 0; k + 1 < n; ++k)
            items[p][i + k].m_next_runnable = &items[p][i + k + 1];
          q.push_list(&items[p][i], &items[p][i + n - 1], n);
          i += n;
        }
      }
    });
  for (unsigned c = 0; c < consumers; ++c)
    threads.emplace_back([&, c] {
      std::minstd_rand rng(100 + c);
      std::vector<std::int64_t> last(producers, -1);  // per producer: the last seq this consumer saw
      go.arrive_and_wait();
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (consumed.load() < total && std::chrono::steady_clock::now() < until) {
        runnable* first = nullptr;
        const std::size_t n = q.pop_batch(1 + rng() % 32, &first);
        std::size_t walked = 0;
        for (runnable* r = n ? first : nullptr; r != nullptr; r = r->m_next_runnable) {
          auto* it = static_cast<item*>(r);
          taken[std::size_t{it->producer} * per_producer + it->seq].fetch_add(1);
          if (static_cast<std::int64_t>(it->seq) <= last[it->producer])
            order_ok.store(false);
          last[it->producer] = it->seq;
          ++walked;
        }
        if (walked != n)
          list_ok.store(false);
        consumed.fetch_add(n);
      }
    });
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(consumed.load(), total);
  EXPECT_TRUE(order_ok.load()) << "a consumer saw a producer's items out of order";
  EXPECT_TRUE(list_ok.load()) << "a popped batch was not a list of the returned length";
  std::size_t bad = 0;
  for (std::size_t i = 0; i < total; ++i)
    bad += taken[i].load() != 1 ? 1 : 0;
  EXPECT_EQ(bad, 0u) << "items not taken exactly once";
  EXPECT_TRUE(q.empty_hint());
}

TEST(injection_queue, concurrent_pushers_one_consumer) { concurrent_run(4, 1, 100'000 / k_queue_slow); }

TEST(injection_queue, concurrent_pushers_two_consumers) { concurrent_run(4, 2, 100'000 / k_queue_slow); }

TEST(injection_queue, many_pushers_two_consumers) { concurrent_run(16, 2, 20'000 / k_queue_slow); }

}  // namespace
