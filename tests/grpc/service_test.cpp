// grpc::service and grpc::health on saturn's HTTP/2 server, called by a real gRPC client
// (python3-grpcio, grpc_client.py): unary, server and client streaming, metadata and
// trailers, error statuses, deadlines that cancel the method, a cancelled stream, message
// limits, unknown methods, health Check and Watch; and what non-gRPC requests get (curl).
#include <saturn/grpc.hpp>
#include <saturn/grpc/channel.hpp>
#include <saturn/http/server.hpp>
#include <saturn/net/tcp_listener.hpp>
#include <saturn/sched/thread_pool.hpp>
#include <saturn/task/join_handle.hpp>
#include <saturn/task/runtime.hpp>
#include <saturn/task/time.hpp>

#include "grpc/grpc_test_support.hpp"
#include "grpc/test.pb.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

using namespace std::chrono_literals;
namespace grpc = saturn::grpc;

namespace {

using grpc_test::forever_stopped;
using grpc_test::have_grpcio;
using grpc_test::run_command;
using grpc_test::slow_cancelled;

/// The test service: the methods grpc_client.py calls.
class test_server {
 public:
  test_server() : m_pool({.threads = 2, .mode = saturn::pool_mode::io}), m_svc({.max_receive_message = 64 * 1024}) {
    std::signal(SIGPIPE, SIG_IGN);
    using saturn_test::Num;
    using saturn_test::Text;
    m_svc.unary<Text, Text>("saturn_test.Calc/Echo",
                            [](const Text& in, Text& out, grpc::call_context& ctx) -> saturn::task<grpc::status> {
                              out.set_text(in.text());
                              ctx.add_trailer("x-trailer", "done:" + std::string(ctx.metadata("x-tag")));
                              co_return grpc::status::success();
                            });
    m_svc.unary<Num, Num>("saturn_test.Calc/Fail", [](const Num&, Num&, grpc::call_context&) -> saturn::task<grpc::status> {
      co_return grpc::status{grpc::status_code::invalid_argument, "bad \xc3\xbcnicode 100%\nline"};
    });
    m_svc.unary<Num, Num>("saturn_test.Calc/Throw",
                          [](const Num&, Num&, grpc::call_context&) -> saturn::task<grpc::status> {
                            throw std::runtime_error("boom");
                            co_return grpc::status::success();
                          });
    m_svc.unary<Num, Num>("saturn_test.Calc/Slow", [](const Num&, Num&, grpc::call_context&) -> saturn::task<grpc::status> {
      auto slept = co_await saturn::sleep_for(3s);
      if (!slept)
        slow_cancelled.fetch_add(1);
      co_return grpc::status::success();
    });
    m_svc.unary<Num, Num>("saturn_test.Calc/Flip", [this](const Num&, Num&, grpc::call_context&) -> saturn::task<grpc::status> {
      const bool serving = m_health.get("saturn_test.Watched") == grpc::health::serving;
      const bool first = m_health.get("saturn_test.Watched") == grpc::health::service_unknown;
      m_health.set("saturn_test.Watched", first || serving ? grpc::health::not_serving : grpc::health::serving);
      co_return grpc::status::success();
    });
    m_svc.server_stream<Num, Num>(
        "saturn_test.Calc/Count", [](const Num& in, grpc::writer<Num>& w, grpc::call_context&) -> saturn::task<grpc::status> {
          for (std::int64_t i = 1; i <= in.value(); ++i) {
            Num n;
            n.set_value(i);
            const bool sent = co_await w.write(n);
            if (!sent)
              co_return grpc::status{grpc::status_code::cancelled, "gone"};
          }
          co_return grpc::status::success();
        });
    m_svc.server_stream<Num, Num>(
        "saturn_test.Calc/Forever", [](const Num&, grpc::writer<Num>& w, grpc::call_context&) -> saturn::task<grpc::status> {
          for (std::int64_t i = 1;; ++i) {
            Num n;
            n.set_value(i);
            const bool sent = co_await w.write(n);
            if (!sent)
              break;
            auto slept = co_await saturn::sleep_for(5ms);
            if (!slept)
              break;
          }
          forever_stopped.fetch_add(1);
          co_return grpc::status{grpc::status_code::cancelled, "stopped"};
        });
    m_svc.client_stream<Num, Num>(
        "saturn_test.Calc/Sum", [](grpc::reader<Num>& r, Num& out, grpc::call_context&) -> saturn::task<grpc::status> {
          std::int64_t sum = 0;
          Num n;
          for (;;) {
            const bool got = co_await r.read(n);
            if (!got)
              break;
            sum += n.value();
          }
          if (!r.status().ok())
            co_return r.status();
          out.set_value(sum);
          co_return grpc::status::success();
        });
    m_health.set("saturn_test.Calc", grpc::health::serving);
    m_health.add_to(m_svc);
    m_svc.mount(m_routes);
    m_server.emplace(m_routes);
    auto l = saturn::net::tcp_listener::bind(saturn::net::address::loopback_v4(0));
    if (!l)
      throw std::runtime_error(l.err().message());
    m_port = l->local_address()->port();
    m_listener.emplace(std::move(*l));
    m_done.emplace(m_pool.spawn(run(*m_server, *m_listener)));
  }
  ~test_server() {
    m_server->stop();
    m_pool.block_on(join(std::move(*m_done)));
  }
  std::uint16_t port() const { return m_port; }
  std::string client(const std::string& c) const {
    auto [out, st] = run_command("timeout 30 /usr/bin/python3 " SATURN_TESTS_DIR "/grpc/grpc_client.py " +
                                 std::to_string(m_port) + " " + c + " 2>&1");
    while (!out.empty() && out.back() == '\n')
      out.pop_back();
    return out;
  }

