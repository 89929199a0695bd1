// saturn::channel: FIFO order, a randomized oracle against std::deque, backpressure,
// close while senders and receivers wait (receivers drain first), MPMC exactly-once,
// plain threads sending and closing, and cancellation of send and receive (with_timeout,
// both orders, racing) with every value accounted for.
#include "sync_test_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using sync_test::failed_with;
using sync_test::settle;

namespace {

saturn::task<> receive_into(saturn::channel<int>& ch, std::optional<saturn::result<int>>& out) {
  out.emplace(co_await ch.receive());
}

/// Sends `v`; records the result and what is left in `v` (the value is kept on failure).
saturn::task<> send_into(saturn::channel<std::unique_ptr<int>>& ch, std::unique_ptr<int>& v,
                         std::optional<saturn::result<void>>& out) {
  out.emplace(co_await ch.send(std::move(v)));
}

saturn::task<> send_int_into(saturn::channel<int>& ch, int v, std::optional<saturn::result<void>>& out) {
  out.emplace(co_await ch.send(v));
}

}  // namespace

TEST(sync_channel, capacity_zero_is_rejected) {
  EXPECT_THROW(saturn::channel<int>(0), std::invalid_argument);
  saturn::channel<int> ub(saturn::unbounded);
  EXPECT_EQ(ub.capacity(), saturn::unbounded);
}

TEST(sync_channel, try_send_and_try_receive_keep_fifo_order) {
  saturn::channel<std::string> ch(3);
  EXPECT_TRUE(ch.try_send("a").has_value());
  std::string b = "b";
  EXPECT_TRUE(ch.try_send(b).has_value());  // copies
  EXPECT_EQ(b, "b");
  EXPECT_TRUE(ch.try_send(std::string("c")).has_value());
  std::string d = "d";
  auto full = ch.try_send(std::move(d));
  EXPECT_TRUE(failed_with(full, std::errc::resource_unavailable_try_again));
  EXPECT_EQ(d, "d") << "a failed send must not consume the value";
  EXPECT_EQ(ch.size(), 3u);
  EXPECT_EQ(*ch.try_receive(), "a");
  EXPECT_EQ(*ch.try_receive(), "b");
  EXPECT_EQ(*ch.try_receive(), "c");
  EXPECT_TRUE(failed_with(ch.try_receive(), std::errc::resource_unavailable_try_again));
  ch.try_send("e").value();
  ch.close();
  ch.close();  // idempotent
  EXPECT_TRUE(ch.is_closed());
  std::string f = "f";
  auto closed = ch.try_send(std::move(f));
  EXPECT_TRUE(failed_with(closed, std::errc::broken_pipe));
  EXPECT_EQ(f, "f");
  EXPECT_NE(closed.err().message().find("channel closed"), std::string::npos) << closed.err().message();
  EXPECT_EQ(*ch.try_receive(), "e");  // drains after close
  EXPECT_TRUE(failed_with(ch.try_receive(), std::errc::broken_pipe));
}

// Random try_send / try_receive / close sequences checked against a std::deque model.
TEST(sync_channel, randomized_against_a_deque_oracle) {
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t cap = trial % 10 == 0 ? saturn::unbounded : 1 + rng() % 17;
    saturn::channel<std::unique_ptr<int>> ch(cap);
    std::deque<int> model;
    bool closed = false;
    int next = 0;
    for (int step = 0; step < 500; ++step) {
      const unsigned action = rng() % 100;
      if (action < 50) {
        auto v = std::make_unique<int>(next);
        auto r = ch.try_send(std::move(v));
        if (closed) {
          ASSERT_TRUE(failed_with(r, std::errc::broken_pipe));
          ASSERT_TRUE(v && *v == next);
        } else if (model.size() >= cap) {
          ASSERT_TRUE(failed_with(r, std::errc::resource_unavailable_try_again));
          ASSERT_TRUE(v && *v == next);
        } else {
          ASSERT_TRUE(r.has_value());
          ASSERT_FALSE(v);
          model.push_back(next);
        }
        ++next;
      } else if (action < 98) {
        auto r = ch.try_receive();
        if (model.empty()) {
          ASSERT_TRUE(failed_with(r, closed ? std::errc::broken_pipe : std::errc::resource_unavailable_try_again));
        } else {
          ASSERT_TRUE(r.has_value());
          ASSERT_EQ(**r, model.front());
          model.pop_front();
        }
      } else {
        ch.close();
        closed = true;
      }
      ASSERT_EQ(ch.size(), model.size());
      ASSERT_EQ(ch.is_closed(), closed);
    }
  }
}

