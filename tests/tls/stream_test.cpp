// tls::stream end to end, server and client in one runtime over a socket pair or
// loopback TCP: handshakes (TLS 1.3, RSA and ECDSA certificates), ALPN, SNI, resumption,
// verification failures that say which, clean and truncated ends, large writes and
// writev.
#include "tls_test_support.hpp"

#include "../net/net_util.hpp"

#include <gtest/gtest.h>

#include <saturn/sched/thread_pool.hpp>
#include <saturn/task/this_task.hpp>
#include <saturn/task/time.hpp>

using namespace tls_test;
using saturn::result;
using namespace std::chrono_literals;

namespace {

struct pair_ends {
  net::unix_stream a, b;
};
pair_ends make_pair() {
  auto p = net::unix_stream::pair();
  if (!p)
    throw std::runtime_error(p.err().message());
  return {std::move(p->first), std::move(p->second)};
}

task<void> handshake_end(tls::stream* s, end_result* out) {
  auto hs = s->handshake(5s);
  out->handshake = co_await std::move(hs);
  out->done = true;
  if (out->handshake) {
    out->alpn = std::string(s->alpn());
    out->version = std::string(s->version());
    out->resumed = s->resumed();
  }
}

/// Handshakes both ends; the client checks the server as `host`.
struct session {
  tls::stream server, client;
  end_result srv, cli;
};
session connect_pair(saturn::runtime& rt, const tls::context& sctx, const tls::context& cctx, const char* host) {
  pair_ends p = make_pair();
  auto s = tls::stream::server(sctx, std::move(p.a));
  auto c = tls::stream::client(cctx, std::move(p.b), host);
  if (!s || !c)
    throw std::runtime_error("tls::stream");
  session x{std::move(*s), std::move(*c), {}, {}};
  rt.block_on(both(handshake_end(&x.server, &x.srv), handshake_end(&x.client, &x.cli)));
  return x;
}

/// Writes `data`; then, `notify`, sends close_notify and waits for the peer's before
/// closing (a close with the peer's records unread would make the kernel reset the
/// connection, losing what the peer had not read yet).
task<void> write_all_then_close(tls::stream* s, std::vector<std::byte> data, bool notify) {
  auto w = s->write(data);
  auto r = co_await std::move(w);
  EXPECT_TRUE(r.has_value()) << r.err().message();
  if (notify) {
    auto sh = s->shutdown();
    auto ok = co_await std::move(sh);
    EXPECT_TRUE(ok.has_value()) << ok.err().message();
    std::vector<std::byte> buf(4096);
    for (;;) {
      auto rd = s->read(buf);
      auto n = co_await std::move(rd);
      if (!n || *n == 0)
        break;
    }
  }
  auto cl = s->close();
  (void)co_await cl;
}

/// Reads until end of stream or error; the bytes and the final outcome.
task<void> read_to_end(tls::stream* s, std::vector<std::byte>* got, result<std::size_t>* last) {
  std::vector<std::byte> buf(7000);  // not a multiple of the record size
  for (;;) {
    auto rd = s->read(buf);
    auto n = co_await std::move(rd);
    *last = n;
    if (!n || *n == 0)
      co_return;
    got->insert(got->end(), buf.begin(), buf.begin() + static_cast<long>(*n));
  }
}

/// read_to_end, then close_notify back.
task<void> read_then_notify(tls::stream* s, std::vector<std::byte>* got, result<std::size_t>* last) {
  co_await read_to_end(s, got, last);
  auto sh = s->shutdown();
  (void)co_await std::move(sh);
}

task<void> exchange_byte(tls::stream* from, tls::stream* to);

}  // namespace

