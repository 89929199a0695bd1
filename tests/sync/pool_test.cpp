// The sync primitives under the multi-threaded work-stealing thread_pool: tasks on
// different workers lock, signal, send and cancel concurrently. Counters that only the
// primitive protects are plain ints, so ThreadSanitizer checks the happens-before edges
// each primitive promises.
#include "sync_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <vector>

using namespace std::chrono_literals;
using sync_test::failed_with;

namespace {

saturn::pool_options four_workers() { return saturn::pool_options{.threads = 4}; }

// (The untrack race these tests once skipped under TSan is fixed: m_live_index is
// accessed through std::atomic_ref.)
#define SATURN_SKIP_POOL_UNDER_TSAN() (void)0

template <class T>
saturn::task<> join_all(std::vector<saturn::join_handle<T>>& hs) {
  for (auto& h : hs)
    (void)co_await std::move(h);
}

}  // namespace

TEST(sync_pool, mutex_keeps_the_invariant_across_workers) {
  SATURN_SKIP_POOL_UNDER_TSAN();
  constexpr int tasks = 1000, rounds = 3;
  saturn::thread_pool pool(four_workers());
  saturn::mutex m;
  long counter = 0;  // plain: only the mutex orders the accesses
  int inside = 0;
  std::atomic<int> violations{0};
  auto worker = [&]() -> saturn::task<> {
    for (int r = 0; r < rounds; ++r) {
      auto g = co_await m.lock();
      if (!g || ++inside != 1)
        violations.fetch_add(1);
      long v = counter;
      co_await saturn::yield();  // may continue on another worker
      counter = v + 1;
      --inside;
    }
  };
  pool.block_on([&]() -> saturn::task<> {
    std::vector<saturn::join_handle<void>> hs;
    for (int i = 0; i < tasks; ++i)
      hs.push_back(pool.spawn(worker()));
    co_await join_all(hs);
  }());
  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(counter, long{tasks} * rounds);
}

TEST(sync_pool, channel_mpmc_every_value_exactly_once) {
  SATURN_SKIP_POOL_UNDER_TSAN();
  constexpr int producers = 4, consumers = 4, per_producer = 5000;
  for (std::size_t capacity : {std::size_t{1}, std::size_t{16}, saturn::unbounded}) {
    saturn::thread_pool pool(four_workers());
    saturn::channel<int> ch(capacity);
    saturn::wait_group producing;
    std::vector<std::atomic<int>> seen(producers * per_producer);
    auto producer = [&](int p) -> saturn::task<> {
      for (int i = 0; i < per_producer; ++i) {
        auto r = co_await ch.send(p * per_producer + i);
        EXPECT_TRUE(r.has_value());
      }
      producing.done();
    };
    auto consumer = [&]() -> saturn::task<int> {
      int n = 0;
      while (auto r = co_await ch.receive()) {
        seen[*r].fetch_add(1, std::memory_order_relaxed);
        ++n;
      }
      co_return n;
    };
    int total = pool.block_on([&]() -> saturn::task<int> {
      producing.add(producers);
      std::vector<saturn::join_handle<int>> cs;
      std::vector<saturn::join_handle<void>> ps;
      for (int c = 0; c < consumers; ++c)
        cs.push_back(pool.spawn(consumer()));
      for (int p = 0; p < producers; ++p)
        ps.push_back(pool.spawn(producer(p)));
      EXPECT_TRUE((co_await producing.wait()).has_value());
      ch.close();
      co_await join_all(ps);
      int sum = 0;
      for (auto& c : cs)
        sum += co_await std::move(c);
      co_return sum;
    }());
    EXPECT_EQ(total, producers * per_producer);
    for (std::size_t v = 0; v < seen.size(); ++v)
      ASSERT_EQ(seen[v].load(), 1) << "value " << v << " capacity " << capacity;
  }
}