TEST(sync_channel, waiting_receivers_are_served_in_fifo_order) {
  saturn::runtime rt;
  saturn::channel<int> ch(4);
  std::vector<std::optional<saturn::result<int>>> got(10);
  rt.block_on([&]() -> saturn::task<> {
    std::vector<saturn::join_handle<void>> hs;
    for (int i = 0; i < 10; ++i)
      hs.push_back(rt.spawn(receive_into(ch, got[i])));
    co_await settle();
    for (int i = 0; i < 10; ++i) {
      auto r = co_await ch.send(100 + i);
      EXPECT_TRUE(r.has_value());
    }
    EXPECT_EQ(ch.size(), 0u);  // every value went straight to a waiting receiver
    for (auto& h : hs)
      co_await std::move(h);
  }());
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(**got[i], 100 + i);
}

TEST(sync_channel, waiting_senders_are_served_in_fifo_order) {
  saturn::runtime rt;
  saturn::channel<int> ch(2);
  std::vector<std::optional<saturn::result<void>>> sent(8);
  rt.block_on([&]() -> saturn::task<> {
    std::vector<saturn::join_handle<void>> hs;
    for (int i = 0; i < 8; ++i)
      hs.push_back(rt.spawn(send_int_into(ch, i, sent[i])));
    co_await settle();
    EXPECT_EQ(ch.size(), 2u);
    for (int i = 0; i < 8; ++i) {
      auto r = co_await ch.receive();
      EXPECT_EQ(*r, i);
    }
    for (auto& h : hs)
      co_await std::move(h);
  }());
  for (auto& s : sent)
    EXPECT_TRUE(s->has_value());
}

