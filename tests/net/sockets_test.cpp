// UDP datagrams, Unix stream sockets, and TCP echo across the work-stealing pool (a
// receive continues on the loop that first served it, whichever worker runs the task).
#include "net_util.hpp"

#include <saturn/sched/thread_pool.hpp>
#include <saturn/sync/wait_group.hpp>
#include <saturn/task/join_handle.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <string>

using namespace net_test;
using saturn::runtime;

TEST(Udp, SendToAndRecvFrom) {
  runtime rt;
  rt.block_on([]() -> task<> {
    auto a = net::udp_socket::bind(net::address::loopback_v4(0));
    auto b = net::udp_socket::bind(net::address::loopback_v4(0));
    CO_ASSERT_OK(a);
    CO_ASSERT_OK(b);
    const auto a_addr = *a->local_address();
    const auto b_addr = *b->local_address();
    for (std::uint32_t i = 0; i < 20; ++i) {
      auto msg = pattern(1 + i * 37, i);
      auto tx = a->send_to(msg, b_addr);
      auto w = co_await tx;
      CO_ASSERT_OK(w);
      EXPECT_EQ(*w, msg.size());
      std::vector<std::byte> buf(2048);
      auto rx = b->recv_from(buf);
      auto d = co_await rx;
      CO_ASSERT_OK(d);
      EXPECT_EQ(d->size, msg.size());
      EXPECT_FALSE(d->truncated);
      EXPECT_EQ(d->from, a_addr);
      buf.resize(d->size);
      EXPECT_TRUE(buf == msg);
    }
    // A datagram longer than the buffer is truncated, and says so.
    auto big = pattern(1000, 3);
    auto tx = a->send_to(big, b_addr);
    CO_ASSERT_OK(co_await tx);
    std::vector<std::byte> small(10);
    auto rx = b->recv_from(small);
    auto d = co_await rx;
    CO_ASSERT_OK(d);
    EXPECT_TRUE(d->truncated);
  }());
}

TEST(Unix, ListenerConnectEcho) {
  runtime rt;
  const std::string path = "/tmp/saturn_net_test_" + std::to_string(::getpid()) + ".sock";
  ::unlink(path.c_str());
  rt.block_on([](const std::string* p) -> task<> {
    auto l = net::unix_listener::bind(*p);
    CO_ASSERT_OK(l);
    saturn::task_context& root = co_await saturn::this_task::context();
    echo_stats st;
    auto server = saturn::spawn_in(root, [](net::unix_listener* ul, echo_stats* s) -> task<> {
      auto c = co_await ul->accept();
      CO_ASSERT_OK(c);
      co_await echo_stream(std::move(*c), s);
    }(&*l, &st));
    auto c = co_await net::unix_stream::connect(*p);
    CO_ASSERT_OK(c);
    auto msg = pattern(300000, 4);
    auto writer = saturn::spawn_in(root, [](net::unix_stream* cs, const std::vector<std::byte>* m) -> task<> {
      auto tx = cs->send(*m);
      EXPECT_TRUE((co_await tx).has_value());
      auto sh = cs->shutdown(SHUT_WR);
      EXPECT_TRUE((co_await sh).has_value());
    }(&*c, &msg));
    auto back = co_await read_exactly(*c, msg.size() + 1);
    EXPECT_TRUE(back == msg);
    co_await writer;
    co_await server;
    EXPECT_TRUE(st.eof);
    // Nobody listens any more: connect fails with an error naming connect.
    l->close();
    ::unlink(p->c_str());
    auto refused = co_await net::unix_stream::connect(*p);
    CO_ASSERT_TRUE(!refused.has_value());
    EXPECT_STREQ(refused.err().operation, "connect");
  }(&path));
  ::unlink(path.c_str());
}

TEST(Unix, PairWritevAndReceive) {
  runtime rt;
  rt.block_on([]() -> task<> {
    auto p = net::unix_stream::pair();
    CO_ASSERT_OK(p);
    auto& [x, y] = *p;
    auto m1 = pattern(100, 1);
    auto m2 = pattern(5000, 2);
    ::iovec iov[2] = {{m1.data(), m1.size()}, {m2.data(), m2.size()}};
    auto w = co_await x.write_all(iov);
    CO_ASSERT_OK(w);
    EXPECT_EQ(*w, m1.size() + m2.size());
    std::vector<std::byte> got;
    while (got.size() < m1.size() + m2.size()) {
      auto rx = y.receive();
      auto r = co_await rx;
      CO_ASSERT_OK(r);
      CO_ASSERT_TRUE(!r->empty());
      got.insert(got.end(), r->begin(), r->end());
    }
    std::vector<std::byte> want = m1;
    want.insert(want.end(), m2.begin(), m2.end());
    EXPECT_TRUE(got == want);
    auto closed = co_await x.close();
    EXPECT_TRUE(closed.has_value());
    auto rx = y.receive();
    auto eof = co_await rx;
    CO_ASSERT_OK(eof);
    EXPECT_TRUE(eof->empty());
  }());
}

namespace {
task<void> pool_server(net::tcp_listener* l, int n, saturn::thread_pool* pool) {
  for (int i = 0; i < n; ++i) {
    auto c = co_await l->accept();
    CO_ASSERT_OK(c);
    (void)pool->spawn(echo_stream(std::move(*c), nullptr));
  }
}

task<void> pool_client(std::uint16_t port, std::uint32_t seed, std::atomic<int>* ok) {
  auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(port));
  CO_ASSERT_OK(c);
  for (int i = 0; i < 30; ++i) {
    auto msg = pattern(64 + (seed % 7) * 500, seed * 100 + static_cast<std::uint32_t>(i));
    auto tx = c->send(msg);
    CO_ASSERT_OK(co_await tx);
    auto back = co_await read_exactly(*c, msg.size());
    CO_ASSERT_TRUE(back == msg);
    co_await saturn::yield();  // invite stealing between messages
  }
  ok->fetch_add(1);
}

task<void> pool_main(saturn::thread_pool* pool, std::atomic<int>* ok) {
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
  CO_ASSERT_OK(l);
  const std::uint16_t port = l->local_address()->port();
  constexpr int n = 64;
  auto server = pool->spawn(pool_server(&*l, n, pool));
  std::vector<saturn::join_handle<void>> clients;
  for (int i = 0; i < n; ++i)
    clients.push_back(pool->spawn(pool_client(port, static_cast<std::uint32_t>(i), ok)));
  for (auto& h : clients)
    co_await h;
  co_await server;
}
}  // namespace

TEST(Pool, EchoAcrossWorkers) {
  std::atomic<int> ok{0};
  {
    saturn::thread_pool pool({.threads = 3});
    pool.block_on(pool_main(&pool, &ok));
  }
  EXPECT_EQ(ok.load(), 64);
}
