// net::connect("host:port") against the test's dnsmasq and listeners on 127.0.0.x:
// host:port parsing, connecting by name and by numeric address, falling back past an
// address that refuses and past one that never answers (a full accept queue: the
// per-attempt timeout), the error naming every address tried, a resolve failure passed
// through. Only loopback addresses are used.
#include "net/dns_server.hpp"
#include "net_util.hpp"

#include <saturn/task/time.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <optional>

using namespace net_test;
using saturn::result;
using saturn::runtime;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

TEST(split_host_port, accepts_names_v4_and_bracketed_v6) {
  auto a = net::split_host_port("example.org:443");
  ASSERT_TRUE(a.has_value()) << a.err().message();
  EXPECT_EQ(a->host, "example.org");
  EXPECT_EQ(a->port, 443);
  auto b = net::split_host_port("10.0.0.1:80");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->host, "10.0.0.1");
  auto c = net::split_host_port("[::1]:8080");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->host, "::1");
  EXPECT_EQ(c->port, 8080);
  auto d = net::split_host_port("[fe80::1%lo]:65535");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->host, "fe80::1%lo");
  EXPECT_EQ(d->port, 65535);
}

TEST(split_host_port, rejects_what_it_cannot_split) {
  for (const char* bad : {"", "host", "host:", ":80", "host:0", "host:65536", "host:8x", "::1:80", "[::1]80", "[::1",
                          "[]:80", "host:-1", "host: 80"}) {
    auto r = net::split_host_port(bad);
    EXPECT_FALSE(r.has_value()) << "accepted \"" << bad << "\"";
    if (!r) {
      EXPECT_TRUE(r.err() == std::errc::invalid_argument);
      EXPECT_NE(r.err().message().find(std::string("\"") + bad + "\""), std::string::npos) << r.err().message();
    }
  }
}

class connect_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { s_dns = new dns_test::dnsmasq; }
  static void TearDownTestSuite() {
    delete s_dns;
    s_dns = nullptr;
  }
  void SetUp() override {
    if (dns_test::dnsmasq_path().empty())
      GTEST_SKIP() << "dnsmasq is not installed (apt-get install dnsmasq, or scripts/deps test): "
                      "the DNS tests need a real resolver on 127.0.0.1";
    ASSERT_TRUE(s_dns->running()) << "dnsmasq did not start; its log:\n" << s_dns->log();
  }
  static net::connect_options local(std::chrono::nanoseconds attempt = 2s) {
    net::connect_options o;
    o.attempt_timeout = attempt;
    o.resolve.servers = {s_dns->server()};
    o.resolve.timeout = 1000ms;
    o.resolve.family = net::ip_family::v4;
    return o;
  }
  static dns_test::dnsmasq* s_dns;
};
dns_test::dnsmasq* connect_test::s_dns = nullptr;

net::tcp_listener listen_on(const char* host, std::uint16_t port = 0) {
  auto a = net::address::parse(host, port);
  EXPECT_TRUE(a.has_value());
  auto l = net::tcp_listener::bind(*a);
  EXPECT_TRUE(l.has_value()) << host << ":" << port << ": " << (l ? "" : l.err().message());
  return std::move(*l);
}

/// Connects by name and accepts on `l`; the peer address the listener saw, or an error.
task<result<net::address>> connect_and_accept(std::string target, net::connect_options o, net::tcp_listener* l) {
  auto c = co_await net::connect(target, o);
  if (!c)
    co_return c.err();
  auto s = co_await l->accept();
  if (!s)
    co_return s.err();
  co_return c->peer_address();
}

TEST_F(connect_test, by_name) {
  runtime rt;
  auto l = listen_on("127.0.0.2");
  const auto port = l.local_address()->port();
  auto peer = rt.block_on(connect_and_accept("a.test:" + std::to_string(port), local(), &l));
  ASSERT_TRUE(peer.has_value()) << peer.err().message();
  EXPECT_EQ(peer->to_string(), "127.0.0.2:" + std::to_string(port));
}