TEST(sync_channel, backpressure_bounds_the_queue) {
  constexpr std::size_t cap = 4;
  constexpr int count = 2000;
  saturn::runtime rt;
  saturn::channel<int> ch(cap);
  std::size_t most = 0;
  int producer_waits = 0;
  std::vector<int> received;
  auto producer = [&]() -> saturn::task<> {
    for (int i = 0; i < count; ++i) {
      const bool full = ch.size() == cap;
      auto r = co_await ch.send(i);  // never yields unless the channel is full
      EXPECT_TRUE(r.has_value());
      producer_waits += full;
      most = std::max(most, ch.size());
    }
    ch.close();
  };
  auto consumer = [&]() -> saturn::task<> {
    for (;;) {
      most = std::max(most, ch.size());
      auto r = co_await ch.receive();
      if (!r) {
        EXPECT_TRUE(failed_with(r, std::errc::broken_pipe));
        co_return;
      }
      received.push_back(*r);
      co_await saturn::yield();  // a slow consumer
    }
  };
  rt.block_on([&]() -> saturn::task<> {
    auto p = rt.spawn(producer());
    auto c = rt.spawn(consumer());
    co_await std::move(p);
    co_await std::move(c);
  }());
  EXPECT_LE(most, cap);
  EXPECT_GT(producer_waits, 0) << "the fast producer never had to wait";
  ASSERT_EQ(received.size(), static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    ASSERT_EQ(received[i], i);
}

TEST(sync_channel, close_wakes_waiting_senders_and_keeps_their_values) {
  saturn::runtime rt;
  saturn::channel<std::unique_ptr<int>> ch(2);
  constexpr int senders = 5;
  std::vector<std::unique_ptr<int>> values;
  for (int i = 0; i < senders; ++i)
    values.push_back(std::make_unique<int>(i));
  std::vector<std::optional<saturn::result<void>>> sent(senders);
  std::vector<int> drained;
  rt.block_on([&]() -> saturn::task<> {
    std::vector<saturn::join_handle<void>> hs;
    for (int i = 0; i < senders; ++i)
      hs.push_back(rt.spawn(send_into(ch, values[i], sent[i])));
    co_await settle();
    EXPECT_EQ(ch.size(), 2u);  // two queued, three senders waiting
    ch.close();
    for (auto& h : hs)
      co_await std::move(h);
    for (;;) {
      auto r = co_await ch.receive();
      if (!r) {
        EXPECT_TRUE(failed_with(r, std::errc::broken_pipe));
        break;
      }
      drained.push_back(**r);
    }
  }());
  EXPECT_EQ(drained, (std::vector<int>{0, 1}));
  for (int i = 0; i < senders; ++i) {
    if (i < 2) {
      EXPECT_TRUE(sent[i]->has_value());
      EXPECT_FALSE(values[i]);
    } else {
      EXPECT_TRUE(failed_with(*sent[i], std::errc::broken_pipe));
      ASSERT_TRUE(values[i]) << "a sender woken by close lost its value";
      EXPECT_EQ(*values[i], i);
    }
  }
}

TEST(sync_channel, close_wakes_every_waiting_receiver) {
  saturn::runtime rt;
  saturn::channel<int> ch(8);
  std::vector<std::optional<saturn::result<int>>> got(20);
  rt.block_on([&]() -> saturn::task<> {
    std::vector<saturn::join_handle<void>> hs;
    for (auto& g : got)
      hs.push_back(rt.spawn(receive_into(ch, g)));
    co_await settle();
    ch.try_send(7).value();  // one receiver gets a value before the close
    ch.close();
    for (auto& h : hs)
      co_await std::move(h);
  }());
  EXPECT_EQ(**got[0], 7);
  for (std::size_t i = 1; i < got.size(); ++i)
    EXPECT_TRUE(failed_with(*got[i], std::errc::broken_pipe));
}

TEST(sync_channel, close_from_a_plain_thread_while_tasks_wait) {
  saturn::runtime rt;
  for (int round = 0; round < sync_test::race_rounds / 10; ++round) {
    saturn::channel<int> full(1), empty(1);
    full.try_send(1).value();
    std::optional<saturn::result<void>> sent;
    std::optional<saturn::result<int>> got;
    std::optional<std::thread> t;
    rt.block_on([&]() -> saturn::task<> {
      auto s = rt.spawn(send_int_into(full, 2, sent));
      auto r = rt.spawn(receive_into(empty, got));
      co_await settle();
      t.emplace([&] {
        full.close();
        empty.close();
      });
      co_await std::move(s);
      co_await std::move(r);
    }());
    t->join();
    ASSERT_TRUE(failed_with(*sent, std::errc::broken_pipe));
    ASSERT_TRUE(failed_with(*got, std::errc::broken_pipe));
    ASSERT_EQ(*full.try_receive(), 1);  // the queued value is still drained
  }
}

// Several producer and consumer tasks; every value is received exactly once.
void mpmc_exactly_once(std::size_t capacity) {
  constexpr int producers = 4, consumers = 4, per_producer = 2500;
  saturn::runtime rt;
  saturn::channel<int> ch(capacity);
  saturn::wait_group producing;
  std::vector<int> seen(producers * per_producer, 0);
  std::vector<std::vector<int>> by_consumer(consumers);
  auto producer = [&](int p) -> saturn::task<> {
    for (int i = 0; i < per_producer; ++i) {
      auto r = co_await ch.send(p * per_producer + i);
      EXPECT_TRUE(r.has_value());
      if (i % 7 == 0)
        co_await saturn::yield();
    }
    producing.done();
  };
  auto consumer = [&](int c) -> saturn::task<> {
    for (;;) {
      auto r = co_await ch.receive();
      if (!r)
        co_return;
      ++seen[*r];
      by_consumer[c].push_back(*r);
      if (*r % 5 == 0)
        co_await saturn::yield();
    }
  };
  rt.block_on([&]() -> saturn::task<> {
    std::vector<saturn::join_handle<void>> hs;
    producing.add(producers);
    for (int c = 0; c < consumers; ++c)
      hs.push_back(rt.spawn(consumer(c)));
    for (int p = 0; p < producers; ++p)
      hs.push_back(rt.spawn(producer(p)));
    auto r = co_await producing.wait();
    EXPECT_TRUE(r.has_value());
    ch.close();
    for (auto& h : hs)
      co_await std::move(h);
  }());
  for (std::size_t v = 0; v < seen.size(); ++v)
    ASSERT_EQ(seen[v], 1) << "value " << v;
  // Per producer, each consumer sees that producer's values in send order (FIFO).
  for (auto& vs : by_consumer) {
    std::vector<int> last(producers, -1);
    for (int v : vs) {
      ASSERT_GT(v, last[v / per_producer]);
      last[v / per_producer] = v;
    }
  }
}

TEST(sync_channel, mpmc_bounded_every_value_exactly_once) { mpmc_exactly_once(8); }
TEST(sync_channel, mpmc_capacity_one_every_value_exactly_once) { mpmc_exactly_once(1); }
TEST(sync_channel, mpmc_unbounded_every_value_exactly_once) { mpmc_exactly_once(saturn::unbounded); }

TEST(sync_channel, plain_threads_try_send_and_close_while_tasks_receive) {
  constexpr int threads = 3, per_thread = 3000;
  for (std::size_t capacity : {std::size_t{16}, saturn::unbounded}) {
    saturn::runtime rt;
    saturn::channel<int> ch(capacity);
    std::vector<int> seen(threads * per_thread, 0);
    std::atomic<int> finished{0};
    std::vector<std::thread> ts;
    auto consumer = [&]() -> saturn::task<> {
      for (;;) {
        auto r = co_await ch.receive();
        if (!r) {
          EXPECT_TRUE(failed_with(r, std::errc::broken_pipe));
          co_return;
        }
        ++seen[*r];
      }
    };
    rt.block_on([&]() -> saturn::task<> {
      std::vector<saturn::join_handle<void>> hs;
      for (int c = 0; c < 3; ++c)
        hs.push_back(rt.spawn(consumer()));
      co_await settle();
      for (int t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
          for (int i = 0; i < per_thread; ++i) {
            for (;;) {
              auto r = ch.try_send(t * per_thread + i);
              if (r)
                break;
              EXPECT_TRUE(failed_with(r, std::errc::resource_unavailable_try_again));
              std::this_thread::yield();
            }
          }
          if (finished.fetch_add(1) + 1 == threads)
            ch.close();  // the last producer thread closes
        });
      for (auto& h : hs)
        co_await std::move(h);
    }());
    for (auto& t : ts)
      t.join();
    for (std::size_t v = 0; v < seen.size(); ++v)
      ASSERT_EQ(seen[v], 1) << "value " << v << " capacity " << capacity;
  }
}

