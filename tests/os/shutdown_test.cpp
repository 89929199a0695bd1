// os::shutdown_signals: a real SIGTERM / SIGINT (kill(2) of this process) wakes wait(),
// on a runtime and on every worker of a pool; the event is a latch (a wait started
// after the signal completes at once, also on a second object); a stopped wait ends
// with operation_canceled and leaves the handlers in place; the last object restores
// the disposition that was there before and forgets the signal.
#include <gtest/gtest.h>
#include <saturn/os/shutdown.hpp>
#include <saturn/saturn.hpp>
#include "os/os_test_util.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using saturn::result;
using saturn::task;
namespace os = saturn::os;

/// Sends `sig` to this process after `delay`, from a plain thread (joined by the caller).
using os_test::kill_later;

extern "C" void test_marker_handler(int) {}

TEST(shutdown_signals, wait_ends_with_the_signal_that_came) {
  auto sigs = os::shutdown_signals::install();
  ASSERT_TRUE(sigs) << sigs.err().message();
  EXPECT_EQ(sigs->received(), 0);
  saturn::runtime rt;
  std::thread killer = kill_later(SIGTERM, 50ms);
  const auto t0 = std::chrono::steady_clock::now();
  result<int> got = rt.block_on(sigs->wait());
  killer.join();
  ASSERT_TRUE(got) << got.err().message();
  EXPECT_EQ(*got, SIGTERM);
  EXPECT_EQ(sigs->received(), SIGTERM);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 40ms) << "wait() ended before the signal";
}

TEST(shutdown_signals, a_signal_is_a_latch_for_every_later_wait) {
  auto a = os::shutdown_signals::install();
  ASSERT_TRUE(a);
  saturn::runtime rt;
  std::thread killer = kill_later(SIGINT, 20ms);
  ASSERT_EQ(rt.block_on(a->wait()).value(), SIGINT);
  killer.join();
  // Later waits, on this object and on one installed after the signal, end at once.
  auto b = os::shutdown_signals::install();
  ASSERT_TRUE(b);
  EXPECT_EQ(b->received(), SIGINT);
  auto again = rt.block_on(saturn::with_timeout(1s, a->wait()));
  auto other = rt.block_on(saturn::with_timeout(1s, b->wait()));
  ASSERT_TRUE(again) << again.err().message();
  ASSERT_TRUE(other) << other.err().message();
  EXPECT_EQ(*again, SIGINT);
  EXPECT_EQ(*other, SIGINT);
  // A second signal does not change the first one's number.
  ::kill(::getpid(), SIGTERM);
  EXPECT_EQ(a->received(), SIGINT);
}

task<int> wait_count(const os::shutdown_signals& s, std::atomic<int>& woke) {
  auto got = co_await s.wait();
  if (got && *got == SIGTERM)
    woke.fetch_add(1);
  co_return 0;
}

TEST(shutdown_signals, every_pending_waiter_on_every_worker_wakes) {
  auto sigs = os::shutdown_signals::install();
  ASSERT_TRUE(sigs);
  saturn::pool_options po;
  po.threads = 3;
  saturn::thread_pool pool(po);
  std::atomic<int> woke{0};
  std::vector<saturn::join_handle<int>> hs;
  for (unsigned i = 0; i < 9; ++i)
    hs.push_back(pool.spawn_on(i % pool.threads(), wait_count(*sigs, woke)));
  std::this_thread::sleep_for(50ms);  // let them all reach their read
  EXPECT_EQ(woke.load(), 0);
  ::kill(::getpid(), SIGTERM);
  for (auto& h : hs) {
    auto joined = pool.block_on([](saturn::join_handle<int> j) -> task<result<int>> {
      co_return co_await saturn::with_timeout(5s, std::move(j));
    }(std::move(h)));
    ASSERT_TRUE(joined) << "a waiter did not wake: " << joined.err().message();
  }
  EXPECT_EQ(woke.load(), 9);
}

TEST(shutdown_signals, a_stopped_wait_is_cancelled_and_the_handlers_stay) {
  auto sigs = os::shutdown_signals::install();
  ASSERT_TRUE(sigs);
  saturn::runtime rt;
  auto timed = rt.block_on(saturn::with_timeout(30ms, sigs->wait()));
  ASSERT_FALSE(timed);
  EXPECT_TRUE(timed.err() == std::errc::timed_out) << timed.err().message();
  EXPECT_EQ(sigs->received(), 0);
  // The object still works after a cancelled wait.
  std::thread killer = kill_later(SIGTERM, 20ms);
  auto got = rt.block_on(saturn::with_timeout(5s, sigs->wait()));
  killer.join();
  ASSERT_TRUE(got) << got.err().message();
  EXPECT_EQ(*got, SIGTERM);
}

TEST(shutdown_signals, the_last_object_restores_the_old_disposition) {
  struct sigaction mine{}, before{}, during{}, after{};
  mine.sa_handler = &test_marker_handler;
  sigemptyset(&mine.sa_mask);
  ASSERT_EQ(::sigaction(SIGINT, &mine, &before), 0);
  {
    auto a = os::shutdown_signals::install();
    ASSERT_TRUE(a);
    {
      auto b = os::shutdown_signals::install();
      ASSERT_TRUE(b);
      os::shutdown_signals moved = std::move(*b);  // a moved-from object releases nothing
    }
    ::sigaction(SIGINT, nullptr, &during);
    EXPECT_NE(during.sa_handler, &test_marker_handler) << "an object still lives: saturn's handler must be in place";
    ::kill(::getpid(), SIGINT);  // caught by saturn's handler, not the marker's
    std::this_thread::sleep_for(10ms);
    EXPECT_EQ(a->received(), SIGINT);
  }
  ::sigaction(SIGINT, nullptr, &after);
  EXPECT_EQ(after.sa_handler, &test_marker_handler);
  // A fresh install has forgotten the signal.
  auto c = os::shutdown_signals::install();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->received(), 0);
  ::sigaction(SIGINT, &before, nullptr);
}

}  // namespace
