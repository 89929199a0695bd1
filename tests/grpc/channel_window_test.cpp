// grpc::channel's receive windows: a server-streaming call whose reader is slow holds the
// server back by one stream window (the client buffers no more), over cleartext and TLS;
// and calls that end early give their window back, so the connection's shared window
// never leaks shut.
//
// The oracle: the server counts the messages its method has written, the reader the
// messages it has been handed. Their difference is what sits between the two — in the
// server's send batch, the sockets and the channel's buffers. The channel reopens the
// window only for bytes its caller took, so that difference stays within the stream
// window (plus the server's batch); were windows reopened as bytes arrived, a slow reader
// would find nearly the whole stream ahead of it.
#include <saturn/grpc/channel.hpp>
#include <saturn/sched/thread_pool.hpp>
#include <saturn/task/time.hpp>

#include "grpc/grpc_test_support.hpp"
#include "grpc/test.pb.h"
#include "tls/tls_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>

using namespace std::chrono_literals;
namespace grpc = saturn::grpc;
using saturn_test::Num;
using saturn_test::Text;

namespace {

constexpr std::size_t k_message = 16 * 1024;    // each reply's text
constexpr std::uint32_t k_window = 128 * 1024;  // the channel's stream window in these tests

std::atomic<std::int64_t> written{0};

/// Flood: `value` replies of k_message bytes each, the i-th filled with 'a' + i % 26.
grpc::service& flood_service() {
  static grpc::service s;
  static const bool built = [] {
    s.server_stream<Num, Text>(
        "saturn_test.Calc/Flood",
        [](const Num& in, grpc::writer<Text>& w, grpc::call_context&) -> saturn::task<grpc::status> {
          for (std::int64_t i = 0; i < in.value(); ++i) {
            Text t;
            t.set_text(std::string(k_message, static_cast<char>('a' + i % 26)));
            const bool sent = co_await w.write(t);
            if (!sent)
              co_return grpc::status{grpc::status_code::cancelled, "gone"};
            written.fetch_add(1);
          }
          co_return grpc::status::success();
        });
    return true;
  }();
  (void)built;
  return s;
}

struct flood_result {
  std::string status;
  std::int64_t seen = 0;
  std::int64_t most_ahead = 0;  // the largest written - seen the reader observed
  bool intact = true;           // every reply had the size and fill expected
};

/// Reads `count` replies of Flood, sleeping `pause` for each of the first `slow` ones.
saturn::task<flood_result> read_flood(grpc::channel& ch, std::int64_t count, std::int64_t slow,
                                      std::chrono::milliseconds pause, std::chrono::seconds deadline = 60s) {
  written.store(0);
  flood_result r;
  Num in;
  in.set_value(count);
  auto each = [&](Text& t) -> saturn::task<bool> {
    r.intact = r.intact && t.text().size() == k_message && t.text().front() == 'a' + r.seen % 26 &&
               t.text().back() == 'a' + r.seen % 26;
    ++r.seen;
    r.most_ahead = std::max(r.most_ahead, written.load() - r.seen);
    if (r.seen <= slow) {
      auto slept = co_await saturn::sleep_for(pause);
      (void)slept;
    }
    co_return true;
  };
  grpc::call_options o;
  o.timeout = deadline;
  grpc::status st = co_await ch.server_stream<Text>("saturn_test.Calc/Flood", in, each, std::move(o));
  r.status = std::string(grpc::status_name(st.code)) + (st.message.empty() ? "" : " " + st.message);
  co_return r;
}

grpc::channel_options windowed() {
  grpc::channel_options o;
  o.stream_window = k_window;
  return o;
}

// What may sit between the writer and the reader: the stream window, the server's send
// batch (16 KiB) and the message its write was appending, and the message the reader holds.
constexpr std::int64_t k_bound = static_cast<std::int64_t>((k_window + 16 * 1024) / k_message) + 3;

}  // namespace

