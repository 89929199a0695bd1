// Sockets under injected faults (saturn/testing/fault_injection.hpp), fixed seeds: sends
// and receives cut short, multishot receives ended by -ENOBUFS (re-armed by the stream),
// connections failing with ECONNRESET / EPIPE, and accepts failing with ECONNABORTED /
// EPROTO (skipped by the listener). Oracles: a position-dependent byte
// pattern echoed back exactly (nothing lost, duplicated or reordered), errors returned as
// values naming the operation, and the injector's counts showing the faults happened.
#include <gtest/gtest.h>
#include <saturn/saturn.hpp>
#include <saturn/testing/fault_injection.hpp>

#include "net/net_util.hpp"

#include <cerrno>

namespace {

using namespace net_test;
using saturn::testing::fault_plan;
using saturn::testing::fault_scope;
using saturn::testing::op_kind;

/// Sends `data` through one end of a socket pair while the other end echoes it through
/// receive() (provided buffers, multishot); reads the echo back with recv().
task<std::vector<std::byte>> echo_round_trip(std::vector<std::byte> data, echo_stats* st) {
  auto pair = net::unix_stream::pair();
  if (!pair)
    co_return std::vector<std::byte>{};
  auto& [client, server] = *pair;
  saturn::task_context& ctx = co_await saturn::this_task::context();
  auto echoer = saturn::spawn_in(ctx.sched->root_context(), echo_stream(std::move(server), st));
  auto reader = saturn::spawn_in(ctx.sched->root_context(), read_exactly(client, data.size()));
  auto tx = client.send(data);
  auto sent = co_await tx;
  std::vector<std::byte> got = co_await std::move(reader);
  auto sh = client.shutdown();
  (void)co_await sh;
  co_await std::move(echoer);
  if (!sent || *sent != data.size())
    co_return std::vector<std::byte>{};
  co_return got;
}

class net_faults : public ::testing::TestWithParam<std::uint32_t> {};
INSTANTIATE_TEST_SUITE_P(seeds, net_faults, ::testing::Values(2u, 17u, 99u));

TEST_P(net_faults, echo_is_exact_under_short_transfers_and_enobufs) {
  // ENOBUFS ends a multishot receive (which the stream re-arms), so its dice are rolled
  // once per arming: 12 connections arm at least 12 times, making "none injected" a
  // ~0.02 % event at p = 0.5.
  fault_plan plan{.seed = GetParam()};
  plan.rules = {{op_kind::send, 0, 0.4}, {op_kind::recv, 0, 0.4}, {op_kind::recv, ENOBUFS, 0.5}};
  fault_scope scope(plan);
  saturn::runtime rt;
  for (std::uint32_t conn = 0; conn < 12; ++conn) {
    echo_stats st;
    const std::vector<std::byte> data = pattern(40'000 + 1'000 * conn, GetParam() + conn);
    const std::vector<std::byte> got = rt.block_on(echo_round_trip(data, &st));
    ASSERT_EQ(got.size(), data.size()) << "connection " << conn << ": echo error " << st.last_error;
    EXPECT_TRUE(got == data) << "connection " << conn << ": bytes lost, duplicated or reordered";
    EXPECT_TRUE(st.eof);
    EXPECT_EQ(st.last_error, 0);
  }
  EXPECT_GT(scope.stats().shorts_of(op_kind::send) + scope.stats().shorts_of(op_kind::recv), 0u);
  EXPECT_GT(scope.stats().errors_of(op_kind::recv), 0u) << "no ENOBUFS was injected: nothing was checked";
}

TEST(net_faults_errors, reset_and_broken_pipe_come_back_named) {
  fault_plan plan{.seed = 4};
  plan.rules = {{op_kind::recv, ECONNRESET, 1.0}, {op_kind::send, EPIPE, 1.0}};
  fault_scope scope(plan);
  saturn::runtime rt;
  const std::string what = rt.block_on([]() -> task<std::string> {
    auto pair = net::unix_stream::pair();
    if (!pair)
      co_return "pair failed";
    auto& [a, b] = *pair;
    std::byte buf[16]{};
    auto r1 = co_await a.recv(buf);
    auto rx = b.receive();
    auto r2 = co_await rx;
    auto tx = a.send(std::span<const std::byte>(buf));
    auto w = co_await tx;
    co_return (r1 ? std::string("ok") : r1.err().message()) + " | " + (r2 ? std::string("ok") : r2.err().message()) +
        " | " + (w ? std::string("ok") : w.err().message());
  }());
  const std::string reset = std::make_error_code(std::errc::connection_reset).message();
  EXPECT_EQ(what, "recv: " + reset + " | recv: " + reset + " | send: " +
                      std::make_error_code(std::errc::broken_pipe).message());
  EXPECT_GE(scope.stats().errors_of(op_kind::recv), 2u);
  EXPECT_EQ(scope.stats().errors_of(op_kind::send), 1u);
}

}  // namespace

// accept(2) passes on errors of connections that died in the queue (ECONNABORTED, EPROTO
// ...): accept() skips them and returns the next connection instead of the error, which
// used to end accept loops such as saturn-echo's for good.
TEST(net_faults_accept, dead_connection_errors_are_skipped) {
  fault_plan plan;
  plan.seed = 5;
  plan.rules = {{op_kind::accept, ECONNABORTED, 0.3}, {op_kind::accept, EPROTO, 0.3}};
  fault_scope scope(plan);
  saturn::runtime rt;
  rt.block_on([]() -> task<> {
    auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
    CO_ASSERT_TRUE(l.has_value());
    const std::uint16_t port = l->local_address()->port();
    saturn::task_context& root = co_await saturn::this_task::context();
    auto clients = saturn::spawn_in(root, [](std::uint16_t p) -> task<> {
      for (int i = 0; i < 20; ++i) {
        auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(p));
        EXPECT_TRUE(c.has_value());
      }
    }(port));
    for (int i = 0; i < 20; ++i) {
      auto s = co_await l->accept();
      CO_ASSERT_TRUE(s.has_value());
    }
    co_await clients;
  }());
  const auto k = static_cast<std::size_t>(op_kind::accept);
  EXPECT_GT(scope.stats().errors[k].load(), 0u) << "nothing was injected: test too weak";
}
