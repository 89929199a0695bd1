// pg over TLS against the test cluster (ssl = on, a throwaway CA; tests/pg/cluster.hpp):
// every sslmode, a role that pg_hba admits only over TLS, verification failures that say
// what failed, a server without TLS, and the protocol's harder paths over TLS (a large
// result streamed, a query cancelled on the server by deadline).
#include "pg/pg_util.hpp"

#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

namespace {

using pg_test::rt;

pg::config tls_config(pg::ssl_mode mode, const std::string& rootcert = "") {
  pg::config c = pg_test::cluster::get().tcp("tls_user", "tls-secret");
  c.sslmode = mode;
  c.sslrootcert = rootcert;
  return c;
}

/// Whether the server sees this connection as TLS (pg_stat_ssl), and its version.
task<std::string> server_side_tls(pg::connection& c) {
  auto r = co_await c.query("SELECT ssl, coalesce(version, '') FROM pg_stat_ssl WHERE pid = pg_backend_pid()");
  if (!r || r->size() != 1)
    co_return std::string("query failed");
  co_return std::string((*r)[0].get<bool>(0).value() ? "tls " : "plain ") + (*r)[0].get<std::string>(1).value();
}

TEST(pg_tls, every_mode_that_asks_for_tls_gets_it) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    const std::string ca = pg_test::cluster::get().ca_file();
    for (const pg::config& cfg : {tls_config(pg::ssl_mode::prefer), tls_config(pg::ssl_mode::require),
                                  tls_config(pg::ssl_mode::verify_ca, ca), tls_config(pg::ssl_mode::verify_full, ca)}) {
      auto c = co_await pg::connection::connect(cfg);
      EXPECT_TRUE(c) << int(cfg.sslmode) << ": " << c.err().what();
      if (!c)
        continue;
      const std::string seen = co_await server_side_tls(*c);
      EXPECT_TRUE(seen == "tls TLSv1.3") << int(cfg.sslmode) << ": " << seen;
      auto r = co_await c->query("SELECT $1::int * 2", 21);
      EXPECT_TRUE(r) << r.err().what();
      if (r) {
        EXPECT_EQ((*r)[0].get<int>(0).value(), 42);
      }
      co_await c->close();
    }
    // The same by URL.
    const std::string url = "postgres://tls_user:tls-secret@127.0.0.1:" + std::to_string(pg_test::cluster::get().port()) +
                            "/postgres?sslmode=verify-full&sslrootcert=" + ca;
    auto u = co_await pg::connection::connect(url);
    EXPECT_TRUE(u) << u.err().what();
    if (u) {
      EXPECT_EQ(co_await server_side_tls(*u), "tls TLSv1.3");
    }
  }());
}

TEST(pg_tls, disable_and_allow_stay_plain_and_pg_hba_can_demand_tls) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    // app may connect without TLS: disable and allow do.
    for (pg::ssl_mode m : {pg::ssl_mode::disable, pg::ssl_mode::allow}) {
      pg::config cfg = pg_test::cluster::get().tcp("app");
      cfg.sslmode = m;
      auto c = co_await pg::connection::connect(cfg);
      EXPECT_TRUE(c) << c.err().what();
      if (c) {
        EXPECT_EQ(co_await server_side_tls(*c), "plain ");
      }
    }
    // tls_user is rejected without TLS, by the server, with its message.
    auto no = co_await pg::connection::connect(tls_config(pg::ssl_mode::disable));
    EXPECT_FALSE(no);
    if (!no) {
      EXPECT_NE(no.err().what().find("no encryption"), std::string::npos) << no.err().what();
    }
  }());
}

