// The simulated kernel (src/ring/sim) under whole programs: virtual time, determinism from
// the seed, deadlock detection, cancellation racing completion, loopback TCP passed through.
#include <saturn/net.hpp>
#include <saturn/sim/run.hpp>
#include <saturn/task.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <set>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using saturn::task;
namespace sim = saturn::sim;
namespace net = saturn::net;

namespace {

task<void> sleepy(sim::world&) {
  const auto t0 = saturn::clock::now();
  co_await saturn::sleep_for(1h);
  co_await saturn::sleep_for(30min);
  EXPECT_GE(saturn::clock::now() - t0, 90min);
}

TEST(SimWorld, VirtualTimeJumpsToTheNextDeadline) {
  const auto real0 = std::chrono::steady_clock::now();
  sim::outcome o = sim::run(1, {}, sleepy);
  ASSERT_TRUE(o.ok) << o.failure;
  EXPECT_GE(o.virtual_time, 90min);
  EXPECT_LT(o.virtual_time, 91min);
  EXPECT_LT(std::chrono::steady_clock::now() - real0, 5s) << "an hour and a half of timers must not take real time";
}

TEST(SimWorld, ClockIsRealAgainAfterTheWorld) {
  { sim::world w(3); EXPECT_LT(saturn::clock::now().time_since_epoch(), 2000s); }
  const auto a = saturn::clock::now().time_since_epoch();
  const auto b = std::chrono::steady_clock::now().time_since_epoch();
  EXPECT_LT(b - a, 1s);
  EXPECT_GE(b - a, 0s);
}

// Eight tasks doing seed-chosen mixes of NOPs, sleeps, kernel timeouts and timeouts racing
// them: the trace is a function of the seed.
task<void> busy_worker(sim::world& w, int id, int* done) {
  const int steps = 5 + static_cast<int>(w.random_below(20));
  for (int i = 0; i < steps; ++i) {
    switch (w.random_below(4)) {
      case 0: {
        auto r = co_await saturn::nop();
        EXPECT_TRUE(r.has_value());
        break;
      }
      case 1:
        co_await saturn::sleep_for(std::chrono::microseconds(w.random_below(500)));
        break;
      case 2: {
        auto r = co_await saturn::kernel_timeout(std::chrono::microseconds(1 + w.random_below(300)));
        EXPECT_TRUE(r.has_value()) << r.err().message();
        break;
      }
      default: {
        auto r = co_await saturn::with_timeout(std::chrono::microseconds(w.random_below(40)),
                                               saturn::sleep_for(std::chrono::microseconds(w.random_below(40))));
        (void)r;
      }
    }
  }
  ++*done;
  (void)id;
}

task<void> busy(sim::world& w) {
  int done = 0;
  std::vector<saturn::join_handle<void>> hs;
  for (int i = 0; i < 8; ++i)
    hs.push_back(saturn::spawn(busy_worker(w, i, &done)));
  for (auto& h : hs)
    co_await h;
  EXPECT_EQ(done, 8);
}

TEST(SimWorld, SameSeedSameTraceOtherSeedsDiffer) {
  std::set<std::uint64_t> hashes;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    sim::outcome a = sim::run(seed, {}, busy);
    sim::outcome b = sim::run(seed, {}, busy);
    ASSERT_TRUE(a.ok) << "seed " << seed << ": " << a.failure;
    ASSERT_TRUE(b.ok) << "seed " << seed << ": " << b.failure;
    EXPECT_EQ(a.trace_hash, b.trace_hash) << "seed " << seed;
    EXPECT_EQ(a.completions, b.completions) << "seed " << seed;
    EXPECT_EQ(a.virtual_time, b.virtual_time) << "seed " << seed;
    EXPECT_GT(a.completions, 10u);
    hashes.insert(a.trace_hash);
  }
  EXPECT_EQ(hashes.size(), 20u) << "different seeds should give different interleavings";
}

// A read from a pipe nobody writes: a real kernel would hang; the simulation says so.
task<void> waits_forever(sim::world&) {
  int p[2];
  EXPECT_EQ(::pipe2(p, O_CLOEXEC), 0);
  std::byte b[8];
  auto r = co_await saturn::read(p[0], b);
  ADD_FAILURE() << "the read completed: " << r.has_value();
  ::close(p[0]);
  ::close(p[1]);
}

TEST(SimWorld, DeadlockIsReportedNotHung) {
  sim::outcome o = sim::run(7, {}, waits_forever);
  EXPECT_FALSE(o.ok);
  EXPECT_NE(o.failure.find("deadlock"), std::string::npos) << o.failure;
  EXPECT_NE(o.failure.find("READ(fd"), std::string::npos) << o.failure;
  EXPECT_NE(o.failure.find("seed 7"), std::string::npos) << o.failure;
}

