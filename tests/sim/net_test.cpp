// The simulated network: connections between endpoints of one simulated program stay in
// the world (src/ring/sim/net.cpp), and its conditions (sim::world::partition / heal /
// reset) apply to them.
#include <saturn/net.hpp>
#include <saturn/sim/run.hpp>
#include <saturn/task.hpp>

#include <gtest/gtest.h>

#include <sys/socket.h>

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

int domain_of(int fd) {
  int d = -1;
  ::socklen_t len = sizeof d;
  ::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &d, &len);
  return d;
}

task<void> in_world_connection(sim::world&) {
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
  EXPECT_TRUE(l.has_value());
  const std::uint16_t port = l->local_address()->port();
  // Bytes sent before the accept wait in the connection, as in TCP's.
  auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(port));
  EXPECT_TRUE(c.has_value());
  const std::string early = "before the accept";
  EXPECT_EQ(*co_await c->send(std::as_bytes(std::span(early))), early.size());
  auto s = co_await l->accept();
  EXPECT_TRUE(s.has_value());
  // Carried by a unix stream pair, answering for TCP: the addresses mirror each other.
  EXPECT_EQ(domain_of(c->fd()), AF_UNIX);
  EXPECT_EQ(domain_of(s->fd()), AF_UNIX);
  EXPECT_EQ(s->local_address()->port(), port);
  EXPECT_EQ(c->peer_address()->port(), port);
  EXPECT_EQ(s->peer_address()->port(), c->local_address()->port());
  EXPECT_NE(c->local_address()->port(), 0);
  EXPECT_EQ(c->local_address()->to_string().substr(0, 10), "127.0.0.1:");
  EXPECT_TRUE(c->set_nodelay(true).has_value());  // no TCP options, and no error for asking
  std::byte buf[64];
  auto r = co_await s->recv(buf);
  EXPECT_TRUE(r.has_value());
  if (r) {
    EXPECT_EQ(as_string(std::span(buf, *r)), early);
  }
  // A half-close: the server reads the end, and can still answer.
  auto sh = c->shutdown(SHUT_WR);
  EXPECT_TRUE((co_await sh).has_value());
  auto end = co_await s->recv(buf);
  EXPECT_TRUE(end.has_value() && *end == 0);
  const std::string late = "after the FIN";
  EXPECT_EQ(*co_await s->send(std::as_bytes(std::span(late))), late.size());
  auto r2 = co_await c->recv(buf);
  EXPECT_TRUE(r2.has_value());
  if (r2) {
    EXPECT_EQ(as_string(std::span(buf, *r2)), late);
  }
  co_await c->close();
  co_await s->close();
  // A port nothing of the program's listens on is refused, as by TCP.
  l->close();
  auto refused = co_await net::tcp_stream::connect(net::address::loopback_v4(port));
  EXPECT_FALSE(refused.has_value());
  if (!refused) {
    EXPECT_EQ(refused.err(), std::errc::connection_refused) << refused.err().message();
  }
}

TEST(SimNet, ConnectionsBetweenTheProgramsEndpointsStayInTheWorld) {
  sim::outcome o = sim::run(3, {}, in_world_connection);
  ASSERT_TRUE(o.ok) << o.failure;
}

task<void> resets(sim::world&) {
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
  const std::uint16_t port = l->local_address()->port();
  // A close with SO_LINGER 0 is an RST: the peer's waiting read fails with ECONNRESET.
  auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(port));
  auto s = co_await l->accept();
  std::byte buf[32];
  auto waiting = saturn::spawn(recv_task(&*s, buf));
  co_await saturn::sleep_for(1ms);
  ::linger lg{1, 0};
  ::setsockopt(c->fd(), SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  co_await c->close();
  auto r = co_await waiting;
  EXPECT_FALSE(r.has_value());
  if (!r) {
    EXPECT_EQ(r.err(), std::errc::connection_reset) << r.err().message();
  }
  co_await s->close();
  // A listener closed with a connection still queued resets it. (One that has accepted
  // may hold a connection its armed accept took: closing that one is an orderly close.)
  auto l2 = net::tcp_listener::bind(net::address::loopback_v4(0));
  auto queued = co_await net::tcp_stream::connect(net::address::loopback_v4(l2->local_address()->port()));
  EXPECT_TRUE(queued.has_value());
  l2->close();
  std::byte buf2[32];
  auto r2 = co_await queued->recv(buf2);
  EXPECT_FALSE(r2.has_value());
  if (!r2) {
    EXPECT_EQ(r2.err(), std::errc::connection_reset) << r2.err().message();
  }
  co_await queued->close();
}

TEST(SimNet, AnRstAndAClosedListenersQueueResetInWorldConnections) {
  sim::outcome o = sim::run(4, {}, resets);
  ASSERT_TRUE(o.ok) << o.failure;
}

}  // namespace