TEST(sync_channel, with_timeout_cancels_receive_and_send) {
  saturn::runtime rt;
  saturn::channel<std::unique_ptr<int>> ch(1);
  // receive on an empty channel
  std::optional<saturn::result<std::unique_ptr<int>>> got;
  auto r = rt.block_on([&]() -> saturn::task<saturn::result<void>> {
    co_return co_await saturn::with_timeout(2ms, [](auto& c, auto& out) -> saturn::task<> {
      out.emplace(co_await c.receive());
    }(ch, got));
  }());
  EXPECT_TRUE(failed_with(r, std::errc::timed_out));
  EXPECT_TRUE(failed_with(*got, std::errc::operation_canceled));
  // send on a full channel: the value stays with the sender
  ch.try_send(std::make_unique<int>(1)).value();
  auto v = std::make_unique<int>(2);
  std::optional<saturn::result<void>> sent;
  r = rt.block_on([&]() -> saturn::task<saturn::result<void>> {
    co_return co_await saturn::with_timeout(2ms, send_into(ch, v, sent));
  }());
  EXPECT_TRUE(failed_with(r, std::errc::timed_out));
  EXPECT_TRUE(failed_with(*sent, std::errc::operation_canceled));
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, 2);
  // the cancelled waiters are gone: the channel works as before
  EXPECT_EQ(**ch.try_receive(), 1);
  EXPECT_TRUE(failed_with(ch.try_receive(), std::errc::resource_unavailable_try_again));
}