 private:
  static saturn::task<bool> run(saturn::http::server& s, saturn::net::tcp_listener& l) {
    auto r = co_await s.serve(l);
    co_return r.has_value();
  }
  static saturn::task<bool> join(saturn::join_handle<bool> h) { co_return co_await std::move(h); }

  saturn::thread_pool m_pool;
  grpc::service m_svc;
  grpc::health m_health;
  saturn::http::router m_routes;
  std::optional<saturn::http::server> m_server;
  std::optional<saturn::net::tcp_listener> m_listener;
  std::uint16_t m_port = 0;
  std::optional<saturn::join_handle<bool>> m_done;
};

#define NEED_GRPCIO()  \
  if (!have_grpcio()) \
    GTEST_SKIP() << "python3-grpcio is not installed";

}  // namespace

TEST(grpc_service, unary_with_metadata_and_trailing_metadata) {
  NEED_GRPCIO();
  test_server srv;
  EXPECT_EQ(srv.client("echo"), "hello done:t1");
}

TEST(grpc_service, many_concurrent_calls_on_one_connection) {
  NEED_GRPCIO();
  test_server srv;
  EXPECT_EQ(srv.client("many"), "ok 200");
}

TEST(grpc_service, error_status_and_message_reach_the_client) {
  NEED_GRPCIO();
  test_server srv;
  EXPECT_EQ(srv.client("fail"), "error INVALID_ARGUMENT bad \xc3\xbcnicode 100%\nline");
  EXPECT_EQ(srv.client("throw"), "error UNKNOWN the method threw: boom");
  EXPECT_EQ(srv.client("unknown"), "error UNIMPLEMENTED unknown method /saturn_test.Calc/Nope");
}

TEST(grpc_service, the_deadline_cancels_the_method) {
  NEED_GRPCIO();
  test_server srv;
  const int before = slow_cancelled.load();
  // The client's deadline or the server's (grpc-timeout) fires first: either says so.
  const std::string slow = srv.client("slow");
  EXPECT_EQ(slow.rfind("error DEADLINE_EXCEEDED", 0), 0u) << slow;
  for (int i = 0; i < 200 && slow_cancelled.load() == before; ++i)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(slow_cancelled.load(), before + 1) << "the method slept on after its deadline";
}

TEST(grpc_service, server_streaming_and_a_cancelled_stream) {
  NEED_GRPCIO();
  test_server srv;
  EXPECT_EQ(srv.client("count"), "1 2 3 4 5");
  const int before = forever_stopped.load();
  EXPECT_EQ(srv.client("cancel_stream"), "got 3");
  for (int i = 0; i < 200 && forever_stopped.load() == before; ++i)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(forever_stopped.load(), before + 1) << "the stream's method ran on after the client cancelled";
}

TEST(grpc_service, client_streaming_and_the_message_limit) {
  NEED_GRPCIO();
  test_server srv;
  EXPECT_EQ(srv.client("sum"), "5050");
  const std::string big = srv.client("sum_big");
  EXPECT_EQ(big.rfind("error RESOURCE_EXHAUSTED", 0), 0u) << big;
}

TEST(grpc_service, health_check_and_watch) {
  NEED_GRPCIO();
  test_server srv;
  EXPECT_EQ(srv.client("health"), "1 1");
  // SERVICE_UNKNOWN (3) first, then each change the Flip calls make.
  EXPECT_EQ(srv.client("watch"), "seen 3 2 1");
}

