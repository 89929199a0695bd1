// The simulated network's conditions (sim::world::partition / heal / reset) on loopback
// TCP between endpoints of one simulated program.
#include <saturn/net.hpp>
#include <saturn/sim/run.hpp>
#include <saturn/task.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>

using namespace std::chrono_literals;
using saturn::task;
namespace net = saturn::net;
namespace sim = saturn::sim;

namespace {

std::string as_string(std::span<const std::byte> b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

task<saturn::result<std::size_t>> send_task(net::tcp_stream* c, std::span<const std::byte> b) {
  co_return co_await c->send(b);
}
task<saturn::result<std::size_t>> recv_task(net::tcp_stream* c, std::span<std::byte> b) {
  co_return co_await c->recv(b);
}

task<void> partition_heal_reset(sim::world& w) {
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
  EXPECT_TRUE(l.has_value());
  const std::uint16_t port = l->local_address()->port();
  auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(port));
  EXPECT_TRUE(c.has_value());
  auto s = co_await l->accept();
  EXPECT_TRUE(s.has_value());
  const std::uint16_t client_port = c->local_address()->port();

  // Cut: the client's bytes do not arrive, the server's read times out (virtual time).
  w.partition(port);
  const std::string ping = "ping";
  auto sent = saturn::spawn(send_task(&*c, std::as_bytes(std::span(ping))));
  s->set_read_timeout(200ms);
  std::byte buf[64];
  const auto t0 = saturn::clock::now();
  auto r = co_await s->recv(buf);
  EXPECT_FALSE(r.has_value());
  if (!r) {
    EXPECT_EQ(r.err(), std::errc::timed_out) << r.err().message();
  }
  EXPECT_GE(saturn::clock::now() - t0, 200ms);

  // Healed: the queued send completes and the bytes arrive.
  w.heal(port);
  s->set_read_timeout(0ms);
  auto sr = co_await sent;
  EXPECT_TRUE(sr.has_value());
  auto r2 = co_await s->recv(buf);
  EXPECT_TRUE(r2.has_value());
  if (r2) {
    EXPECT_EQ(as_string(std::span(buf, *r2)), "ping");
  }

  // Reset, named by the client's port: both ends see ECONNRESET, including a read that
  // was already waiting on the idle connection.
  std::byte buf2[32];
  auto waiting = saturn::spawn(recv_task(&*c, buf2));
  co_await saturn::sleep_for(1ms);
  w.reset(client_port);
  auto r3 = co_await s->recv(buf);
  EXPECT_FALSE(r3.has_value());
  if (!r3) {
    EXPECT_EQ(r3.err(), std::errc::connection_reset) << r3.err().message();
  }
  auto r4 = co_await waiting;
  EXPECT_FALSE(r4.has_value());
  if (!r4) {
    EXPECT_EQ(r4.err(), std::errc::connection_reset) << r4.err().message();
  }
  // A connect to a reset port is refused.
  w.reset(port);
  auto c2 = co_await net::tcp_stream::connect(net::address::loopback_v4(port));
  EXPECT_FALSE(c2.has_value());
  w.heal(port);
  w.heal(client_port);
  co_await c->close();
  co_await s->close();
}

TEST(SimNet, PartitionHealAndReset) {
  sim::outcome o = sim::run(5, {}, partition_heal_reset);
  ASSERT_TRUE(o.ok) << o.failure;
}

task<void> waits_on_a_cut_connection(sim::world& w) {
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
  const std::uint16_t port = l->local_address()->port();
  auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(port));
  auto s = co_await l->accept();
  w.partition(port);
  const std::string hello = "hello";
  (void)co_await c->send(std::as_bytes(std::span(hello)));
  ADD_FAILURE() << "a send across a partition completed";
}

TEST(SimNet, WaitingOnlyOnAPartitionIsADeadlock) {
  sim::outcome o = sim::run(9, {}, waits_on_a_cut_connection);
  EXPECT_FALSE(o.ok);
  EXPECT_NE(o.failure.find("deadlock"), std::string::npos) << o.failure;
}

}  // namespace
