// Mailbox semantics: order per sender, selective receive, timed receive, typed variants,
// sends to dead pids, pid reuse safety.
#include "helpers.hpp"

#include <gtest/gtest.h>

#include <mutex>
#include <random>
#include <string>
#include <variant>
#include <vector>

using namespace saturn;
using proc_test::eventually;

namespace {

struct collected {
  std::mutex m;
  std::vector<int> items;
  std::atomic<bool> done{false};
};

process<int> collector(int expect, collected* out) {
  for (int i = 0; i < expect; ++i) {
    int v = co_await saturn::receive();
    std::lock_guard l(out->m);
    out->items.push_back(v);
  }
  out->done = true;
}

TEST(Mailbox, OrderPerSenderFromManyThreads) {
  thread_pool pool({.threads = 2});
  constexpr int senders = 4, per = 5000;
  collected c;
  auto p = spawn_process(pool, collector, senders * per, &c);
  std::vector<std::thread> ts;
  for (int s = 0; s < senders; ++s)
    ts.emplace_back([&, s] {
      for (int i = 0; i < per; ++i)
        ASSERT_TRUE(send(p, s * per + i));
    });
  for (auto& t : ts)
    t.join();
  ASSERT_TRUE(eventually([&] { return c.done.load(); }));
  // Oracle: every sender's messages appear in its send order, and all arrive.
  std::vector<int> last(senders, -1);
  ASSERT_EQ(c.items.size(), std::size_t(senders * per));
  for (int v : c.items) {
    const int s = v / per, i = v % per;
    EXPECT_EQ(last[s] + 1, i);
    last[s] = i;
  }
  EXPECT_TRUE(eventually([&] { return !alive(p); }));
}

process<int> selective(std::vector<int>* got, std::atomic<bool>* done) {
  auto self = co_await this_process;
  // Take the even messages first, then everything left (the odd ones, in order).
  for (int i = 0; i < 50; ++i)
    got->push_back(co_await self.receive([](int v) { return v % 2 == 0; }));
  for (int i = 0; i < 50; ++i)
    got->push_back(co_await self.receive());
  *done = true;
}

TEST(Mailbox, SelectiveReceiveKeepsSkippedOrder) {
  for (int round = 0; round < 2; ++round) {
    runtime rt;
    std::vector<int> got;
    std::atomic<bool> done{false};
    rt.block_on([&]() -> task<> {
      auto p = spawn_process(selective, &got, &done);
      if (round == 0) {
        for (int i = 0; i < 100; ++i)
          send(p, i);  // all queued before the process first runs
      } else {
        for (int i = 0; i < 100; ++i) {
          send(p, i);
          co_await saturn::yield();  // interleaved with its receives
        }
      }
      while (!done)
        co_await saturn::yield();
    }());
    std::vector<int> expect;
    for (int i = 0; i < 100; i += 2)
      expect.push_back(i);
    for (int i = 1; i < 100; i += 2)
      expect.push_back(i);
    EXPECT_EQ(got, expect) << "round " << round;
  }
}

TEST(Mailbox, SelectiveReceiveRandomizedAgainstOracle) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 20; ++round) {
    runtime rt;
    std::vector<int> msgs(200);
    for (auto& m : msgs)
      m = static_cast<int>(rng() % 1000);
    std::vector<int> mods;
    for (int i = 0; i < 40; ++i)
      mods.push_back(static_cast<int>(rng() % 3));
    // Oracle: a list with the same selective take.
    std::vector<int> oracle_list = msgs, oracle_got;
    for (int m : mods) {
      auto it = std::find_if(oracle_list.begin(), oracle_list.end(), [&](int v) { return v % 3 == m; });
      if (it == oracle_list.end())
        break;
      oracle_got.push_back(*it);
      oracle_list.erase(it);
    }
    std::vector<int> got;
    rt.block_on([&]() -> task<> {
      std::atomic<bool> done{false};
      auto body = [&]() -> process<int> {
        auto self = co_await this_process;
        for (std::size_t i = 0; i < oracle_got.size(); ++i) {
          const int m = mods[i];
          got.push_back(co_await self.receive([m](int v) { return v % 3 == m; }));
        }
        done = true;
      };
      auto p = spawn_process(body);
      for (int v : msgs) {
        send(p, v);
        if (rng() % 4 == 0)
          co_await saturn::yield();
      }
      while (!done)
        co_await saturn::yield();
    }());
    EXPECT_EQ(got, oracle_got);
  }
}

using text_or_num = std::variant<int, std::string>;

process<text_or_num> typed(std::vector<std::string>* out, std::atomic<bool>* done) {
  auto self = co_await this_process;
  for (int i = 0; i < 4; ++i) {
    text_or_num m = co_await self.receive();
    if (auto* n = std::get_if<int>(&m))
      out->push_back(std::to_string(*n));
    else
      out->push_back(std::get<std::string>(m).substr(0, 3));
  }
  *done = true;
}

TEST(Mailbox, VariantMessages) {
  runtime rt;
  std::vector<std::string> out;
  std::atomic<bool> done{false};
  rt.block_on([&]() -> task<> {
    auto p = spawn_process(typed, &out, &done);
    send(p, 1);
    send(p, std::string("two"));
    send(p, 3);
    send(p, std::string(100, 'x'));  // a heap-allocated payload, freed by the receiver
    while (!done)
      co_await saturn::yield();
  }());
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], "1");
  EXPECT_EQ(out[1], "two");
  EXPECT_EQ(out[2], "3");
  EXPECT_EQ(out[3], "xxx");
}

