// grpc::channel over TLS (h2 by ALPN): against saturn's own gRPC server over TLS (unary,
// streaming, many calls on one connection, a deadline, a cancelled stream) and a
// python3-grpcio server with grpc.ssl_server_credentials; and what it refuses, saying
// why: a certificate for another host, an untrusted one, a server that picks http/1.1 by
// ALPN (or none of ours), a handshake that never finishes. Certificates come from the TLS
// tests' PKI (tests/tls/tls_test_support.hpp).
#include <saturn/grpc/channel.hpp>
#include <saturn/sched/thread_pool.hpp>
#include <saturn/task/join_handle.hpp>
#include <saturn/task/time.hpp>

#include "grpc/grpc_test_support.hpp"
#include "grpc/test.pb.h"
#include "tls/tls_test_support.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

using namespace std::chrono_literals;
namespace grpc = saturn::grpc;
using saturn_test::Num;
using saturn_test::Text;

namespace {

using grpc_test::forever_stopped;
using grpc_test::have_grpcio;
using grpc_test::run_command;
using grpc_test::slow_cancelled;

/// The methods the TLS tests call (the same names as grpc_server.py's).
grpc::service& test_service() {
  static grpc::service s;
  static const bool built = [] {
    s.unary<Text, Text>("saturn_test.Calc/Echo",
                        [](const Text& in, Text& out, grpc::call_context& ctx) -> saturn::task<grpc::status> {
                          out.set_text(in.text());
                          ctx.add_trailer("x-trailer", "tls:" + std::string(ctx.metadata("x-tag")));
                          co_return grpc::status::success();
                        });
    s.unary<Num, Num>("saturn_test.Calc/Slow", [](const Num&, Num&, grpc::call_context&) -> saturn::task<grpc::status> {
      auto slept = co_await saturn::sleep_for(3s);
      if (!slept)
        slow_cancelled.fetch_add(1);
      co_return grpc::status::success();
    });
    s.server_stream<Num, Num>(
        "saturn_test.Calc/Count",
        [](const Num& in, grpc::writer<Num>& w, grpc::call_context&) -> saturn::task<grpc::status> {
          for (std::int64_t i = 1; i <= in.value(); ++i) {
            Num n;
            n.set_value(i);
            const bool sent = co_await w.write(n);
            if (!sent)
              co_return grpc::status{grpc::status_code::cancelled, "gone"};
          }
          co_return grpc::status::success();
        });
    s.server_stream<Num, Num>("saturn_test.Calc/Forever",
                              [](const Num&, grpc::writer<Num>& w, grpc::call_context&) -> saturn::task<grpc::status> {
                                for (std::int64_t i = 1;; ++i) {
                                  Num n;
                                  n.set_value(i);
                                  const bool sent = co_await w.write(n);
                                  if (!sent)
                                    break;
                                  auto slept = co_await saturn::sleep_for(2ms);
                                  if (!slept)
                                    break;
                                }
                                forever_stopped.fetch_add(1);
                                co_return grpc::status{grpc::status_code::cancelled, "stopped"};
                              });
    return true;
  }();
  (void)built;
  return s;
}

saturn::tls::context server_context(const std::string& cert, std::vector<std::string> alpn = {"h2", "http/1.1"}) {
  const auto& pki = tls_test::pki::get();
  auto ctx = saturn::tls::context::server({.certificates = {pki.cert(cert)}, .alpn = std::move(alpn)});
  if (!ctx)
    throw std::runtime_error(ctx.err().message());
  return std::move(*ctx);
}

grpc::channel_options tls_options(std::string server_name = "localhost", std::vector<std::string> alpn = {"h2"}) {
  auto ctx = saturn::tls::context::client({.ca_file = tls_test::pki::get().pem("ca"), .alpn = std::move(alpn)});
  if (!ctx)
    throw std::runtime_error(ctx.err().message());
  grpc::channel_options o;
  o.tls = grpc::channel_tls{.context = std::move(*ctx), .server_name = std::move(server_name)};
  return o;
}

/// Calls made with a channel on a pool of their own.
struct calls {
  saturn::thread_pool pool{{.threads = 2, .mode = saturn::pool_mode::io}};
  grpc::channel ch;
  calls(const std::string& target, grpc::channel_options o) : ch(target, std::move(o)) {}

