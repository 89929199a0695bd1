// Middleware: router::wrap order and reach (routes added before and after), the deadline
// middleware's 504 (the late handler is cancelled and has ended), and compression().
#include <saturn/http/middleware.hpp>

#include "http_test_support.hpp"

#include <atomic>

namespace {

using namespace std::chrono_literals;
using saturn::http::handler;
using saturn::http::request;
using saturn::http::response;
using saturn::http::route_params;

std::atomic<int> g_slow_ended{0};

saturn::task<response> slow(const request&) {
  auto s = saturn::sleep_for(10s);
  auto slept = co_await s;
  g_slow_ended.fetch_add(1);
  co_return response::text(slept ? "slept\n" : "cancelled\n");
}

saturn::http::middleware tag(std::string name) {
  return [name](const request& req, const route_params& p, const handler& next) -> saturn::task<response> {
    saturn::task<response> t = next(req, p);
    response r = co_await std::move(t);
    std::string seen(r.header("X-Chain"));
    r.set_header("X-Chain", seen.empty() ? name : seen + "," + name);
    co_return r;
  };
}

using http_test::get;

}  // namespace

TEST(http_middleware, wrap_reaches_every_route_and_the_last_runs_first) {
  saturn::http::router r;
  r.get("/a", [](const request&) -> saturn::task<response> { co_return response::text("a"); });
  r.wrap(tag("inner"));
  r.wrap(tag("outer"));
  r.get("/b", [](const request&) -> saturn::task<response> { co_return response::text("b"); });
  saturn::thread_pool pool({.threads = 2, .mode = saturn::pool_mode::io});
  http_test::running srv(pool, r, false);
  const std::uint16_t port = srv.port();
  for (const char* path : {"/a", "/b"}) {
    auto resp = get(port, path);
    ASSERT_TRUE(resp) << path;
    // inner runs closest to the handler, so it tags the response first.
    EXPECT_NE(resp->head.find("X-Chain: inner,outer\r\n"), std::string::npos) << path << "\n" << resp->head;
  }
}

TEST(http_middleware, deadline_answers_504_and_the_handler_has_ended) {
  saturn::http::router r;
  r.get("/slow", saturn::http::with_deadline(100ms, slow));
  r.get("/fast", saturn::http::with_deadline(5s, [](const request&) -> saturn::task<response> {
          co_return response::text("fast");
        }));
  saturn::thread_pool pool({.threads = 2, .mode = saturn::pool_mode::io});
  http_test::running srv(pool, r, false);
  const std::uint16_t port = srv.port();
  g_slow_ended = 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto late = get(port, "/slow");
  ASSERT_TRUE(late);
  EXPECT_EQ(late->status, 504);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s) << "the deadline did not cut the 10 s sleep short";
  EXPECT_EQ(g_slow_ended.load(), 1) << "the handler was not cancelled and awaited before the 504";
  auto fast = get(port, "/fast");
  ASSERT_TRUE(fast);
  EXPECT_EQ(fast->status, 200);
  EXPECT_EQ(fast->body, "fast");
}

TEST(http_middleware, compression_middleware_follows_accept_encoding) {
  saturn::http::router r;
  r.get("/big", [](const request&) -> saturn::task<response> {
    std::string body;
    for (int i = 0; i < 500; ++i)
      body += "{\"id\":" + std::to_string(i) + ",\"name\":\"item\"},";
    co_return response::json(200, std::move(body));
  });
  r.wrap(saturn::http::compression());
  saturn::thread_pool pool({.threads = 2, .mode = saturn::pool_mode::io});
  http_test::running srv(pool, r, false);
  const std::uint16_t port = srv.port();
  auto gz = get(port, "/big", "Accept-Encoding: gzip\r\n");
  ASSERT_TRUE(gz);
  EXPECT_NE(gz->head.find("Content-Encoding: gzip\r\n"), std::string::npos) << gz->head;
  EXPECT_NE(gz->head.find("Vary: Accept-Encoding\r\n"), std::string::npos);
  auto decoded = saturn::http::decompress(saturn::http::content_coding::gzip, gz->body);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->substr(0, 18), "{\"id\":0,\"name\":\"it");
  auto plain = get(port, "/big");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->head.find("Content-Encoding"), std::string::npos);
  EXPECT_EQ(plain->body, *decoded);
}