TEST(sync_pool, event_wakes_waiters_on_every_worker) {
  SATURN_SKIP_POOL_UNDER_TSAN();
  saturn::thread_pool pool(four_workers());
  for (int round = 0; round < 50; ++round) {
    saturn::event ev;
    saturn::latch parked(200);
    int payload = 0;  // plain: published by set(), read after wait()
    std::atomic<int> ok{0};
    auto waiter = [&]() -> saturn::task<> {
      parked.count_down();
      if (co_await ev.wait()) {
        EXPECT_EQ(payload, 42);
        ok.fetch_add(1);
      }
    };
    pool.block_on([&]() -> saturn::task<> {
      std::vector<saturn::join_handle<void>> hs;
      for (int i = 0; i < 200; ++i)
        hs.push_back(pool.spawn(waiter()));
      EXPECT_TRUE((co_await parked.wait()).has_value());
      payload = 42;
      ev.set();
      co_await join_all(hs);
    }());
    ASSERT_EQ(ok.load(), 200);
  }
}

TEST(sync_pool, semaphore_bounds_concurrency_across_workers) {
  SATURN_SKIP_POOL_UNDER_TSAN();
  saturn::thread_pool pool(four_workers());
  saturn::semaphore s(3);
  std::atomic<int> inside{0}, most{0};
  auto worker = [&]() -> saturn::task<> {
    for (int r = 0; r < 20; ++r) {
      EXPECT_TRUE((co_await s.acquire()).has_value());
      const int now = inside.fetch_add(1) + 1;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      co_await saturn::yield();
      inside.fetch_sub(1);
      s.release();
    }
  };
  pool.block_on([&]() -> saturn::task<> {
    std::vector<saturn::join_handle<void>> hs;
    for (int i = 0; i < 200; ++i)
      hs.push_back(pool.spawn(worker()));
    co_await join_all(hs);
  }());
  EXPECT_LE(most.load(), 3);
  EXPECT_EQ(s.available(), 3u);
}

TEST(sync_pool, oneshot_and_wait_group_across_workers) {
  SATURN_SKIP_POOL_UNDER_TSAN();
  saturn::thread_pool pool(four_workers());
  constexpr int pairs = 500;
  std::atomic<long> sum{0};
  saturn::wait_group wg;
  auto producer = [](saturn::oneshot<int>::sender tx, int v) -> saturn::task<> {
    co_await saturn::yield();
    if (v % 10 != 0)
      (void)tx.send(v);  // every tenth sender is dropped instead
  };
  auto consumer = [&](saturn::oneshot<int>::receiver rx, int v) -> saturn::task<> {
    auto r = co_await rx.receive();
    if (v % 10 != 0) {
      EXPECT_EQ(*r, v);
      sum.fetch_add(*r);
    } else {
      EXPECT_TRUE(failed_with(r, std::errc::broken_pipe));
    }
    wg.done();
  };
  pool.block_on([&]() -> saturn::task<> {
    wg.add(pairs);
    for (int i = 0; i < pairs; ++i) {
      auto ends = saturn::oneshot<int>::make();
      pool.spawn(consumer(std::move(ends.second), i)).detach();
      pool.spawn(producer(std::move(ends.first), i)).detach();
    }
    EXPECT_TRUE((co_await wg.wait()).has_value());
  }());
  long expected = 0;
  for (int i = 0; i < pairs; ++i)
    expected += i % 10 != 0 ? i : 0;
  EXPECT_EQ(sum.load(), expected);
}

// Plain OS threads (not workers) set an event, send and close while pool tasks wait:
// the wakes go through the pool's injection path.
TEST(sync_pool, plain_threads_wake_pool_tasks) {
  SATURN_SKIP_POOL_UNDER_TSAN();
  constexpr int threads = 3, per_thread = 2000;
  saturn::thread_pool pool(four_workers());
  saturn::event go;
  saturn::channel<int> ch(8);
  std::vector<std::atomic<int>> seen(threads * per_thread);
  std::atomic<int> started{0};
  auto consumer = [&]() -> saturn::task<> {
    EXPECT_TRUE((co_await go.wait()).has_value());
    while (auto r = co_await ch.receive())
      seen[*r].fetch_add(1, std::memory_order_relaxed);
  };
  std::vector<std::thread> ts;
  pool.block_on([&]() -> saturn::task<> {
    std::vector<saturn::join_handle<void>> hs;
    for (int c = 0; c < 4; ++c)
      hs.push_back(pool.spawn(consumer()));
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        if (started.fetch_add(1) + 1 == threads)
          go.set();
        for (int i = 0; i < per_thread; ++i)
          while (!ch.try_send(t * per_thread + i))
            std::this_thread::yield();
        if (started.fetch_add(1) + 1 == 2 * threads)
          ch.close();  // the last sender closes
      });
    co_await join_all(hs);
  }());
  for (auto& t : ts)
    t.join();
  for (std::size_t v = 0; v < seen.size(); ++v)
    ASSERT_EQ(seen[v].load(), 1) << "value " << v;
}