TEST(sync_channel, cancel_and_wake_in_both_orders) {
  saturn::runtime rt;
  for (bool wake_first : {true, false}) {
    // receive vs try_send
    {
      sync_test::stoppable stop(rt);
      saturn::channel<int> ch(1);
      std::optional<saturn::result<int>> got;
      rt.block_on([&]() -> saturn::task<> {
        auto h = saturn::spawn_in(stop.ctx, receive_into(ch, got));
        co_await settle();
        if (wake_first) {
          ch.try_send(5).value();
          stop.source.request_stop();
        } else {
          stop.source.request_stop();
          ch.try_send(5).value();
        }
        co_await std::move(h);
      }());
      if (wake_first) {
        EXPECT_EQ(**got, 5);
        EXPECT_EQ(ch.size(), 0u);
      } else {
        EXPECT_TRUE(failed_with(*got, std::errc::operation_canceled));
        EXPECT_EQ(*ch.try_receive(), 5);  // not lost
      }
    }
    // send vs try_receive
    {
      sync_test::stoppable stop(rt);
      saturn::channel<std::unique_ptr<int>> ch(1);
      ch.try_send(std::make_unique<int>(1)).value();
      auto v = std::make_unique<int>(2);
      std::optional<saturn::result<void>> sent;
      rt.block_on([&]() -> saturn::task<> {
        auto h = saturn::spawn_in(stop.ctx, send_into(ch, v, sent));
        co_await settle();
        if (wake_first) {
          EXPECT_EQ(**ch.try_receive(), 1);
          stop.source.request_stop();
        } else {
          stop.source.request_stop();
          EXPECT_EQ(**ch.try_receive(), 1);
        }
        co_await std::move(h);
      }());
      if (wake_first) {
        EXPECT_TRUE(sent->has_value());
        EXPECT_FALSE(v);
        EXPECT_EQ(**ch.try_receive(), 2);
      } else {
        EXPECT_TRUE(failed_with(*sent, std::errc::operation_canceled));
        ASSERT_TRUE(v);
        EXPECT_EQ(*v, 2);
        EXPECT_EQ(ch.size(), 0u);
      }
    }
  }
}

TEST(sync_channel, cancel_races_try_send_on_plain_threads) {
  saturn::runtime rt;
  int ok = 0, canceled = 0;
  for (int round = 0; round < sync_test::race_rounds; ++round) {
    saturn::channel<int> ch(1);
    std::optional<saturn::result<int>> got;
    sync_test::race_cancel_once(
        rt, [&] { return receive_into(ch, got); }, [&] { ch.try_send(round).value(); }, round);
    ASSERT_TRUE(got.has_value());
    // Exactly once: the value is either with the receiver or still in the channel.
    if (got->has_value()) {
      ++ok;
      ASSERT_EQ(**got, round);
      ASSERT_EQ(ch.size(), 0u);
    } else {
      ++canceled;
      ASSERT_TRUE(failed_with(*got, std::errc::operation_canceled));
      ASSERT_EQ(*ch.try_receive(), round);
    }
  }
  std::printf("[ info     ] channel receive race: %d received, %d cancelled\n", ok, canceled);
}