TEST(tls_stream, handshake_and_exact_echo_in_both_directions) {
  saturn::runtime rt;
  auto x = connect_pair(rt, server_ctx(), client_ctx(), "localhost");
  ASSERT_TRUE(x.srv.handshake) << x.srv.handshake.err().message();
  ASSERT_TRUE(x.cli.handshake) << x.cli.handshake.err().message();
  EXPECT_EQ(x.cli.version, "TLSv1.3");
  EXPECT_TRUE(x.cli.alpn.empty());
  const auto data = net_test::pattern(300'000, 7);
  std::vector<std::byte> got;
  result<std::size_t> last = std::size_t{1};
  rt.block_on(both(write_all_then_close(&x.client, data, true), read_then_notify(&x.server, &got, &last)));
  ASSERT_TRUE(last.has_value()) << last.err().message();
  EXPECT_EQ(*last, 0u) << "close_notify is a clean end of stream";
  EXPECT_TRUE(got == data);
}

TEST(tls_stream, rsa_certificate_works_too) {
  saturn::runtime rt;
  auto x = connect_pair(rt, server_ctx({}, "localhost-rsa"), client_ctx(), "127.0.0.1");
  ASSERT_TRUE(x.cli.handshake) << x.cli.handshake.err().message();
  ASSERT_TRUE(x.srv.handshake) << x.srv.handshake.err().message();
}

TEST(tls_stream, close_without_close_notify_is_truncation) {
  saturn::runtime rt;
  auto x = connect_pair(rt, server_ctx(), client_ctx(), "localhost");
  ASSERT_TRUE(x.cli.handshake);
  // The client takes the server's tickets in first: closing with them unread would be a
  // reset, not an end of stream.
  rt.block_on(exchange_byte(&x.server, &x.client));
  const auto data = net_test::pattern(20'000, 3);
  std::vector<std::byte> got;
  result<std::size_t> last = std::size_t{1};
  rt.block_on(both(write_all_then_close(&x.client, data, false), read_to_end(&x.server, &got, &last)));
  ASSERT_FALSE(last.has_value()) << "an end without close_notify must not look like a clean end";
  EXPECT_TRUE(tls::is(last.err(), tls::errc::truncated)) << last.err().message();
  EXPECT_TRUE(got == data) << "the bytes before the cut are still delivered";
}

TEST(tls_stream, alpn_picks_the_servers_protocol) {
  saturn::runtime rt;
  auto x = connect_pair(rt, server_ctx({"http/1.1"}), client_ctx({"h2", "http/1.1"}), "localhost");
  ASSERT_TRUE(x.srv.handshake) << x.srv.handshake.err().message();
  EXPECT_EQ(x.srv.alpn, "http/1.1");
  EXPECT_EQ(x.cli.alpn, "http/1.1");
}

TEST(tls_stream, alpn_with_no_common_protocol_fails_with_the_alert) {
  saturn::runtime rt;
  auto x = connect_pair(rt, server_ctx({"http/1.1"}), client_ctx({"h2"}), "localhost");
  ASSERT_FALSE(x.srv.handshake.has_value());
  ASSERT_FALSE(x.cli.handshake.has_value());
  EXPECT_NE(x.cli.handshake.err().message().find("no application protocol"), std::string::npos)
      << x.cli.handshake.err().message();
}

TEST(tls_stream, sni_chooses_the_certificate) {
  saturn::runtime rt;
  auto sctx = tls::context::server({.certificates = {pki::get().cert("localhost"), pki::get().cert("other")}});
  ASSERT_TRUE(sctx.has_value()) << sctx.err().message();
  auto x = connect_pair(rt, *sctx, client_ctx(), "other.test");
  EXPECT_TRUE(x.cli.handshake) << x.cli.handshake.err().message();
  EXPECT_EQ(x.server.server_name(), "other.test");
  auto y = connect_pair(rt, *sctx, client_ctx(), "localhost");
  EXPECT_TRUE(y.cli.handshake) << y.cli.handshake.err().message();
}

namespace {
task<void> exchange_byte(tls::stream* from, tls::stream* to) {
  // TLS 1.3 tickets arrive after the handshake: a read on the client takes them in.
  std::byte b{42};
  auto w = from->write(std::span(&b, 1));
  auto wr = co_await std::move(w);
  CO_ASSERT_TRUE(wr.has_value());
  std::byte in{};
  auto r = to->read(std::span(&in, 1));
  auto rr = co_await std::move(r);
  CO_ASSERT_TRUE(rr.has_value() && *rr == 1);
}
}  // namespace

TEST(tls_stream, second_connection_resumes) {
  saturn::runtime rt;
  auto sctx = server_ctx();
  auto cctx = client_ctx();
  auto x = connect_pair(rt, sctx, cctx, "localhost");
  ASSERT_TRUE(x.cli.handshake);
  EXPECT_FALSE(x.cli.resumed);
  rt.block_on(exchange_byte(&x.server, &x.client));
  auto y = connect_pair(rt, sctx, cctx, "localhost");
  ASSERT_TRUE(y.cli.handshake) << y.cli.handshake.err().message();
  EXPECT_TRUE(y.cli.resumed);
  EXPECT_TRUE(y.srv.resumed);
}

TEST(tls_stream, session_survives_a_connection_closed_without_close_notify) {
  saturn::runtime rt;
  auto sctx = server_ctx();
  auto cctx = client_ctx();
  {
    auto x = connect_pair(rt, sctx, cctx, "localhost");
    ASSERT_TRUE(x.cli.handshake);
    rt.block_on(exchange_byte(&x.server, &x.client));
  }  // both ends destroyed: no close_notify was sent
  auto y = connect_pair(rt, sctx, cctx, "localhost");
  ASSERT_TRUE(y.cli.handshake) << y.cli.handshake.err().message();
  EXPECT_TRUE(y.cli.resumed) << "OpenSSL drops such sessions unless told the end was orderly";
}

TEST(tls_stream, untrusted_certificate_is_rejected_and_the_server_hears_the_alert) {
  saturn::runtime rt;
  auto sys = tls::context::client();  // the system store knows nothing of the test CA
  ASSERT_TRUE(sys.has_value());
  auto x = connect_pair(rt, server_ctx(), *sys, "localhost");
  ASSERT_FALSE(x.cli.handshake.has_value());
  EXPECT_EQ(&x.cli.handshake.err().code.category(), &tls::verify_category());
  EXPECT_NE(x.cli.handshake.err().message().find("local issuer"), std::string::npos)
      << x.cli.handshake.err().message();
  ASSERT_FALSE(x.srv.handshake.has_value());
  EXPECT_NE(x.srv.handshake.err().message().find("unknown ca"), std::string::npos)
      << x.srv.handshake.err().message();
}

TEST(tls_stream, self_signed_expired_and_wrong_host_say_which) {
  saturn::runtime rt;
  struct cse {
    const char* cert;
    const char* host;
    const char* says;
  } cases[] = {{"self-signed", "localhost", "self-signed certificate"},
               {"expired", "localhost", "certificate has expired"},
               {"localhost", "example.com", "hostname mismatch"},
               {"localhost", "127.0.0.2", "IP address mismatch"}};
  for (const cse& c : cases) {
    auto x = connect_pair(rt, server_ctx({}, c.cert), client_ctx(), c.host);
    ASSERT_FALSE(x.cli.handshake.has_value()) << c.cert << " for " << c.host;
    EXPECT_NE(x.cli.handshake.err().message().find(c.says), std::string::npos)
        << c.cert << " for " << c.host << ": " << x.cli.handshake.err().message();
    EXPECT_FALSE(x.srv.handshake.has_value());
  }
}

task<void> writev_pieces(tls::stream* s, std::vector<std::byte>* sent) {
  std::vector<std::vector<std::byte>> pieces;
  for (std::size_t i = 0; i < 40; ++i)
    pieces.push_back(net_test::pattern(i % 3 == 0 ? 40'000 : 1 + i * 37, static_cast<std::uint32_t>(i)));
  std::vector<::iovec> iov;
  for (auto& p : pieces) {
    iov.push_back({p.data(), p.size()});
    sent->insert(sent->end(), p.begin(), p.end());
  }
  auto w = s->writev(iov);
  auto n = co_await std::move(w);
  EXPECT_TRUE(n.has_value() && *n == sent->size());
  auto sh = s->shutdown();
  (void)co_await std::move(sh);
}

TEST(tls_stream, writev_gathers_and_delivers_exactly) {
  saturn::runtime rt;
  auto x = connect_pair(rt, server_ctx(), client_ctx(), "localhost");
  ASSERT_TRUE(x.cli.handshake);
  std::vector<std::byte> sent, got;
  result<std::size_t> last = std::size_t{1};
  rt.block_on(both(writev_pieces(&x.server, &sent), read_to_end(&x.client, &got, &last)));
  EXPECT_TRUE(last.has_value() && *last == 0);
  EXPECT_TRUE(got == sent);
}

task<void> tcp_server(net::tcp_listener* l, const tls::context* ctx, std::vector<std::byte>* got) {
  auto c = co_await l->accept();
  CO_ASSERT_OK(c);
  auto s = tls::stream::server(*ctx, std::move(*c));
  CO_ASSERT_OK(s);
  auto hs = s->handshake(5s);
  auto ok = co_await std::move(hs);
  CO_ASSERT_OK(ok);
  result<std::size_t> last = std::size_t{1};
  co_await read_to_end(&*s, got, &last);
  EXPECT_TRUE(last.has_value() && *last == 0);
  auto sh = s->shutdown();
  (void)co_await std::move(sh);
}

task<void> tcp_client(std::uint16_t port, const tls::context* ctx, std::vector<std::byte> data) {
  auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(port));
  CO_ASSERT_OK(c);
  auto s = tls::stream::client(*ctx, std::move(*c), "127.0.0.1");
  CO_ASSERT_OK(s);
  auto hs = s->handshake(5s);
  auto ok = co_await std::move(hs);
  CO_ASSERT_OK(ok);
  co_await write_all_then_close(&*s, std::move(data), true);
}

TEST(tls_stream, over_tcp_on_a_thread_pool) {
  saturn::thread_pool pool({.threads = 2});
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
  ASSERT_TRUE(l.has_value());
  const std::uint16_t port = l->local_address()->port();
  auto sctx = server_ctx();
  auto cctx = client_ctx();
  const auto data = net_test::pattern(2'000'000, 11);
  std::vector<std::byte> got;
  pool.block_on(both(tcp_server(&*l, &sctx, &got), tcp_client(port, &cctx, data)));
  EXPECT_TRUE(got == data);
}

namespace {
/// The client sends half of a record, the server's read is cancelled (with_timeout),
/// the client sends the rest, and the server reads on.
task<void> cancel_mid_record(tls::stream* srv, tls::stream* cli, result<std::size_t>* first, std::string* after) {
  const std::string msg = "a record split around a cancelled read";
  CO_ASSERT_OK(cli->encrypt(std::as_bytes(std::span(msg.data(), msg.size()))));
  const std::span<const std::byte> rec = cli->pending_output();
  const std::size_t half = rec.size() / 2;
  auto n1 = co_await cli->socket().send(rec.subspan(0, half));
  CO_ASSERT_OK(n1);
  std::vector<std::byte> buf(100);
  auto timed = saturn::with_timeout(50ms, srv->read(buf));
  *first = co_await std::move(timed);
  auto n2 = co_await cli->socket().send(rec.subspan(half));
  CO_ASSERT_OK(n2);
  cli->consume_output(rec.size());
  while (after->size() < msg.size()) {
    auto again = srv->read(buf);
    auto n = co_await std::move(again);
    if (!n || *n == 0)
      co_return;
    after->append(reinterpret_cast<const char*>(buf.data()), *n);
  }
}
}  // namespace

TEST(tls_stream, a_cancelled_read_ends_with_an_error_and_the_stream_reads_on) {
  saturn::runtime rt;
  auto x = connect_pair(rt, server_ctx(), client_ctx(), "localhost");
  ASSERT_TRUE(x.srv.handshake);
  result<std::size_t> first = std::size_t{1};
  std::string after;
  const auto t0 = std::chrono::steady_clock::now();
  rt.block_on(cancel_mid_record(&x.server, &x.client, &first, &after));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  ASSERT_FALSE(first.has_value());
  EXPECT_TRUE(first.err() == std::errc::timed_out) << first.err().message();
  // The half record received before the cancel was kept: a cancelled receive takes no
  // byte, and what earlier receives brought stays in the stream's buffer.
  EXPECT_EQ(after, "a record split around a cancelled read");
}

namespace {
/// Two server reads, each bounded by 2 s so that a read waiting for bytes that never come
/// fails with timed_out instead of hanging the test.
task<void> two_reads(tls::stream* srv, result<std::size_t>* first, result<std::size_t>* second) {
  std::vector<std::byte> buf(4096);
  auto r1 = saturn::with_timeout(2s, srv->read(buf));
  *first = co_await std::move(r1);
  auto r2 = saturn::with_timeout(2s, srv->read(buf));
  *second = co_await std::move(r2);
}

/// A record and close_notify in one send (encrypt() keeps the record, shutdown() adds the
/// alert and sends both), then the server's two reads.
task<void> data_then_close_notify(tls::stream* srv, tls::stream* cli, result<std::size_t>* first,
                                  result<std::size_t>* second) {
  const std::string msg = "last words";
  CO_ASSERT_OK(cli->encrypt(std::as_bytes(std::span(msg.data(), msg.size()))));
  auto sh = cli->shutdown();
  CO_ASSERT_OK(co_await std::move(sh));
  co_await two_reads(srv, first, second);
}

/// A good record and a forged one (its tag changed) in one send, then the server's two reads.
task<void> good_then_forged(tls::stream* srv, tls::stream* cli, result<std::size_t>* first,
                            result<std::size_t>* second) {
  const std::string a = "a good record", b = "a forged record";
  CO_ASSERT_OK(cli->encrypt(std::as_bytes(std::span(a.data(), a.size()))));
  CO_ASSERT_OK(cli->encrypt(std::as_bytes(std::span(b.data(), b.size()))));
  const std::span<const std::byte> out = cli->pending_output();
  std::vector<std::byte> wire(out.begin(), out.end());
  cli->consume_output(out.size());
  wire.back() ^= std::byte{0x5a};  // the last byte of the second record's tag
  auto sent = co_await cli->socket().send(wire);
  CO_ASSERT_OK(sent);
  co_await two_reads(srv, first, second);
}
}  // namespace

// A read that decrypts a record and meets close_notify in the same receive: the next read
// returns 0 at once (it must not wait for more ciphertext).
TEST(tls_stream, close_notify_in_the_same_receive_as_data_ends_the_next_read) {
  saturn::runtime rt;
  auto x = connect_pair(rt, server_ctx(), client_ctx(), "localhost");
  ASSERT_TRUE(x.srv.handshake);
  result<std::size_t> first = std::size_t{0}, second = std::size_t{1};
  rt.block_on(data_then_close_notify(&x.server, &x.client, &first, &second));
  ASSERT_TRUE(first.has_value()) << first.err().message();
  EXPECT_EQ(*first, std::string("last words").size());
  ASSERT_TRUE(second.has_value()) << second.err().message();
  EXPECT_EQ(*second, 0u) << "close_notify is a clean end of stream";
}

// A forged record right behind a good one in the same receive: the first read returns the
// good record, the next one fails at once with OpenSSL's reason (it must not wait).
TEST(tls_stream, a_forged_record_behind_a_good_one_fails_the_next_read) {
  saturn::runtime rt;
  auto x = connect_pair(rt, server_ctx(), client_ctx(), "localhost");
  ASSERT_TRUE(x.srv.handshake);
  result<std::size_t> first = std::size_t{0}, second = std::size_t{1};
  rt.block_on(good_then_forged(&x.server, &x.client, &first, &second));
  ASSERT_TRUE(first.has_value()) << first.err().message();
  EXPECT_EQ(*first, std::string("a good record").size());
  ASSERT_FALSE(second.has_value());
  EXPECT_FALSE(second.err() == std::errc::timed_out) << "the read waited instead of failing";
}