// A read waiting for a pipe races a deadline while a writer sends after a seed-chosen
// delay: across seeds both sides win, and every outcome is one a real kernel could give
// (the bytes, or a timeout with nothing consumed).
task<void> late_writer(int fd, std::chrono::nanoseconds after) {
  co_await saturn::sleep_for(after);
  EXPECT_EQ(::write(fd, "hello", 5), 5);
}

task<void> read_vs_deadline(sim::world& w, int* read_won, int* timed_out) {
  int p[2];
  EXPECT_EQ(::pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
  auto writer = saturn::spawn(late_writer(p[1], std::chrono::microseconds(w.random_below(30))));
  std::byte b[8];
  auto r = co_await saturn::with_timeout(std::chrono::microseconds(1 + w.random_below(30)), saturn::read(p[0], b));
  co_await writer;
  if (r.has_value()) {
    EXPECT_EQ(*r, 5u);
    ++*read_won;
  } else {
    ++*timed_out;
    char left[8];
    // Cancelled before it ran: the bytes are still in the pipe.
    EXPECT_EQ(::read(p[0], left, sizeof left), 5);
  }
  ::close(p[0]);
  ::close(p[1]);
}

TEST(SimWorld, CancellationRacesCompletionBothWays) {
  int read_won = 0, timed_out = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    sim::outcome o = sim::run(seed, {}, [&](sim::world& w) { return read_vs_deadline(w, &read_won, &timed_out); });
    ASSERT_TRUE(o.ok) << "seed " << seed << ": " << o.failure;
  }
  EXPECT_GT(read_won, 10);
  EXPECT_GT(timed_out, 10);
}

// Loopback TCP passes through to the kernel; with everything on one thread it stays a
// function of the seed.
task<void> echo_server(net::tcp_listener* l, int clients) {
  std::vector<saturn::join_handle<void>> hs;
  for (int i = 0; i < clients; ++i) {
    auto c = co_await l->accept();
    EXPECT_TRUE(c.has_value());
    if (!c)
      co_return;
    hs.push_back(saturn::spawn([](net::tcp_stream s) -> task<void> {
      for (;;) {
        auto chunk = co_await s.receive();
        if (!chunk || chunk->empty())
          break;
        auto w = co_await s.send(*chunk);
        if (!w)
          break;
      }
    }(std::move(*c))));
  }
  for (auto& h : hs)
    co_await h;
}

task<void> echo_client(std::uint16_t port, int id, int* ok) {
  auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(port));
  EXPECT_TRUE(c.has_value());
  if (!c)
    co_return;
  for (int round = 0; round < 3; ++round) {
    const std::string msg = "client " + std::to_string(id) + " round " + std::to_string(round) + std::string(100 * id, 'x');
    auto w = co_await c->send(std::as_bytes(std::span(msg)));
    EXPECT_TRUE(w.has_value());
    std::string back;
    while (back.size() < msg.size()) {
      std::byte buf[4096];
      auto n = co_await c->recv(buf);
      if (!n || *n == 0)
        break;
      back.append(reinterpret_cast<const char*>(buf), *n);
    }
    EXPECT_EQ(back, msg);
    if (back == msg)
      ++*ok;
  }
  co_await c->close();
}

task<void> echo(sim::world&) {
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
  EXPECT_TRUE(l.has_value());
  if (!l)
    co_return;
  const std::uint16_t port = l->local_address()->port();
  int ok = 0;
  auto server = saturn::spawn(echo_server(&*l, 4));
  std::vector<saturn::join_handle<void>> hs;
  for (int i = 0; i < 4; ++i)
    hs.push_back(saturn::spawn(echo_client(port, i, &ok)));
  for (auto& h : hs)
    co_await h;
  co_await server;
  EXPECT_EQ(ok, 12);
}

TEST(SimWorld, LoopbackEchoIsAFunctionOfTheSeed) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    sim::outcome a = sim::run(seed, {}, echo);
    sim::outcome b = sim::run(seed, {}, echo);
    ASSERT_TRUE(a.ok) << a.failure;
    ASSERT_TRUE(b.ok) << b.failure;
    EXPECT_EQ(a.trace_hash, b.trace_hash) << "seed " << seed;
  }
}

TEST(SimWorld, WorldsDoNotNest) {
  sim::world w(1);
  EXPECT_THROW(sim::world(2), std::logic_error);
}

}  // namespace