TEST(sync_channel, cancel_races_try_receive_on_plain_threads) {
  saturn::runtime rt;
  int ok = 0, canceled = 0;
  for (int round = 0; round < sync_test::race_rounds; ++round) {
    saturn::channel<std::unique_ptr<int>> ch(1);
    ch.try_send(std::make_unique<int>(-1)).value();
    auto v = std::make_unique<int>(round);
    std::optional<saturn::result<void>> sent;
    std::optional<saturn::result<std::unique_ptr<int>>> taken;
    sync_test::race_cancel_once(
        rt, [&] { return send_into(ch, v, sent); }, [&] { taken.emplace(ch.try_receive()); }, round);
    ASSERT_TRUE(sent.has_value());
    ASSERT_EQ(*taken->value(), -1);
    if (sent->has_value()) {
      ++ok;
      ASSERT_FALSE(v);
      ASSERT_EQ(**ch.try_receive(), round);
    } else {
      ++canceled;
      ASSERT_TRUE(failed_with(*sent, std::errc::operation_canceled));
      ASSERT_TRUE(v) << "a cancelled send lost its value";
      ASSERT_EQ(*v, round);
      ASSERT_EQ(ch.size(), 0u);
    }
  }
  std::printf("[ info     ] channel send race: %d sent, %d cancelled\n", ok, canceled);
}

TEST(sync_channel, with_timeout_races_try_send_without_losing_values) {
  saturn::runtime rt;
  saturn::channel<int> ch(saturn::unbounded);
  int received = 0, left = 0;
  const int rounds = sync_test::race_rounds / 4;
  for (int round = 0; round < rounds; ++round) {
    std::optional<saturn::result<int>> got;
    std::optional<std::thread> t;
    (void)rt.block_on([&]() -> saturn::task<saturn::result<void>> {
      t.emplace([&] { ch.try_send(round).value(); });
      co_return co_await saturn::with_timeout(std::chrono::microseconds(round % 50), receive_into(ch, got));
    }());
    t->join();
    ASSERT_TRUE(got.has_value());
    if (got->has_value())
      ++received;
    else
      ASSERT_TRUE(failed_with(*got, std::errc::operation_canceled));
  }
  while (ch.try_receive())
    ++left;
  EXPECT_EQ(received + left, rounds);
}

namespace {
/// Counts live instances, so a value destroyed twice (or never) shows up.
struct counted {
  static inline int live = 0;
  static inline int underflows = 0;
  int v = 0;
  explicit counted(int x) : v(x) { ++live; }
  counted(const counted& o) : v(o.v) { ++live; }
  counted(counted&& o) noexcept : v(o.v) { ++live; }
  counted& operator=(const counted&) = default;
  ~counted() {
    if (--live < 0)
      ++underflows;
  }
};
}  // namespace

// Every awaiter (and the value it holds) is destroyed exactly once, on every path: fast,
// parked, closed, cancelled (g++ 12 has destroyed some co_await temporaries twice).
TEST(sync_channel, values_and_awaiters_are_destroyed_exactly_once) {
  {
    saturn::runtime rt;
    saturn::channel<counted> ch(2);
    auto sender = [&](int i) -> saturn::task<> {
      counted c(i);
      (void)co_await ch.send(c);                 // copy path: the awaiter owns a copy
      (void)co_await ch.send(counted(i + 100));  // temporary path
    };
    auto receiver = [&]() -> saturn::task<> {
      for (int i = 0; i < 3; ++i)
        (void)co_await ch.receive();
    };
    rt.block_on([&]() -> saturn::task<> {
      std::vector<saturn::join_handle<void>> hs;
      for (int i = 0; i < 6; ++i)
        hs.push_back(rt.spawn(sender(i)));
      co_await settle();
      hs.push_back(rt.spawn(receiver()));
      hs.push_back(rt.spawn(receiver()));
      co_await settle();
      (void)co_await saturn::with_timeout(1ms, receiver());
      ch.close();
      for (auto& h : hs)
        co_await std::move(h);
    }());
  }
  EXPECT_EQ(counted::underflows, 0);
  EXPECT_EQ(counted::live, 0);
}