process<int> timed(std::vector<int>* out, std::atomic<bool>* timed_out, std::atomic<bool>* sent_all,
                   std::atomic<bool>* done) {
  auto self = co_await this_process;
  auto a = co_await self.receive_for(std::chrono::milliseconds(5));  // nothing sent: times out
  out->push_back(a ? *a : -1);
  *timed_out = true;
  auto b = co_await self.receive_for(std::chrono::seconds(30));  // a message comes first
  out->push_back(b ? *b : -1);
  // On a pool the driver runs on another worker: 8 and 5 may still be on their way.
  while (!sent_all->load())
    (void)co_await sleep_for(std::chrono::milliseconds(1));
  auto c = co_await self.receive_for(std::chrono::seconds(0));  // already queued
  out->push_back(c ? *c : -1);
  auto d = co_await self.receive_for(std::chrono::milliseconds(1), [](int v) { return v > 100; });
  out->push_back(d ? *d : -1);
  auto e = co_await self.receive();  // the 5 skipped by d is still there
  out->push_back(e);
  *done = true;
}

TEST(Mailbox, ReceiveWithTimeout) {
  for (unsigned threads : {0u, 2u}) {
    std::vector<int> out;
    std::atomic<bool> timed_out{false};
    std::atomic<bool> sent_all{false};
    std::atomic<bool> done{false};
    auto driver = [&]() -> task<> {
      auto p = spawn_process(timed, &out, &timed_out, &sent_all, &done);
      while (!timed_out)  // however slow the machine, the first receive has nothing to find
        (void)co_await sleep_for(std::chrono::milliseconds(1));
      (void)co_await sleep_for(std::chrono::milliseconds(5));  // let b park before 7 arrives
      send(p, 7);
      send(p, 8);
      send(p, 5);
      sent_all = true;
      while (!done)
        (void)co_await sleep_for(std::chrono::milliseconds(1));
    };
    if (threads == 0) {
      runtime rt;
      rt.block_on(driver());
    } else {
      thread_pool pool({.threads = threads});
      pool.block_on(driver());
    }
    EXPECT_EQ(out, (std::vector<int>{-1, 7, 8, -1, 5})) << threads;
  }
}

TEST(Mailbox, SendToDeadPidIsNoOpAndPidsSurviveReuse) {
  runtime rt;
  rt.block_on([&]() -> task<> {
    auto quick = []() -> process<int> { co_return; };
    auto p = spawn_process(quick);
    EXPECT_TRUE(alive(p));
    while (alive(p))
      co_await saturn::yield();
    EXPECT_FALSE(send(p, 1));
    // The slot is reused by later processes; the stale pid must never reach them.
    std::atomic<int> received{0};
    auto sink = [&received]() -> process<int> {
      for (;;) {
        (void)co_await saturn::receive();
        ++received;
      }
    };
    std::vector<pid_of<int>> fresh;
    for (int i = 0; i < 64; ++i)
      fresh.push_back(spawn_process(sink));
    bool reused = false;
    for (auto& f : fresh)
      reused |= f.index == p.index;
    EXPECT_TRUE(reused) << "the per-thread free list should hand the slot out again";
    EXPECT_FALSE(send(p, 1));
    EXPECT_FALSE(alive(p));
    co_await saturn::yield();
    EXPECT_EQ(received.load(), 0);
    for (auto& f : fresh)
      kill(f);
    for (auto& f : fresh)
      while (alive(f))
        co_await saturn::yield();
  }());
  EXPECT_EQ(rt.live_tasks(), 0u);
}

TEST(Mailbox, ParkedProcessesAreDestroyedAtShutdown) {
  // A pool destroyed while processes wait in receive (with messages they skipped still
  // queued, and a timed receive armed) frees everything (ASan checks for leaks).
  std::vector<pid> ps;
  {
    thread_pool pool({.threads = 2});
    for (int i = 0; i < 100; ++i) {
      auto body = [](std::string s) -> process<std::string> {
        auto self = co_await this_process;
        (void)co_await self.receive([](const std::string& m) { return m == "never"; });
        (void)s;
      };
      auto p = spawn_process(pool, body, std::string(64, 'y'));
      send(p, std::string(64, 'z'));
      send(p, std::string(64, 'z'));
      ps.push_back(p);
    }
    auto timed_body = []() -> process<int> {
      auto self = co_await this_process;
      (void)co_await self.receive_for(std::chrono::hours(1));
    };
    ps.push_back(spawn_process(pool, timed_body));
    ASSERT_TRUE(eventually([&] { return alive(ps.back()); }));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (auto& p : ps)
    EXPECT_FALSE(alive(p));
}


task<int> receive_two(self_ref<int> self) {
  int a = co_await self.receive();
  int b = co_await self.receive([](int v) { return v > 100; });
  co_return a + b;
}

TEST(Mailbox, ReceiveInsideATaskTheBodyAwaits) {
  thread_pool pool({.threads = 2});
  std::atomic<int> result{0};
  auto body = [](std::atomic<int>* out) -> process<int> {
    auto self = co_await this_process;
    const int sum = co_await receive_two(self);
    const int rest = co_await self.receive();
    *out = sum * 1000 + rest;
  };
  auto p = spawn_process(pool, body, &result);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // parked inside the task
  send(p, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  send(p, 7);
  send(p, 200);
  ASSERT_TRUE(eventually([&] { return result.load() != 0; }));
  EXPECT_EQ(result.load(), 201 * 1000 + 7);
}

}  // namespace