TEST(grpc_service, non_grpc_requests_get_http_answers) {
  if (run_command("command -v curl >/dev/null && echo yes").first != "yes\n")
    GTEST_SKIP() << "curl is not installed";
  test_server srv;
  const std::string base = "http://127.0.0.1:" + std::to_string(srv.port());
  auto code = [&](const std::string& args) {
    return run_command("curl -s -o /dev/null -w '%{http_code}' " + args).first;
  };
  EXPECT_EQ(code("--http2-prior-knowledge -H 'content-type: text/plain' -d x " + base + "/saturn_test.Calc/Echo"), "415");
  EXPECT_EQ(code("--http1.1 -H 'content-type: application/grpc' -d x " + base + "/saturn_test.Calc/Echo"), "505");
  EXPECT_EQ(code("--http2-prior-knowledge -H 'content-type: text/plain' -d x " + base + "/no/such"), "404");
}

TEST(grpc_local, calls_the_method_with_the_objects_themselves) {
  grpc::service svc;
  int calls = 0;
  svc.unary<saturn_test::Num, saturn_test::Num>(
      "saturn_test.Calc/Double",
      [&calls](const saturn_test::Num& in, saturn_test::Num& out, grpc::call_context&) -> saturn::task<grpc::status> {
        ++calls;
        if (in.value() < 0)
          co_return grpc::status{grpc::status_code::out_of_range, "negative"};
        out.set_value(in.value() * 2);
        co_return grpc::status::success();
      });
  grpc::local_method<saturn_test::Num, saturn_test::Num> twice(svc, "/saturn_test.Calc/Double");
  EXPECT_THROW((grpc::local_method<saturn_test::Text, saturn_test::Num>(svc, "saturn_test.Calc/Double")),
               std::invalid_argument);
  EXPECT_THROW((grpc::local_method<saturn_test::Num, saturn_test::Num>(svc, "saturn_test.Calc/Nope")),
               std::invalid_argument);
  saturn::runtime rt;
  auto run = [&]() -> saturn::task<std::string> {
    saturn_test::Num in, out;
    in.set_value(21);
    grpc::status a = co_await twice(in, out);
    std::string got = std::to_string(static_cast<int>(a.code)) + ":" + std::to_string(out.value());
    in.set_value(-1);
    grpc::status b = co_await twice(in, out);
    co_return got + " " + std::string(grpc::status_name(b.code)) + ":" + b.message;
  };
  EXPECT_EQ(rt.block_on(run()), "0:42 OUT_OF_RANGE:negative");
  EXPECT_EQ(calls, 2);
}

TEST(grpc_service, a_libgrpcpp_client) {
#ifndef SATURN_GRPCPP_CLIENT
  GTEST_SKIP() << "built without libgrpc++ (or a sanitizer build): no C++ gRPC client";
#else
  test_server srv;
  auto [out, st] = run_command(std::string(SATURN_GRPCPP_CLIENT) + " " + std::to_string(srv.port()) + " 2>&1");
  EXPECT_EQ(out, "echo 0 from libgrpc++ done:cpp\nslow 4\nfail 3 bad \xc3\xbcnicode 100%\nline\n");
#endif
}

namespace {

/// Calls `svc_port` with saturn's grpc::channel on a pool of its own.
struct channel_calls {
  saturn::thread_pool pool{{.threads = 2, .mode = saturn::pool_mode::io}};
  grpc::channel ch;
  explicit channel_calls(std::uint16_t port) : ch("127.0.0.1:" + std::to_string(port)) {}

