// os::signal_set and saturn::signal: real signals (kill(2) of this process) read through
// the process's signalfd on the ring. Each test blocks the signals it uses before it
// starts a runtime or pool (the contract of os/signal.hpp) and uses signals no other
// test of this binary handles (SIGUSR1, SIGUSR2, SIGHUP, SIGWINCH).
#include <gtest/gtest.h>
#include <saturn/os/signal.hpp>
#include <saturn/saturn.hpp>
#include "os/os_test_util.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using saturn::result;
using saturn::task;
namespace os = saturn::os;

using os_test::kill_later;

void block_test_signals() {
  auto b = os::block_signals({SIGUSR1, SIGUSR2, SIGHUP, SIGWINCH});
  ASSERT_TRUE(b) << b.err().message();
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(signal_set, refuses_what_signalfd_cannot_serve_with_a_message) {
  auto kill9 = os::block_signals({SIGKILL});
  ASSERT_FALSE(kill9);
  EXPECT_TRUE(contains(kill9.err().message(), "cannot be blocked")) << kill9.err().message();
  auto segv = os::block_signals({SIGUSR1, SIGSEGV});
  ASSERT_FALSE(segv);
  EXPECT_TRUE(contains(segv.err().message(), "synchronous fault")) << segv.err().message();
  auto zero = os::signal_set::make({0});
  ASSERT_FALSE(zero);
  EXPECT_TRUE(contains(zero.err().message(), "not a signal number")) << zero.err().message();
  auto big = os::signal_set::make({65});
  ASSERT_FALSE(big);
  // SIGURG is not blocked here: make() says so and says what to call.
  sigset_t urg;
  sigemptyset(&urg);
  sigaddset(&urg, SIGURG);
  pthread_sigmask(SIG_UNBLOCK, &urg, nullptr);
  auto unblocked = os::signal_set::make({SIGURG});
  ASSERT_FALSE(unblocked);
  EXPECT_TRUE(contains(unblocked.err().message(), "SIGURG")) << unblocked.err().message();
  EXPECT_TRUE(contains(unblocked.err().message(), "block_signals({SIGURG})")) << unblocked.err().message();
  saturn::runtime rt;
  auto via_free = rt.block_on(saturn::signal(SIGURG));
  ASSERT_FALSE(via_free);
  EXPECT_TRUE(contains(via_free.err().message(), "not blocked")) << via_free.err().message();
}

TEST(signal_set, signal_completes_with_the_signal_and_not_before) {
  block_test_signals();
  saturn::runtime rt;
  std::thread killer = kill_later(SIGUSR1, 50ms);
  const auto t0 = std::chrono::steady_clock::now();
  const std::uint64_t before = os::signal_set::delivered(SIGUSR1);
  auto got = rt.block_on(saturn::with_timeout(5s, saturn::signal(SIGUSR1)));
  killer.join();
  ASSERT_TRUE(got) << got.err().message();
  EXPECT_EQ(*got, SIGUSR1);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 40ms) << "the wait ended before the signal";
  EXPECT_EQ(os::signal_set::delivered(SIGUSR1), before + 1);
  EXPECT_EQ(rt.loop().in_flight(), 0u);
}

TEST(signal_set, a_signal_between_two_waits_is_not_lost_and_the_set_says_which) {
  block_test_signals();
  saturn::runtime rt;
  auto set = os::signal_set::make({SIGUSR2, SIGHUP});
  ASSERT_TRUE(set) << set.err().message();
  // Both arrive while nobody waits: they stay pending in the kernel, and the next waits
  // read and report them, lowest number first.
  ::kill(::getpid(), SIGHUP);
  ::kill(::getpid(), SIGUSR2);
  auto first = rt.block_on(saturn::with_timeout(5s, set->wait()));
  auto second = rt.block_on(saturn::with_timeout(5s, set->wait()));
  ASSERT_TRUE(first) << "first wait failed";
  ASSERT_TRUE(second) << "second wait failed";
  EXPECT_EQ(*first, SIGHUP);  // 1 < 12
  EXPECT_EQ(*second, SIGUSR2);
  // Nothing else is pending: a third wait times out, and the set still works afterwards.
  auto third = rt.block_on(saturn::with_timeout(30ms, set->wait()));
  ASSERT_FALSE(third);
  EXPECT_TRUE(third.err() == std::errc::timed_out) << third.err().message();
  std::thread killer = kill_later(SIGUSR2, 20ms);
  auto fourth = rt.block_on(saturn::with_timeout(5s, set->wait()));
  killer.join();
  ASSERT_TRUE(fourth);
  EXPECT_EQ(*fourth, SIGUSR2);
  EXPECT_EQ(rt.loop().in_flight(), 0u);
}

namespace {
task<int> wait_one(os::signal_set* set, std::atomic<int>& woke) {
  auto got = co_await set->wait();
  if (got && *got == SIGWINCH)
    woke.fetch_add(1);
  co_return got ? *got : -1;
}
}  // namespace

TEST(signal_set, one_signal_wakes_every_set_waiting_on_every_worker) {
  block_test_signals();
  saturn::pool_options po;
  po.threads = 3;
  po.mode = saturn::pool_mode::io;
  saturn::thread_pool pool(po);
  std::vector<os::signal_set> sets;
  for (int i = 0; i < 9; ++i) {
    auto s = os::signal_set::make({SIGWINCH});
    ASSERT_TRUE(s) << s.err().message();
    sets.push_back(std::move(*s));
  }
  std::atomic<int> woke{0};
  std::vector<saturn::join_handle<int>> hs;
  for (unsigned i = 0; i < sets.size(); ++i)
    hs.push_back(pool.spawn_on(i % pool.threads(), wait_one(&sets[i], woke)));
  std::this_thread::sleep_for(50ms);  // let them all wait: one reads, the others sleep
  EXPECT_EQ(woke.load(), 0);
  ::kill(::getpid(), SIGWINCH);
  for (auto& h : hs) {
    auto joined = pool.block_on([](saturn::join_handle<int> j) -> task<result<int>> {
      co_return co_await saturn::with_timeout(5s, std::move(j));
    }(std::move(h)));
    ASSERT_TRUE(joined) << "a waiter did not wake: " << joined.err().message();
    EXPECT_EQ(*joined, SIGWINCH);
  }
  EXPECT_EQ(woke.load(), 9);
}

TEST(signal_set, a_cancelled_reader_hands_the_reading_to_a_waiter_still_waiting) {
  block_test_signals();
  saturn::runtime rt;
  auto a = os::signal_set::make({SIGUSR1});
  auto b = os::signal_set::make({SIGHUP});
  ASSERT_TRUE(a && b);
  const bool ok = rt.block_on([](os::signal_set* sa, os::signal_set* sb) -> task<bool> {
    saturn::task_context& ctx = co_await saturn::this_task::context();
    // a's wait runs at once and becomes the reader; b's (spawned, so it starts a moment
    // later) sleeps on the hub's event. Cancelling a's wait must pass the reading on.
    auto hb = saturn::spawn_in(ctx.sched->root_context(), sb->wait());
    auto ra = co_await saturn::with_timeout(20ms, sa->wait());
    if (ra)
      co_return false;  // nothing was sent to a
    ::kill(::getpid(), SIGHUP);
    auto rb = co_await saturn::with_timeout(5s, std::move(hb));
    co_return rb && *rb == SIGHUP;
  }(&*a, &*b));
  EXPECT_TRUE(ok);
  EXPECT_EQ(rt.loop().in_flight(), 0u);
}
