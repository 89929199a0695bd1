// os::graceful_stop: acceptors are stopped at once; work in flight finishes within the
// deadline or is cancelled at it; a throwing work task is counted, not fatal; work
// spawned after the stop starts cancelled; stop_on_signals starts the stop on a real
// signal; and a real TCP server built on it stops with its connections closed.
#include <gtest/gtest.h>
#include <saturn/os/graceful.hpp>
#include <saturn/os/signal.hpp>
#include <saturn/saturn.hpp>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using saturn::result;
using saturn::task;
namespace os = saturn::os;

task<void> forever(std::atomic<int>& ended) {
  (void)co_await saturn::sleep_for(60s);  // ends early only when cancelled
  ended.fetch_add(1);
}

task<void> short_job(std::atomic<int>& finished) {
  auto s = co_await saturn::sleep_for(30ms);
  if (s)
    finished.fetch_add(1);  // ran to its end, not cancelled
}

task<void> throws_later() {
  (void)co_await saturn::sleep_for(1ms);
  throw std::runtime_error("a connection failed");
}

}  // namespace

TEST(graceful_stop, acceptors_stop_at_once_work_gets_the_deadline_then_is_cancelled) {
  saturn::pool_options po;
  po.threads = 2;
  po.mode = saturn::pool_mode::io;
  saturn::thread_pool pool(po);
  std::atomic<int> acceptors_ended{0}, long_ended{0}, finished{0};
  os::graceful_stop gs(pool);
  gs.spawn_acceptor(forever(acceptors_ended));
  gs.spawn_acceptor_on(1, forever(acceptors_ended));
  EXPECT_THROW(gs.spawn_acceptor_on(7, forever(acceptors_ended)), std::out_of_range);
  for (int i = 0; i < 4; ++i)
    gs.spawn(short_job(finished));
  gs.spawn(forever(long_ended));
  gs.spawn(throws_later());
  std::this_thread::sleep_for(5ms);
  EXPECT_FALSE(gs.stopping());
  const os::stop_report rep = pool.block_on(gs.stop(300ms));
  EXPECT_TRUE(gs.stopping());
  EXPECT_EQ(acceptors_ended.load(), 2);
  EXPECT_EQ(finished.load(), 4) << "work that ends within the deadline must not be cancelled";
  EXPECT_EQ(long_ended.load(), 1);
  EXPECT_GE(rep.in_flight, 1u);
  EXPECT_EQ(rep.cancelled, 1u);
  EXPECT_EQ(rep.failed, 1u);
  EXPECT_GE(rep.took, 280ms);
  EXPECT_LT(rep.took, 5s);
  // Work spawned after the stop starts cancelled and ends at its first await.
  std::atomic<int> late{0};
  gs.spawn(short_job(late));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(late.load(), 0);
}

TEST(graceful_stop, a_stop_with_nothing_in_flight_ends_without_waiting_for_the_deadline) {
  saturn::runtime rt;
  os::graceful_stop gs(rt);
  std::atomic<int> ended{0};
  gs.spawn_acceptor(forever(ended));
  const os::stop_report rep = rt.block_on(gs.stop(10s));
  EXPECT_EQ(ended.load(), 1);
  EXPECT_EQ(rep.in_flight, 0u);
  EXPECT_LT(rep.took, 2s);
}

TEST(graceful_stop, stop_on_signals_starts_on_a_real_signal) {
  auto b = os::block_signals({SIGUSR2});
  ASSERT_TRUE(b) << b.err().message();
  saturn::pool_options po;
  po.threads = 2;
  po.mode = saturn::pool_mode::io;
  saturn::thread_pool pool(po);
  os::graceful_stop gs(pool);
  std::atomic<int> ended{0};
  gs.spawn_acceptor(forever(ended));
  std::thread killer([] {
    std::this_thread::sleep_for(50ms);
    ::kill(::getpid(), SIGUSR2);
  });
  auto rep = pool.block_on(gs.stop_on_signals({SIGUSR2}, 1s));
  killer.join();
  ASSERT_TRUE(rep) << rep.err().message();
  EXPECT_EQ(rep->signal, SIGUSR2);
  EXPECT_EQ(ended.load(), 1);
}

namespace {

task<void> echo_once(saturn::net::tcp_stream s, std::atomic<int>& closed) {
  for (;;) {
    auto rx = s.receive();
    auto r = co_await rx;
    if (!r || r->empty())
      break;
    auto tx = s.send(*r);
    auto w = co_await tx;
    if (!w)
      break;
  }
  closed.fetch_add(1);
}

task<void> accept_loop(os::graceful_stop& gs, saturn::net::tcp_listener l, std::atomic<int>& closed) {
  for (;;) {
    auto c = co_await l.accept();
    if (!c)
      co_return;  // cancelled by the stop
    gs.spawn(echo_once(std::move(*c), closed));
  }
}

}  // namespace

TEST(graceful_stop, a_tcp_server_stops_accepting_and_closes_idle_connections_at_the_deadline) {
  saturn::pool_options po;
  po.threads = 2;
  po.mode = saturn::pool_mode::io;
  saturn::thread_pool pool(po);
  auto l = saturn::net::tcp_listener::bind(saturn::net::address::loopback_v4(0));
  ASSERT_TRUE(l) << l.err().message();
  auto bound = l->local_address();
  ASSERT_TRUE(bound);
  const saturn::net::address addr = *bound;
  os::graceful_stop gs(pool);
  std::atomic<int> closed{0};
  gs.spawn_acceptor(accept_loop(gs, std::move(*l), closed));
  // Two idle clients connected through the ring's accept.
  auto clients = pool.block_on([](saturn::net::address a) -> task<std::vector<int>> {
    std::vector<int> fds;
    for (int i = 0; i < 2; ++i) {
      auto c = co_await saturn::net::tcp_stream::connect(a);
      if (c)
        fds.push_back(c->release());  // keep the socket open, idle, after this task
    }
    co_return fds;
  }(addr));
  ASSERT_EQ(clients.size(), 2u);
  std::this_thread::sleep_for(50ms);
  const os::stop_report rep = pool.block_on(gs.stop(100ms));
  EXPECT_EQ(rep.in_flight, 2u);
  EXPECT_EQ(rep.cancelled, 2u);  // idle connections do not end by themselves
  EXPECT_EQ(closed.load(), 2);
  char c = 0;
  for (int fd : clients) {
    EXPECT_EQ(::read(fd, &c, 1), 0) << "the server must have closed the connection";
    ::close(fd);
  }
}