TEST_F(connect_test, by_numeric_address_v4_and_v6) {
  runtime rt;
  auto l4 = listen_on("127.0.0.1");
  const auto p4 = l4.local_address()->port();
  auto a = rt.block_on(connect_and_accept("127.0.0.1:" + std::to_string(p4), local(), &l4));
  ASSERT_TRUE(a.has_value()) << a.err().message();
  auto six = net::tcp_listener::bind(net::address::loopback_v6(0));
  if (!six)
    GTEST_SKIP() << "no IPv6 loopback here: " << six.err().message();
  const auto p6 = six->local_address()->port();
  net::connect_options o = local();
  o.resolve.family = net::ip_family::any;
  auto b = rt.block_on(connect_and_accept("[::1]:" + std::to_string(p6), o, &*six));
  ASSERT_TRUE(b.has_value()) << b.err().message();
  EXPECT_EQ(b->to_string(), "[::1]:" + std::to_string(p6));
}

TEST_F(connect_test, falls_back_past_an_address_that_refuses) {
  runtime rt;
  // two.test is 127.0.0.3 (nothing listens there), then 127.0.0.1.
  auto order = rt.block_on(net::resolve("two.test", 1, local().resolve));
  ASSERT_TRUE(order.has_value()) << order.err().message();
  ASSERT_EQ(order->size(), 2u);
  ASSERT_EQ((*order)[0].host(), "127.0.0.3") << "the refusing address must come first for this test";
  auto l = listen_on("127.0.0.1");
  const auto port = l.local_address()->port();
  auto peer = rt.block_on(connect_and_accept("two.test:" + std::to_string(port), local(), &l));
  ASSERT_TRUE(peer.has_value()) << peer.err().message();
  EXPECT_EQ(peer->to_string(), "127.0.0.1:" + std::to_string(port));
}

TEST_F(connect_test, the_error_names_the_host_and_every_address_tried) {
  runtime rt;
  const std::uint16_t port = dns_test::free_port();  // nothing listens there on 127/8
  const std::string p = std::to_string(port);
  auto c = rt.block_on(net::connect("two.test:" + p, local()));
  ASSERT_FALSE(c.has_value());
  EXPECT_TRUE(c.err() == std::errc::connection_refused) << c.err().message();
  EXPECT_EQ(c.err().message(), "connect two.test:" + p + " tried 127.0.0.3:" + p +
                                   " (Connection refused), then 127.0.0.1:" + p + ": Connection refused");
  EXPECT_EQ(rt.loop().in_flight(), 0u);
}

TEST_F(connect_test, a_resolve_failure_is_passed_through) {
  runtime rt;
  auto c = rt.block_on(net::connect("nope.test:80", local()));
  ASSERT_FALSE(c.has_value());
  EXPECT_TRUE(net::is(c.err(), net::resolve_errc::not_found)) << c.err().message();
  EXPECT_EQ(c.err().message().rfind("resolve nope.test:", 0), 0u) << c.err().message();
  auto bad = rt.block_on(net::connect("nope.test", local()));
  ASSERT_FALSE(bad.has_value());
  EXPECT_TRUE(bad.err() == std::errc::invalid_argument);
}

/// A listening socket on `ip`:`port` with a full accept queue: backlog 0 and one
/// connection that is never accepted, so the kernel drops further SYNs and a connect
/// there stays in progress until it times out.
struct full_listener {
  int fd = -1;
  int filler = -1;
  bool ok = false;
  full_listener(const char* ip, std::uint16_t port) {
    ::sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    ::inet_pton(AF_INET, ip, &a.sin_addr);
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (::bind(fd, reinterpret_cast<::sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 0) != 0)
      return;
    filler = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    (void)::connect(filler, reinterpret_cast<::sockaddr*>(&a), sizeof a);
    ::pollfd p{filler, POLLOUT, 0};
    ok = ::poll(&p, 1, 2000) == 1;
  }
  /// True when one more connect stays in progress for `d` (the queue is really full).
  bool drops_syns(std::chrono::milliseconds d) const {
    ::sockaddr_in a{};
    ::socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<::sockaddr*>(&a), &len);
    int probe = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    (void)::connect(probe, reinterpret_cast<::sockaddr*>(&a), sizeof a);
    ::pollfd p{probe, POLLOUT, 0};
    const bool pending = ::poll(&p, 1, static_cast<int>(d.count())) == 0;
    ::close(probe);
    return pending;
  }
  ~full_listener() {
    if (filler >= 0)
      ::close(filler);
    ::close(fd);
  }
};

