// The simulated kernel (src/ring/sim) under whole programs: virtual time, determinism from
// the seed, deadlock detection, cancellation racing completion, loopback TCP passed through.
#include <saturn/sim/run.hpp>
#include <saturn/task.hpp>

#include "sim/scenarios.hpp"

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

TEST(SimWorld, SameSeedSameTraceOtherSeedsDiffer) {
  std::set<std::uint64_t> hashes;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    sim::outcome a = sim::run(seed, {}, saturn::sim_scenarios::timers_scenario);
    sim::outcome b = sim::run(seed, {}, saturn::sim_scenarios::timers_scenario);
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

// The same program on a simulated thread_pool: the world-level wait reports it too.
TEST(SimWorld, DeadlockOnAPoolIsReportedNotHung) {
  sim::outcome o = sim::run(7, {}, waits_forever, sim::default_pool_options(2));
  EXPECT_FALSE(o.ok);
  EXPECT_NE(o.failure.find("deadlock"), std::string::npos) << o.failure;
}

// runtime::block_on when its loop throws (here the simulation's deadlock; on a real
// kernel a failed io_uring_enter): the program stays suspended with its read in flight,
// so its frames must live until ~runtime has cancelled and reaped that read. They were
// freed while block_on unwound, and the cancelled read's completion then wrote into them
// (AddressSanitizer: heap-use-after-free).
task<void> reads_a_pipe_nobody_writes(int fd) {
  std::byte b[8];
  auto r = co_await saturn::read(fd, b);
  ADD_FAILURE() << "the read completed: " << r.has_value();
}

TEST(SimWorld, BlockOnUnwindsWithoutFreeingAProgramStillInTheKernel) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  {
    sim::world w(7);
    saturn::runtime rt;
    EXPECT_THROW(rt.block_on(reads_a_pipe_nobody_writes(p[0])), sim::deadlock_error);
    EXPECT_EQ(rt.live_tasks(), 0u);
  }  // ~runtime cancels the read, then destroys the program
  ::close(p[0]);
  ::close(p[1]);
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
TEST(SimWorld, LoopbackEchoIsAFunctionOfTheSeed) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    sim::outcome a = sim::run(seed, {}, saturn::sim_scenarios::echo_scenario);
    sim::outcome b = sim::run(seed, {}, saturn::sim_scenarios::echo_scenario);
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