  std::string echo(const std::string& s) {
    return pool.block_on([](grpc::channel& c, std::string what) -> saturn::task<std::string> {
      std::vector<std::string> replies, reqs(1);
      std::vector<std::pair<std::string, std::string>> trailers;
      Text in;
      in.set_text(what);
      in.SerializeToString(&reqs[0]);
      grpc::call_options o;
      o.metadata = {{"x-tag", "ch"}};
      grpc::status st =
          co_await c.call("saturn_test.Calc/Echo", std::move(reqs), replies, std::move(o), nullptr, &trailers);
      if (!st.ok() || replies.size() != 1)
        co_return std::string(grpc::status_name(st.code)) + " " + st.message;
      Text out;
      out.ParseFromString(replies[0]);
      std::string tr;
      for (auto& [k, v] : trailers)
        if (k == "x-trailer")
          tr = v;
      co_return out.text() + " " + tr;
    }(ch, s));
  }
  std::string status_of(const std::string& method, std::optional<std::chrono::nanoseconds> timeout = {}) {
    return pool.block_on(
        [](grpc::channel& c, std::string m, std::optional<std::chrono::nanoseconds> t) -> saturn::task<std::string> {
          Num in, out;
          grpc::call_options o;
          o.timeout = t;
          grpc::status st = co_await c.unary(m, in, out, std::move(o));
          co_return std::string(grpc::status_name(st.code)) + (st.message.empty() ? "" : " " + st.message);
        }(ch, method, timeout));
  }
  std::string count(int n, int stop_after = 0, const char* method = "saturn_test.Calc/Count") {
    return pool.block_on([](grpc::channel& c, int upto, int stop, const char* m) -> saturn::task<std::string> {
      Num in;
      in.set_value(upto);
      std::string seen;
      int got = 0;
      auto each = [&](Num& msg) {
        seen += std::to_string(msg.value()) + " ";
        return stop == 0 || ++got < stop;
      };
      grpc::status st = co_await c.server_stream<Num>(m, in, each);
      co_return seen + std::string(grpc::status_name(st.code));
    }(ch, n, stop_after, method));
  }
  std::string sum(int n) {
    return pool.block_on([](grpc::channel& c, int count) -> saturn::task<std::string> {
      std::vector<Num> in(static_cast<std::size_t>(count));
      for (int i = 0; i < count; ++i)
        in[static_cast<std::size_t>(i)].set_value(i + 1);
      Num out;
      grpc::status st = co_await c.client_stream("saturn_test.Calc/Sum", std::span<const Num>(in), out);
      co_return std::string(grpc::status_name(st.code)) + " " + std::to_string(out.value());
    }(ch, n));
  }
  int concurrent(int n) {
    return pool.block_on([](grpc::channel& c, int k) -> saturn::task<int> {
      std::vector<saturn::join_handle<bool>> hs;
      for (int i = 0; i < k; ++i)
        hs.push_back(saturn::spawn([](grpc::channel& ch2, int j) -> saturn::task<bool> {
          Text in, out;
          in.set_text("c" + std::to_string(j));
          grpc::status st = co_await ch2.unary("saturn_test.Calc/Echo", in, out);
          co_return st.ok() && out.text() == in.text();
        }(c, i)));
      int ok = 0;
      for (auto& h : hs)
        ok += (co_await std::move(h)) ? 1 : 0;
      co_return ok;
    }(ch, n));
  }
};

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

TEST(grpc_channel_tls, calls_saturns_own_server_over_tls) {
  grpc_test::saturn_server srv(test_service(), server_context("localhost"));
  calls c(srv.target(), tls_options());
  EXPECT_EQ(c.echo("over tls"), "over tls tls:ch");
  EXPECT_EQ(c.count(5), "1 2 3 4 5 OK");
  EXPECT_EQ(c.concurrent(200), 200);
  // The replies handler stops the stream: the server's method sees the reset.
  const int stopped = forever_stopped.load();
  EXPECT_EQ(c.count(0, 3, "saturn_test.Calc/Forever"), "1 2 3 CANCELLED");
  for (int i = 0; i < 300 && forever_stopped.load() == stopped; ++i)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(forever_stopped.load(), stopped + 1) << "the stream's method ran on after the client cancelled";
  const int before = slow_cancelled.load();
  EXPECT_EQ(c.status_of("saturn_test.Calc/Slow", 200ms), "DEADLINE_EXCEEDED the deadline passed");
  for (int i = 0; i < 300 && slow_cancelled.load() == before; ++i)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(slow_cancelled.load(), before + 1) << "the server's method ran on after the client's deadline";
  // The connection survived all that.
  EXPECT_EQ(c.echo("still"), "still tls:ch");
}

TEST(grpc_channel_tls, the_server_name_defaults_to_the_targets_host) {
  grpc_test::saturn_server srv(test_service(), server_context("localhost"));
  calls by_ip(srv.target(), tls_options(""));  // 127.0.0.1, in the certificate's IP names
  EXPECT_EQ(by_ip.echo("ip"), "ip tls:ch");
  calls by_name("localhost:" + std::to_string(srv.port()), tls_options(""));
  EXPECT_EQ(by_name.echo("name"), "name tls:ch");
}

TEST(grpc_channel_tls, calls_a_python_grpcio_server_over_tls) {
  if (!have_grpcio())
    GTEST_SKIP() << "python3-grpcio is not installed";
  const auto& pki = tls_test::pki::get();
  grpc_test::child_server server({"/usr/bin/python3", SATURN_TESTS_DIR "/grpc/grpc_server.py", "--tls",
                                  pki.pem("localhost"), pki.key("localhost")});
  ASSERT_GT(server.port(), 0);
  calls c("127.0.0.1:" + std::to_string(server.port()), tls_options());
  EXPECT_EQ(c.echo("to python"), "to python py:ch");
  EXPECT_EQ(c.count(3), "1 2 3 OK");
  EXPECT_EQ(c.sum(10), "OK 55");
  EXPECT_EQ(c.status_of("saturn_test.Calc/Fail"), "FAILED_PRECONDITION not today");
  EXPECT_EQ(c.concurrent(50), 50);
}

TEST(grpc_channel_tls, a_certificate_for_another_host_is_refused) {
  grpc_test::saturn_server srv(test_service(), server_context("other"));  // other.test only
  calls c(srv.target(), tls_options("localhost"));
  const std::string st = c.status_of("saturn_test.Calc/Echo");
  EXPECT_EQ(st, "UNAVAILABLE TLS to " + srv.target() +
                    " (server name localhost): the server's certificate failed verification: hostname mismatch");
}

TEST(grpc_channel_tls, an_untrusted_certificate_is_refused) {
  grpc_test::saturn_server srv(test_service(), server_context("self-signed"));
  calls c(srv.target(), tls_options("localhost"));
  const std::string st = c.status_of("saturn_test.Calc/Echo");
  EXPECT_TRUE(starts_with(st, "UNAVAILABLE TLS to " + srv.target() +
                                  " (server name localhost): the server's certificate failed verification: self"))
      << st;
}

TEST(grpc_channel_tls, a_server_that_picks_http11_by_alpn_is_refused) {
  grpc_test::saturn_server srv(test_service(), server_context("localhost", {"http/1.1"}));
  // A client context that offers both: the server picks http/1.1, the channel says so.
  calls both(srv.target(), tls_options("localhost", {"h2", "http/1.1"}));
  EXPECT_EQ(both.status_of("saturn_test.Calc/Echo"),
            "UNAVAILABLE TLS to " + srv.target() +
                " (server name localhost): the server chose ALPN \"http/1.1\", not h2: gRPC needs HTTP/2 (the client "
                "context must offer it: tls::client_config::alpn = {\"h2\"})");
  // Offering h2 alone: the server refuses the handshake with its alert.
  calls h2_only(srv.target(), tls_options("localhost", {"h2"}));
  const std::string st = h2_only.status_of("saturn_test.Calc/Echo");
  EXPECT_TRUE(starts_with(st, "UNAVAILABLE TLS to " + srv.target() + " (server name localhost): tls handshake")) << st;
  EXPECT_NE(st.find("no application protocol"), std::string::npos) << st;
}

TEST(grpc_channel_tls, a_handshake_that_never_finishes_times_out) {
  // A listener that never accepts: the kernel completes the TCP handshake, nobody answers
  // the ClientHello.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 8), 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string target = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  grpc::channel_options o = tls_options("localhost");
  o.tls->handshake_timeout = 300ms;
  {
    calls c(target, std::move(o));
    EXPECT_EQ(
        c.status_of("saturn_test.Calc/Echo"),
        "UNAVAILABLE TLS to " + target + " (server name localhost): the TLS handshake did not finish within 300 ms");
  }
  ::close(fd);
}