// Cancellation racing hand-offs with every party on a different worker: a receiver under
// its own stop token, a sender task and a cancelling task, all spawned at once.
TEST(sync_pool, cancel_races_sends_across_workers_without_losing_values) {
  SATURN_SKIP_POOL_UNDER_TSAN();
  saturn::thread_pool pool(four_workers());
  saturn::channel<int> ch(saturn::unbounded);
  constexpr int rounds = 300;
  int received = 0, canceled = 0;
  for (int round = 0; round < rounds; ++round) {
    sync_test::stoppable stop(pool);
    std::optional<saturn::result<int>> got;
    auto receiver = [&]() -> saturn::task<> { got.emplace(co_await ch.receive()); };
    auto sender = [&]() -> saturn::task<> {
      for (int y = 0; y < round % 3; ++y)
        co_await saturn::yield();
      EXPECT_TRUE(ch.try_send(round).has_value());
    };
    auto canceller = [&]() -> saturn::task<> {
      for (int y = 0; y < round % 4; ++y)
        co_await saturn::yield();
      stop.source.request_stop();
    };
    pool.block_on([&]() -> saturn::task<> {
      auto r = saturn::spawn_in(stop.ctx, receiver());
      auto s = pool.spawn(sender());
      auto c = pool.spawn(canceller());
      co_await std::move(r);
      co_await std::move(s);
      co_await std::move(c);
    }());
    ASSERT_TRUE(got.has_value());
    if (got->has_value()) {
      ++received;
      ASSERT_EQ(**got, round);
    } else {
      ++canceled;
      ASSERT_TRUE(failed_with(*got, std::errc::operation_canceled));
      ASSERT_EQ(*ch.try_receive(), round);  // still there: nothing lost
    }
    ASSERT_EQ(ch.size(), 0u);
  }
  EXPECT_EQ(received + canceled, rounds);
}

// with_timeout on the pool: the deadline timer is disarmed on the loop that armed it,
// whichever worker the task ends on.
TEST(sync_pool, with_timeout_races_sends_without_losing_values) {
  saturn::thread_pool pool(four_workers());
  saturn::channel<int> ch(saturn::unbounded);
  constexpr int rounds = 300;
  std::atomic<int> received{0};
  auto receiver = [&]() -> saturn::task<> {
    auto r = co_await ch.receive();
    if (r)
      received.fetch_add(1);
    else
      EXPECT_TRUE(failed_with(r, std::errc::operation_canceled));
  };
  auto sender = [&](int i) -> saturn::task<> {
    for (int y = 0; y < i % 4; ++y)
      co_await saturn::yield();
    EXPECT_TRUE(ch.try_send(i).has_value());
  };
  pool.block_on([&]() -> saturn::task<> {
    std::vector<saturn::join_handle<saturn::result<void>>> timed;
    std::vector<saturn::join_handle<void>> senders;
    for (int i = 0; i < rounds; ++i) {
      timed.push_back(pool.spawn(saturn::with_timeout(std::chrono::microseconds(i % 40), receiver())));
      senders.push_back(pool.spawn(sender(i)));
    }
    co_await join_all(timed);
    co_await join_all(senders);
  }());
  int left = 0;
  while (ch.try_receive())
    ++left;
  EXPECT_EQ(received.load() + left, rounds);
}
