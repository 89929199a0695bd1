// What a TLS server end gets from hostile or broken peers, each driven over a raw socket:
// garbage instead of a ClientHello, a record header then silence (the handshake timeout
// ends it while another handshake goes on), a record longer than TLS allows, a record cut
// short by a close, and short sends and receives mid-record from the fault injector.
#include "tls_test_support.hpp"

#include "../net/net_util.hpp"

#include <saturn/task/time.hpp>
#include <saturn/testing/fault_injection.hpp>

#include <gtest/gtest.h>

#include <optional>

using namespace tls_test;
using saturn::result;
using namespace std::chrono_literals;

namespace {

task<void> server_handshake(tls::stream* s, std::chrono::milliseconds timeout, result<void>* out,
                            std::chrono::steady_clock::time_point* ended = nullptr) {
  auto hs = s->handshake(timeout);
  *out = co_await std::move(hs);
  if (ended != nullptr)
    *ended = std::chrono::steady_clock::now();
}

/// Sends `bytes` on the raw end, then waits `hold` and closes it (0: keep it open).
task<void> raw_peer(net::unix_stream* raw, std::string bytes, std::chrono::milliseconds hold, bool close) {
  auto tx = raw->send(std::as_bytes(std::span(bytes)));
  (void)co_await tx;
  if (hold.count() > 0)
    co_await saturn::sleep_for(hold);
  if (close) {
    auto cl = raw->close();
    (void)co_await cl;
  }
}

/// The server end's handshake error after the raw peer sent `bytes` (then closed).
saturn::error hostile(std::string bytes, std::chrono::milliseconds timeout = 2s, bool close = true) {
  saturn::runtime rt;
  auto p = net::unix_stream::pair();
  auto sctx = server_ctx();
  auto s = tls::stream::server(sctx, std::move(p->first));
  result<void> out;
  rt.block_on(both(server_handshake(&*s, timeout, &out), raw_peer(&p->second, std::move(bytes), 0ms, close)));
  EXPECT_FALSE(out.has_value());
  return out ? saturn::error{} : out.err();
}

/// One byte of a ClientHello's start every 100 ms (1.1 s in all).
task<void> trickle(net::unix_stream* raw) {
  std::string hello("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11);
  for (char c : hello) {
    auto tx = raw->send(std::as_bytes(std::span(&c, 1)));
    auto sent = co_await tx;
    if (!sent)
      co_return;
    co_await saturn::sleep_for(100ms);
  }
}

task<void> good_client(const tls::context* cctx, net::unix_stream sock, result<void>* out,
                       std::chrono::steady_clock::time_point* ended, std::optional<tls::stream>* keep) {
  co_await saturn::sleep_for(20ms);  // starts after the silent peer
  auto c = tls::stream::client(*cctx, std::move(sock), "localhost");
  keep->emplace(std::move(*c));  // open until the test ends: the server still sends its tickets
  auto hs = (*keep)->handshake(5s);
  *out = co_await std::move(hs);
  *ended = std::chrono::steady_clock::now();
}

}  // namespace

TEST(tls_hostile, garbage_instead_of_client_hello) {
  saturn::error e = hostile(std::string(64, 'G') + "ET / HTTP/1.1\r\n\r\n");
  EXPECT_EQ(&e.code.category(), &tls::openssl_category()) << e.message();
  EXPECT_NE(e.message().find("tls handshake: "), std::string::npos) << e.message();
  saturn::error h = hostile("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(h.message().find("http request"), std::string::npos) << h.message();
}

TEST(tls_hostile, record_header_then_silence_times_out_while_others_handshake) {
  saturn::runtime rt;
  auto sctx = server_ctx();
  auto cctx = client_ctx();
  auto silent = net::unix_stream::pair();
  auto good = net::unix_stream::pair();
  auto s1 = tls::stream::server(sctx, std::move(silent->first));
  auto s2 = tls::stream::server(sctx, std::move(good->first));
  result<void> r1, r2, rc;
  std::optional<tls::stream> client;
  std::chrono::steady_clock::time_point t1{}, t2{}, tc{};
  const auto start = std::chrono::steady_clock::now();
  // A handshake record header announcing 256 bytes, then nothing.
  std::string header("\x16\x03\x01\x01\x00", 5);
  rt.block_on(both(both(server_handshake(&*s1, 300ms, &r1, &t1), raw_peer(&silent->second, header, 600ms, false)),
                   both(server_handshake(&*s2, 5s, &r2, &t2), good_client(&cctx, std::move(good->second), &rc, &tc, &client))));
  ASSERT_FALSE(r1.has_value());
  EXPECT_TRUE(r1.err() == std::errc::timed_out) << r1.err().message();
  EXPECT_EQ(std::string(r1.err().operation), "tls handshake");
  EXPECT_GE(t1 - start, 290ms);
  ASSERT_TRUE(r2.has_value()) << r2.err().message();
  ASSERT_TRUE(rc.has_value()) << rc.err().message();
  EXPECT_LT(t2, t1) << "the good handshake finished while the silent one waited";
}

TEST(tls_hostile, a_trickle_cannot_stretch_the_handshake_timeout) {
  // One byte of a ClientHello every 100 ms: each read gets a byte, but the timeout is for
  // the whole handshake.
  saturn::runtime rt;
  auto sctx = server_ctx();
  auto p = net::unix_stream::pair();
  auto s = tls::stream::server(sctx, std::move(p->first));
  result<void> out;
  const auto start = std::chrono::steady_clock::now();
  rt.block_on(both(server_handshake(&*s, 350ms, &out), trickle(&p->second)));
  ASSERT_FALSE(out.has_value());
  EXPECT_TRUE(out.err() == std::errc::timed_out) << out.err().message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 12s);
}

TEST(tls_hostile, oversized_record_is_refused) {
  // A handshake record of 20,000 bytes: more than the 2^14 + 2048 TLS allows.
  std::string rec("\x16\x03\x01\x4e\x20", 5);
  rec.append(20'000, '\x01');
  saturn::error e = hostile(rec);
  EXPECT_EQ(&e.code.category(), &tls::openssl_category()) << e.message();
  EXPECT_NE(e.message().find("too long"), std::string::npos) << e.message();
}

TEST(tls_hostile, record_cut_short_by_a_close) {
  std::string rec("\x16\x03\x01\x01\x00", 5);
  rec.append(40, '\x01');
  saturn::error e = hostile(rec);
  EXPECT_TRUE(tls::is(e, tls::errc::closed_in_handshake)) << e.message();
}

TEST(tls_hostile, close_before_any_byte) {
  saturn::error e = hostile("");
  EXPECT_TRUE(tls::is(e, tls::errc::closed_in_handshake)) << e.message();
}

namespace {

task<void> echo_server(tls::stream* s, result<void>* failed) {
  auto hs = s->handshake(10s);
  auto ok = co_await std::move(hs);
  if (!ok) {
    *failed = ok.err();
    co_return;
  }
  std::vector<std::byte> buf(5000);
  for (;;) {
    auto rd = s->read(buf);
    auto n = co_await std::move(rd);
    if (!n) {
      *failed = n.err();
      co_return;
    }
    if (*n == 0)
      break;
    auto w = s->write(std::span(buf).first(*n));
    auto wr = co_await std::move(w);
    if (!wr) {
      *failed = wr.err();
      co_return;
    }
  }
  auto sh = s->shutdown();
  (void)co_await std::move(sh);
}

task<void> read_until(tls::stream* s, std::vector<std::byte>* into, std::size_t want, result<void>* f) {
  std::vector<std::byte> buf(3333);
  while (into->size() < want) {
    auto rd = s->read(buf);
    auto n = co_await std::move(rd);
    if (!n || *n == 0) {
      if (!n)
        *f = n.err();
      co_return;
    }
    into->insert(into->end(), buf.begin(), buf.begin() + static_cast<long>(*n));
  }
}

task<void> echo_client(tls::stream* c, std::vector<std::byte> data, std::vector<std::byte>* got,
                       result<void>* failed) {
  auto hs = c->handshake(10s);
  auto ok = co_await std::move(hs);
  if (!ok) {
    *failed = ok.err();
    co_return;
  }
  // One task per stream at a time: write a slice, read its echo, repeat.
  for (std::size_t off = 0; off < data.size(); off += 50'000) {
    const std::size_t n = std::min<std::size_t>(50'000, data.size() - off);
    auto w = c->write(std::span(data).subspan(off, n));
    auto wr = co_await std::move(w);
    if (!wr) {
      *failed = wr.err();
      co_return;
    }
    co_await read_until(c, got, off + n, failed);
    if (!*failed)
      co_return;
  }
  auto sh = c->shutdown();
  (void)co_await std::move(sh);
}

}  // namespace

class tls_faults : public ::testing::TestWithParam<std::uint32_t> {};
INSTANTIATE_TEST_SUITE_P(seeds, tls_faults, ::testing::Values(3u, 41u, 977u));

TEST_P(tls_faults, short_sends_and_receives_mid_record_lose_nothing) {
  saturn::testing::fault_plan plan{.seed = GetParam()};
  plan.rules = {{saturn::testing::op_kind::send, 0, 0.5}, {saturn::testing::op_kind::recv, 0, 0.5}};
  saturn::testing::fault_scope scope(plan);
  saturn::runtime rt;
  auto sctx = server_ctx();
  auto cctx = client_ctx();
  auto p = net::unix_stream::pair();
  auto s = tls::stream::server(sctx, std::move(p->first));
  auto c = tls::stream::client(cctx, std::move(p->second), "localhost");
  const auto data = net_test::pattern(400'000, GetParam());
  std::vector<std::byte> got;
  result<void> sf, cf;
  rt.block_on(both(echo_server(&*s, &sf), echo_client(&*c, data, &got, &cf)));
  ASSERT_TRUE(sf.has_value()) << sf.err().message();
  ASSERT_TRUE(cf.has_value()) << cf.err().message();
  EXPECT_TRUE(got == data);
  EXPECT_GT(scope.stats().total_shorts(), 0u) << "the injector cut transfers short";
}
