// Cross-thread hand-offs: many producers at once (every item exactly once, per-producer
// FIFO), wake-ups of a loop asleep in the kernel (eventfd path from plain threads,
// MSG_RING path from threads that run a loop of their own), and stop()/wake() from
// other threads.
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "ring/ring.hpp"
#include "test_support.hpp"

namespace {

using namespace saturn_test;
using saturn::clock;
using saturn::event_loop;
using saturn::loop_access;
using saturn::loop_options;
using saturn::run_mode;
using saturn::runnable;

constexpr int k_producers = 8;
constexpr int k_items = 100'000;

/// Whether this kernel has IORING_OP_MSG_RING (probed on a throwaway ring).
bool kernel_has_msg_ring() {
  saturn::ring::uring probe(saturn::ring::setup_options{.entries = 2});
  return probe.feature_set().msg_ring;
}

class remote : public ::testing::TestWithParam<bool> {
 protected:
  loop_options opts() const { return loop_options{.defer_taskrun = GetParam()}; }
};

/// What the loop thread records about the hand-offs it receives.
struct ledger {
  event_loop* loop = nullptr;
  std::vector<std::vector<std::uint8_t>> seen;  // [producer][seq] delivery count
  std::vector<int> next;                        // next expected seq per producer
  int fifo_violations = 0;
  int delivered = 0;
  int expected = 0;

  ledger(event_loop* l, int producers, int items)
      : loop(l), seen(static_cast<std::size_t>(producers), std::vector<std::uint8_t>(static_cast<std::size_t>(items))),
        next(static_cast<std::size_t>(producers), 0), expected(producers * items) {}

  void record(int producer, int seq) {
    auto& count = seen[static_cast<std::size_t>(producer)][static_cast<std::size_t>(seq)];
    if (count < 255)
      ++count;
    int& n = next[static_cast<std::size_t>(producer)];
    if (seq != n)
      ++fifo_violations;
    n = seq + 1;
    if (++delivered == expected)
      loop->release_keep_alive();
  }