  std::string echo(const std::string& s) {
    return pool.block_on([](grpc::channel& c, std::string what) -> saturn::task<std::string> {
      saturn_test::Text in, out;
      in.set_text(what);
      std::vector<std::string> replies;
      std::vector<std::pair<std::string, std::string>> trailers;
      std::vector<std::string> reqs(1);
      in.SerializeToString(&reqs[0]);
      grpc::call_options o;
      o.metadata = {{"x-tag", "ch"}};
      grpc::status st = co_await c.call("saturn_test.Calc/Echo", std::move(reqs), replies, std::move(o), nullptr,
                                        &trailers);
      if (!st.ok() || replies.size() != 1)
        co_return "error " + std::string(grpc::status_name(st.code)) + " " + st.message;
      out.ParseFromString(replies[0]);
      std::string tr;
      for (auto& [k, v] : trailers)
        if (k == "x-trailer")
          tr = v;
      co_return out.text() + " " + tr;
    }(ch, s));
  }
  std::string status_of(const std::string& method, std::optional<std::chrono::nanoseconds> timeout = {}) {
    return pool.block_on([](grpc::channel& c, std::string m, std::optional<std::chrono::nanoseconds> t)
                             -> saturn::task<std::string> {
      saturn_test::Num in, out;
      grpc::call_options o;
      o.timeout = t;
      grpc::status st = co_await c.unary(m, in, out, std::move(o));
      co_return std::string(grpc::status_name(st.code)) + (st.message.empty() ? "" : " " + st.message);
    }(ch, method, timeout));
  }
  std::string count(int n) {
    return pool.block_on([](grpc::channel& c, int upto) -> saturn::task<std::string> {
      saturn_test::Num in;
      in.set_value(upto);
      std::string seen;
      auto each = [&seen](saturn_test::Num& m) {
        seen += std::to_string(m.value()) + " ";
        return true;
      };
      grpc::status st = co_await c.server_stream<saturn_test::Num>("saturn_test.Calc/Count", in, each);
      co_return seen + std::string(grpc::status_name(st.code));
    }(ch, n));
  }
  std::string sum(int n) {
    return pool.block_on([](grpc::channel& c, int count) -> saturn::task<std::string> {
      std::vector<saturn_test::Num> in(static_cast<std::size_t>(count));
      for (int i = 0; i < count; ++i)
        in[static_cast<std::size_t>(i)].set_value(i + 1);
      saturn_test::Num out;
      grpc::status st = co_await c.client_stream("saturn_test.Calc/Sum", std::span<const saturn_test::Num>(in), out);
      co_return std::string(grpc::status_name(st.code)) + " " + std::to_string(out.value());
    }(ch, n));
  }
  int concurrent(int n) {
    return pool.block_on([](grpc::channel& c, int calls) -> saturn::task<int> {
      std::vector<saturn::join_handle<bool>> hs;
      for (int i = 0; i < calls; ++i)
        hs.push_back(saturn::spawn([](grpc::channel& ch2, int k) -> saturn::task<bool> {
          saturn_test::Text in, out;
          in.set_text("c" + std::to_string(k));
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

}  // namespace

TEST(grpc_channel, calls_saturns_own_server) {
  test_server srv;
  channel_calls c(srv.port());
  EXPECT_EQ(c.echo("hi"), "hi done:ch");
  EXPECT_EQ(c.status_of("saturn_test.Calc/Fail"), "INVALID_ARGUMENT bad \xc3\xbcnicode 100%\nline");
  EXPECT_EQ(c.status_of("saturn_test.Calc/Nope"), "UNIMPLEMENTED unknown method /saturn_test.Calc/Nope");
  EXPECT_EQ(c.count(4), "1 2 3 4 OK");
  EXPECT_EQ(c.sum(100), "OK 5050");
  EXPECT_EQ(c.concurrent(300), 300);
  const int before = slow_cancelled.load();
  EXPECT_EQ(c.status_of("saturn_test.Calc/Slow", 200ms), "DEADLINE_EXCEEDED the deadline passed");
  for (int i = 0; i < 200 && slow_cancelled.load() == before; ++i)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(slow_cancelled.load(), before + 1) << "the server's method ran on after the client's deadline";
}

TEST(grpc_channel, an_unreachable_target_is_unavailable) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);  // nobody listens there now
  channel_calls c(ntohs(a.sin_port));
  const std::string st = c.status_of("saturn_test.Calc/Echo");
  EXPECT_EQ(st.rfind("UNAVAILABLE connect 127.0.0.1:", 0), 0u) << st;
}

using grpc_test::child_server;

TEST(grpc_channel, calls_a_libgrpcpp_server) {
#ifndef SATURN_GRPCPP_SERVER
  GTEST_SKIP() << "built without libgrpc++ (or a sanitizer build): no C++ gRPC server";
#else
  child_server server({SATURN_GRPCPP_SERVER});
  ASSERT_GT(server.port(), 0);
  channel_calls c(static_cast<std::uint16_t>(server.port()));
  EXPECT_EQ(c.echo("to libgrpc++"), "to libgrpc++ cpp:ch");
  EXPECT_EQ(c.count(4), "1 2 3 4 OK");
  EXPECT_EQ(c.status_of("saturn_test.Calc/Nope"), "UNIMPLEMENTED no such method");
  EXPECT_EQ(c.concurrent(100), 100);
#endif
}

TEST(grpc_channel, calls_a_python_grpcio_server) {
  NEED_GRPCIO();
  child_server server({"/usr/bin/python3", SATURN_TESTS_DIR "/grpc/grpc_server.py"});
  ASSERT_GT(server.port(), 0);
  channel_calls c(static_cast<std::uint16_t>(server.port()));
  EXPECT_EQ(c.echo("to python"), "to python py:ch");
  EXPECT_EQ(c.count(3), "1 2 3 OK");
  EXPECT_EQ(c.sum(10), "OK 55");
  EXPECT_EQ(c.status_of("saturn_test.Calc/Fail"), "FAILED_PRECONDITION not today");
  EXPECT_EQ(c.concurrent(50), 50);
}