TEST(grpc_channel_window, a_slow_reader_holds_the_server_back) {
  grpc_test::saturn_server srv(flood_service());
  saturn::thread_pool pool({.threads = 2, .mode = saturn::pool_mode::io});
  grpc::channel ch(srv.target(), windowed());
  // 10 MiB; the reader takes 2 ms a message for the first 150 (0.3 s), time enough for an
  // unbounded server to send all of it.
  const flood_result r = pool.block_on(read_flood(ch, 640, 150, 2ms));
  EXPECT_EQ(r.status, "OK");
  EXPECT_EQ(r.seen, 640);
  EXPECT_TRUE(r.intact);
  EXPECT_LE(r.most_ahead, k_bound) << "the server ran " << r.most_ahead << " messages of " << k_message
                                   << " bytes ahead of a slow reader";
}

TEST(grpc_channel_window, a_slow_reader_over_tls_holds_the_server_back) {
  const auto& pki = tls_test::pki::get();
  auto server_ctx = saturn::tls::context::server({.certificates = {pki.cert("localhost")}, .alpn = {"h2"}});
  ASSERT_TRUE(server_ctx);
  auto client_ctx = saturn::tls::context::client({.ca_file = pki.pem("ca"), .alpn = {"h2"}});
  ASSERT_TRUE(client_ctx);
  grpc_test::saturn_server srv(flood_service(), std::move(*server_ctx));
  grpc::channel_options o = windowed();
  o.tls = grpc::channel_tls{.context = std::move(*client_ctx), .server_name = "localhost"};
  saturn::thread_pool pool({.threads = 2, .mode = saturn::pool_mode::io});
  grpc::channel ch(srv.target(), std::move(o));
  const flood_result r = pool.block_on(read_flood(ch, 320, 100, 2ms));
  EXPECT_EQ(r.status, "OK");
  EXPECT_EQ(r.seen, 320);
  EXPECT_TRUE(r.intact);
  EXPECT_LE(r.most_ahead, k_bound);
}

TEST(grpc_channel_window, calls_that_end_early_give_their_window_back) {
  grpc_test::saturn_server srv(flood_service());
  saturn::thread_pool pool({.threads = 2, .mode = saturn::pool_mode::io});
  // A connection window of two stream windows: two abandoned calls that kept theirs would
  // leave the next call nothing to receive with.
  grpc::channel_options o = windowed();
  o.connection_window = 2 * k_window;
  grpc::channel ch(srv.target(), o);
  const std::string got = pool.block_on([](grpc::channel& c) -> saturn::task<std::string> {
    std::string out;
    for (int i = 0; i < 6; ++i) {
      Num in;
      in.set_value(1000);
      int n = 0;
      auto stop_at_two = [&n](Text&) { return ++n < 2; };  // leaves with the window full
      // (Deadlines only so that a leaked window fails the test rather than hanging it.)
      grpc::call_options o1;
      o1.timeout = 10s;
      grpc::status st = co_await c.server_stream<Text>("saturn_test.Calc/Flood", in, stop_at_two, std::move(o1));
      out += std::string(grpc::status_name(st.code)) + " ";
      // One whose deadline passes while replies wait, untaken.
      grpc::call_options o2;
      o2.timeout = 50ms;
      auto never = [](Text&) -> saturn::task<bool> {
        auto slept = co_await saturn::sleep_for(200ms);
        (void)slept;
        co_return true;
      };
      grpc::status late = co_await c.server_stream<Text>("saturn_test.Calc/Flood", in, never, std::move(o2));
      out += std::string(grpc::status_name(late.code)) + " ";
    }
    auto last = co_await read_flood(c, 100, 0, 0ms, 10s);
    co_return out + last.status + " " + std::to_string(last.seen);
  }(ch));
  std::string expect;
  for (int i = 0; i < 6; ++i)
    expect += "CANCELLED DEADLINE_EXCEEDED ";
  EXPECT_EQ(got, expect + "OK 100");
}