TEST_F(connect_test, an_attempt_that_hangs_is_cut_by_attempt_timeout) {
  runtime rt;
  // slow.test is 127.0.0.4 (a full accept queue), then 127.0.0.1 (a listener).
  auto order = rt.block_on(net::resolve("slow.test", 1, local().resolve));
  ASSERT_TRUE(order.has_value()) << order.err().message();
  ASSERT_EQ(order->size(), 2u);
  ASSERT_EQ((*order)[0].host(), "127.0.0.4");
  std::optional<net::tcp_listener> l;
  std::unique_ptr<full_listener> full;
  for (int attempt = 0; attempt < 20 && !(full && full->ok); ++attempt) {
    l.emplace(listen_on("127.0.0.1"));
    full = std::make_unique<full_listener>("127.0.0.4", l->local_address()->port());
  }
  ASSERT_TRUE(full && full->ok) << "no port free on both 127.0.0.1 and 127.0.0.4";
  if (!full->drops_syns(300ms))
    GTEST_SKIP() << "this kernel completes connects past a full accept queue; cannot make an attempt hang";
  const auto port = l->local_address()->port();
  const auto t0 = clock_type::now();
  auto peer = rt.block_on(connect_and_accept("slow.test:" + std::to_string(port), local(300ms), &*l));
  const auto took = clock_type::now() - t0;
  ASSERT_TRUE(peer.has_value()) << peer.err().message();
  EXPECT_EQ(peer->host(), "127.0.0.1");
  EXPECT_GE(took, 290ms);
  EXPECT_LT(took, 2000ms);

  // With the listener gone, both attempts fail: the first timed out, the second refused.
  const std::string p = std::to_string(port);
  l.reset();
  auto c = rt.block_on(net::connect("slow.test:" + p, local(200ms)));
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.err().message(), "connect slow.test:" + p + " tried 127.0.0.4:" + p +
                                   " (Connection timed out), then 127.0.0.1:" + p + ": Connection refused");
  EXPECT_EQ(rt.loop().in_flight(), 0u);
}

TEST_F(connect_test, with_timeout_stops_before_the_next_address) {
  runtime rt;
  std::optional<net::tcp_listener> l;
  std::unique_ptr<full_listener> full;
  for (int attempt = 0; attempt < 20 && !(full && full->ok); ++attempt) {
    l.emplace(listen_on("127.0.0.1"));
    full = std::make_unique<full_listener>("127.0.0.4", l->local_address()->port());
  }
  ASSERT_TRUE(full && full->ok);
  if (!full->drops_syns(300ms))
    GTEST_SKIP() << "this kernel completes connects past a full accept queue; cannot make an attempt hang";
  const auto port = l->local_address()->port();
  const auto t0 = clock_type::now();
  auto c = rt.block_on(saturn::with_timeout(150ms, net::connect("slow.test:" + std::to_string(port), local(5s))));
  ASSERT_FALSE(c.has_value()) << "connected past the deadline";
  EXPECT_TRUE(c.err() == std::errc::timed_out) << c.err().message();
  EXPECT_LT(clock_type::now() - t0, 1000ms);
  EXPECT_EQ(rt.loop().in_flight(), 0u);
  // 127.0.0.1, the next address, was never tried.
  auto late = rt.block_on(saturn::with_timeout(100ms, l->accept()));
  EXPECT_FALSE(late.has_value()) << "the stopped connect went on to the next address";
}

}  // namespace