TEST(pg_tls, verification_failures_say_what_failed) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    // The system store does not know the test CA.
    auto unknown = co_await pg::connection::connect(tls_config(pg::ssl_mode::verify_full));
    EXPECT_FALSE(unknown);
    if (!unknown) {
      EXPECT_EQ(unknown.err().kind, pg::errc::connection);
      EXPECT_NE(unknown.err().what().find("TLS handshake with 127.0.0.1 failed"), std::string::npos)
          << unknown.err().what();
      EXPECT_NE(unknown.err().what().find("certificate"), std::string::npos) << unknown.err().what();
    }
    // The test CA as the root: the chain and the IP name (127.0.0.1) check out.
    const std::string ca = pg_test::cluster::get().ca_file();
    auto ok = co_await pg::connection::connect(tls_config(pg::ssl_mode::verify_full, ca));
    EXPECT_TRUE(ok) << ok.err().what();
    // A CA file that does not exist is named.
    auto missing = co_await pg::connection::connect(tls_config(pg::ssl_mode::verify_ca, "/nonexistent/ca.pem"));
    EXPECT_FALSE(missing);
    if (!missing) {
      EXPECT_EQ(missing.err().kind, pg::errc::config);
      EXPECT_NE(missing.err().what().find("/nonexistent/ca.pem"), std::string::npos) << missing.err().what();
    }
  }());
}

TEST(pg_tls, a_server_without_tls_fails_require_and_serves_prefer_plain) {
  PG_REQUIRE_CLUSTER();
  // A listener that answers SSLRequest with 'N' and then closes: enough for both checks
  // (prefer goes on to the startup message, which finds the connection closed).
  const int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(lfd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(lfd, 4), 0);
  socklen_t alen = sizeof a;
  ASSERT_EQ(::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &alen), 0);
  const std::uint16_t port = ntohs(a.sin_port);
  std::thread server([fd = lfd] {
    for (int i = 0; i < 2; ++i) {
      const int c = ::accept(fd, nullptr, nullptr);
      if (c < 0)
        return;
      char req[8];
      std::size_t got = 0;
      while (got < sizeof req) {
        const ssize_t n = ::recv(c, req + got, sizeof req - got, 0);
        if (n <= 0)
          break;
        got += static_cast<std::size_t>(n);
      }
      (void)::send(c, "N", 1, MSG_NOSIGNAL);
      ::close(c);
    }
  });
  rt().block_on([](std::uint16_t p) -> task<> {
    pg::config cfg;
    cfg.host = "127.0.0.1";
    cfg.port = p;
    cfg.user = "u";
    cfg.sslmode = pg::ssl_mode::require;
    auto r = co_await pg::connection::connect(cfg);
    EXPECT_FALSE(r);
    if (!r) {
      EXPECT_NE(r.err().what().find("does not accept TLS"), std::string::npos) << r.err().what();
    }
    cfg.sslmode = pg::ssl_mode::prefer;
    auto q = co_await pg::connection::connect(cfg);
    EXPECT_FALSE(q);  // went on in plain, then found the connection closed
    if (!q) {
      EXPECT_EQ(q.err().what().find("TLS"), std::string::npos) << q.err().what();
    }
  }(port));
  server.join();
  ::close(lfd);
}

TEST(pg_tls, large_results_and_cancellation_over_tls) {
  PG_REQUIRE_CLUSTER();
  rt().block_on([]() -> task<> {
    auto c = co_await pg::connection::connect(tls_config(pg::ssl_mode::require));
    EXPECT_TRUE(c) << c.err().what();
    if (!c)
      co_return;
    auto all = co_await c->query("SELECT id, name FROM items ORDER BY id");
    EXPECT_TRUE(all) << all.err().what();
    if (all) {
      EXPECT_EQ(all->size(), 100000u);
      EXPECT_EQ((*all)[99999].get<std::int64_t>(0).value(), 100000);
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto r = co_await pg::with_deadline(200ms, c->query("SELECT pg_sleep(10)"));
    EXPECT_FALSE(r);
    if (!r) {
      EXPECT_EQ(r.err().kind, pg::errc::cancelled) << r.err().what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
    EXPECT_FALSE(c->is_broken());
    auto ok = co_await c->query("SELECT 7");
    EXPECT_TRUE(ok) << ok.err().what();
    co_await c->close();
  }());
}

}  // namespace