  void expect_exactly_once() const {
    int missing = 0;
    int repeated = 0;
    for (const auto& v : seen)
      for (std::uint8_t c : v) {
        missing += c == 0;
        repeated += c > 1;
      }
    EXPECT_EQ(missing, 0) << "items lost";
    EXPECT_EQ(repeated, 0) << "items delivered twice";
    EXPECT_EQ(fifo_violations, 0) << "per-producer FIFO order broken";
    EXPECT_EQ(delivered, expected);
  }
};

/// A pre-allocated hand-off item (post_remote allocates nothing).
struct item : runnable {
  ledger* book = nullptr;
  int producer = 0;
  int seq = 0;
  item() {
    m_fn = [](runnable* self, run_mode mode) noexcept {
      auto* it = static_cast<item*>(self);
      if (mode == run_mode::run)
        it->book->record(it->producer, it->seq);
    };
  }
};

TEST_P(remote, many_producers_post_remote_exactly_once_in_order) {
  event_loop loop(opts());
  ledger book(&loop, k_producers, k_items);
  std::vector<std::vector<item>> items(k_producers, std::vector<item>(k_items));
  for (int p = 0; p < k_producers; ++p)
    for (int s = 0; s < k_items; ++s) {
      item& it = items[static_cast<std::size_t>(p)][static_cast<std::size_t>(s)];
      it.book = &book;
      it.producer = p;
      it.seq = s;
    }
  loop.add_keep_alive();  // released by the last item
  std::atomic<bool> go{false};
  std::vector<std::thread> producers;
  for (int p = 0; p < k_producers; ++p)
    producers.emplace_back([&, p] {
      while (!go.load(std::memory_order_acquire))
        std::this_thread::yield();
      for (item& it : items[static_cast<std::size_t>(p)])
        loop.post_remote(&it);
    });
  go.store(true, std::memory_order_release);
  watchdog dog(60s, "remote hand-offs were lost (the loop kept sleeping)");
  loop.run();
  for (auto& t : producers)
    t.join();
  book.expect_exactly_once();
  EXPECT_FALSE(loop.has_work());
}

TEST_P(remote, many_producers_defer_remote_exactly_once_in_order) {
  event_loop loop(opts());
  ledger book(&loop, k_producers, k_items);
  loop.add_keep_alive();
  std::atomic<bool> go{false};
  std::vector<std::thread> producers;
  for (int p = 0; p < k_producers; ++p)
    producers.emplace_back([&, p] {
      while (!go.load(std::memory_order_acquire))
        std::this_thread::yield();
      for (int s = 0; s < k_items; ++s)
        loop.defer_remote([&book, p, s] { book.record(p, s); });
    });
  go.store(true, std::memory_order_release);
  watchdog dog(60s, "remote hand-offs were lost (the loop kept sleeping)");
  loop.run();
  for (auto& t : producers)
    t.join();
  book.expect_exactly_once();
}

// The loop sleeps in the kernel with nothing to do but a keep_alive; a plain thread
// (no loop: the eventfd path) posts after a pause. Repeated, so the wake read is re-armed.
TEST_P(remote, wakes_a_sleeping_loop_from_a_plain_thread) {
  event_loop loop(opts());
  constexpr int rounds = 20;
  std::atomic<int> delivered{0};
  std::vector<clock::duration> latency;
  std::thread producer([&] {
    for (int i = 0; i < rounds; ++i) {
      wait_until_sleeping(loop);
      std::this_thread::sleep_for(i == 0 ? 20ms : 1ms);
      const auto posted = clock::now();
      loop.defer_remote([&, posted, i] {
        latency.push_back(clock::now() - posted);
        delivered.store(i + 1, std::memory_order_release);
        if (i + 1 == rounds)
          loop.release_keep_alive();
      });
      while (delivered.load(std::memory_order_acquire) != i + 1)
        std::this_thread::yield();
    }
  });
  loop.add_keep_alive();
  watchdog dog(20s, "a sleeping loop was not woken by defer_remote");
  loop.run();
  producer.join();
  ASSERT_EQ(latency.size(), static_cast<std::size_t>(rounds));
  for (auto l : latency)
    EXPECT_LT(l, 1s) << "delivered, but not promptly";
}

// loop_stats::remote_wakes: "wake-ups sent to this loop by other threads".
TEST_P(remote, stats_count_remote_wakes) {
  event_loop loop(opts());
  std::thread producer([&] {
    wait_until_sleeping(loop);
    loop.defer_remote([&] { loop.release_keep_alive(); });
  });
  loop.add_keep_alive();
  watchdog dog(20s, "a sleeping loop was not woken by defer_remote");
  loop.run();
  producer.join();
  EXPECT_GE(loop.stats().remote_wakes, 1u) << "a remote wake-up ended a sleep but was not counted";
}

TEST_P(remote, post_remote_from_the_loop_thread_itself) {
  event_loop loop(opts());
  ledger book(&loop, 1, 100);
  std::vector<item> items(100);
  loop.add_keep_alive();
  for (int s = 0; s < 100; ++s) {
    items[static_cast<std::size_t>(s)].book = &book;
    items[static_cast<std::size_t>(s)].seq = s;
    loop.post_remote(&items[static_cast<std::size_t>(s)]);
  }
  watchdog dog(10s, "self-posted remote items never ran");
  loop.run();
  book.expect_exactly_once();
}

// A thread that runs its own loop wakes the other loop with IORING_OP_MSG_RING: the
// sleeping loop's eventfd read is never completed, yet the item is delivered.
TEST_P(remote, msg_ring_wake_from_a_thread_with_its_own_loop) {
  if (!kernel_has_msg_ring())
    GTEST_SKIP() << "no IORING_OP_MSG_RING (Linux >= 5.18): loops wake each other through the eventfd";
  event_loop a(opts());
  std::atomic<bool> b_done{false};
  bool delivered = false;
  std::thread other([&] {
    event_loop b(opts());
    b.defer([&] {
      wait_until_sleeping(a);
      a.defer_remote([&] {
        delivered = true;
        a.release_keep_alive();
      });
    });
    b.run();
    b_done.store(true);
  });
  a.add_keep_alive();
  watchdog dog(20s, "a MSG_RING wake-up did not reach the sleeping loop");
  a.run();
  other.join();
  EXPECT_TRUE(delivered);
  EXPECT_TRUE(b_done.load());
  EXPECT_TRUE(loop_access::wake_armed(a)) << "the eventfd was used although the poster runs a loop (MSG_RING expected)";
}

TEST_P(remote, eventfd_wake_from_a_plain_thread_completes_the_wake_read) {
  event_loop a(opts());
  std::thread other([&] {
    wait_until_sleeping(a);
    a.defer_remote([&] { a.release_keep_alive(); });
  });
  a.add_keep_alive();
  watchdog dog(20s, "an eventfd wake-up did not reach the sleeping loop");
  a.run();
  other.join();
  EXPECT_FALSE(loop_access::wake_armed(a)) << "the wake-up did not come through the eventfd read";
}

// Two loops on two threads bounce one token back and forth through post_remote: every
// hop is a MSG_RING wake of a loop that may be asleep; both loops keep running.
TEST_P(remote, ping_pong_between_two_loops) {
  constexpr int hops = 5'000;
  struct side {
    event_loop* loop = nullptr;
    std::atomic<event_loop*> ready{nullptr};
    int received = 0;
  };
  side sa;
  side sb;
  struct ball : runnable {
    side* here = nullptr;  // the side that runs it next
    side* there = nullptr;
    int hop = 0;
  };
  ball token;
  token.m_fn = [](runnable* self, run_mode mode) noexcept {
    auto* b = static_cast<ball*>(self);
    if (mode != run_mode::run)
      return;
    side* me = b->here;
    ++me->received;
    const bool last = ++b->hop >= hops;
    if (b->hop >= hops - 1)
      me->loop->release_keep_alive();  // each side releases once, on its final receipt
    if (last)
      return;
    std::swap(b->here, b->there);
    b->here->loop->post_remote(b);
  };
  std::atomic<bool> start{false};
  std::atomic<bool> a_done{false};
  std::thread tb([&] {
    event_loop b(opts());
    sb.loop = &b;
    b.add_keep_alive();
    sb.ready.store(&b);
    while (!start.load())
      std::this_thread::yield();
    b.run();
    // lifetime: b must outlive A's last post_remote to it, which may still be inside
    // wake() (touching b) after b already ran the token and left run().
    while (!a_done.load())
      std::this_thread::yield();
  });
  event_loop a(opts());
  sa.loop = &a;
  a.add_keep_alive();
  while (sb.ready.load() == nullptr)
    std::this_thread::yield();
  token.here = &sb;
  token.there = &sa;
  start.store(true);
  sb.loop->post_remote(&token);
  watchdog dog(30s, "the ping-pong between two loops stalled");
  a.run();
  a_done.store(true);
  tb.join();
  EXPECT_EQ(sa.received + sb.received, hops);
  EXPECT_EQ(sa.received, hops / 2);
  EXPECT_EQ(sb.received, hops / 2);
}

TEST_P(remote, stop_from_another_thread_ends_run) {
  event_loop loop(opts());
  loop.add_keep_alive();  // never released: only stop() can end run()
  std::thread stopper([&] {
    wait_until_sleeping(loop);
    std::this_thread::sleep_for(5ms);
    loop.stop();
  });
  watchdog dog(20s, "stop() from another thread did not end run()");
  loop.run();
  stopper.join();
  EXPECT_FALSE(loop.stop_requested()) << "run() clears the stop request";
  loop.release_keep_alive();
}

TEST_P(remote, stop_from_a_thread_with_its_own_loop_ends_run) {
  event_loop loop(opts());
  loop.add_keep_alive();
  std::thread stopper([&] {
    event_loop mine(opts());
    wait_until_sleeping(loop);
    loop.stop();  // MSG_RING path
  });
  watchdog dog(20s, "stop() from another loop's thread did not end run()");
  loop.run();
  stopper.join();
  loop.release_keep_alive();
}

TEST_P(remote, stop_from_inside_a_callback_ends_run) {
  event_loop loop(opts());
  loop.add_keep_alive();
  pipe_fds p;
  char buf[1];
  int calls = 0;
  loop.read(p.r, buf, 1, 0, [&](int) { ++calls; });
  loop.after(2ms, [&] { loop.stop(); });
  watchdog dog(20s, "stop() from a callback did not end run()");
  loop.run();
  EXPECT_EQ(calls, 0);
  loop.release_keep_alive();
  // The loop is still usable afterwards.
  ASSERT_EQ(::write(p.w, "x", 1), 1);
  loop.run();
  EXPECT_EQ(calls, 1);
}

TEST_P(remote, stop_before_run_makes_run_return) {
  event_loop loop(opts());
  loop.add_keep_alive();
  loop.stop();
  EXPECT_TRUE(loop.stop_requested());
  watchdog dog(20s, "run() ignored an earlier stop()");
  loop.run();
  EXPECT_FALSE(loop.stop_requested());
  loop.release_keep_alive();
}

TEST_P(remote, wake_ends_a_sleep) {
  event_loop loop(opts());
  loop.add_keep_alive();
  std::thread waker([&] {
    wait_until_sleeping(loop);
    loop.wake();
  });
  watchdog dog(20s, "wake() from another thread did not end the sleep");
  EXPECT_TRUE(loop.run_once(true));  // returns once woken (work remains: the keep_alive)
  waker.join();
  loop.release_keep_alive();
}

// notify(): a wake token. It ends the current sleep, or the next one if the loop is
// awake; many notifies before a sleep collapse into one.
TEST_P(remote, notify_from_another_thread_ends_a_sleep) {
  event_loop loop(opts());
  loop.add_keep_alive();
  std::thread notifier([&] {
    wait_until_sleeping(loop);
    loop.notify();
  });
  watchdog dog(20s, "notify() from another thread did not end the sleep");
  EXPECT_TRUE(loop.run_once(true));
  notifier.join();
  loop.release_keep_alive();
}

TEST_P(remote, notify_before_a_sleep_makes_it_return_at_once) {
  event_loop loop(opts());
  loop.add_keep_alive();
  for (int i = 0; i < 5; ++i)
    loop.notify();  // collapse into one token
  watchdog dog(20s, "a pending notify() did not stop the next sleep");
  EXPECT_TRUE(loop.run_once(true));
  // The token is spent: the loop sleeps again until woken (here by a remote post). Note
  // that `while (!woken) run_once(true)` would hang: the iteration that runs the post
  // goes back to sleep before returning, so the post ends run() itself.
  bool woken = false;
  std::thread poster([&] {
    wait_until_sleeping(loop);
    loop.defer_remote([&] {
      woken = true;
      loop.release_keep_alive();
    });
  });
  loop.run();
  poster.join();
  EXPECT_TRUE(woken);
}

TEST_P(remote, notify_without_other_work_lets_run_return) {
  event_loop loop(opts());
  loop.notify();
  watchdog dog(20s, "run() with only a notify token did not return");
  loop.run();
  EXPECT_FALSE(loop.has_work());
}

INSTANTIATE_TEST_SUITE_P(modes, remote, ::testing::Bool(), mode_name);

}  // namespace
