// http::serve: a whole service in one call — listeners per worker, the short handler
// form with req.params(), stop by token and by SIGTERM, bind errors as values; and the
// response type's owned fields.
#include <saturn/http/serve.hpp>

#include "http_test_support.hpp"

#include <csignal>
#include <future>
#include <thread>

namespace {

using namespace std::chrono_literals;
using saturn::http::request;
using saturn::http::response;

saturn::http::router test_routes() {
  saturn::http::router r;
  r.get("/hello", [](const request&) -> saturn::task<response> { co_return response::text("hello\n"); });
  r.get("/item/{id}", [](const request& req) -> saturn::task<response> {
    std::string body = "{\"id\":\"" + std::string(req.params().get("id")) + "\"}";
    co_return response::json(200, std::move(body));
  });
  r.get("/nothing", [](const request&) -> saturn::task<response> { co_return response::empty(204); });
  r.get("/header", [](const request& req) -> saturn::task<response> {
    response resp = response::text("ok");
    // A value taken from the request must not split the response.
    resp.add_header("X-Echo", std::string(req.header("X-In")) + "\r\nInjected: yes");
    std::string type = "text/x-";
    type += "dynamic";
    resp.content_type = std::move(type);  // owned: the local dies before the send
    co_return resp;
  });
  return r;
}

using http_test::get;

}  // namespace

TEST(http_serve, short_handlers_params_and_owned_fields) {
  saturn::thread_pool pool({.threads = 2, .mode = saturn::pool_mode::io});
  auto routes = test_routes();
  http_test::running srv(pool, routes, false);
  const std::uint16_t port = srv.port();

  auto hello = get(port, "/hello");
  ASSERT_TRUE(hello);
  EXPECT_EQ(hello->status, 200);
  EXPECT_EQ(hello->body, "hello\n");
  EXPECT_NE(hello->head.find("Content-Type: text/plain; charset=utf-8\r\n"), std::string::npos) << hello->head;

  auto item = get(port, "/item/42");
  ASSERT_TRUE(item);
  EXPECT_EQ(item->body, "{\"id\":\"42\"}");
  EXPECT_NE(item->head.find("Content-Type: application/json\r\n"), std::string::npos);

  auto none = get(port, "/nothing");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 204);
  EXPECT_EQ(none->head.find("Content-Length"), std::string::npos) << "RFC 9110 8.6: no Content-Length in a 204";
  EXPECT_EQ(none->head.find("Content-Type"), std::string::npos);

  auto hdr = get(port, "/header", "X-In: abc\r\n");
  ASSERT_TRUE(hdr);
  EXPECT_NE(hdr->head.find("X-Echo: abc  Injected: yes\r\n"), std::string::npos) << hdr->head;
  EXPECT_EQ(hdr->head.find("\r\nInjected:"), std::string::npos) << "a header value split the response";
  EXPECT_NE(hdr->head.find("Content-Type: text/x-dynamic\r\n"), std::string::npos) << hdr->head;

  srv.stop.request_stop();
  ASSERT_EQ(srv.done.wait_for(10s), std::future_status::ready) << "serve() did not return after its stop token";
  auto r = srv.done.get();
  EXPECT_TRUE(r.has_value()) << r.err().message();
}

TEST(http_serve, sigterm_stops_gracefully) {
  saturn::thread_pool pool({.threads = 2, .mode = saturn::pool_mode::io});
  auto routes = test_routes();
  struct sigaction before{};
  ::sigaction(SIGTERM, nullptr, &before);
  {
    http_test::running srv(pool, routes, true);
    const std::uint16_t port = srv.port();
    ASSERT_TRUE(get(port, "/hello"));
    ::kill(::getpid(), SIGTERM);  // the handler serve() installed turns it into a stop
    ASSERT_EQ(srv.done.wait_for(10s), std::future_status::ready) << "SIGTERM did not stop serve()";
    auto r = srv.done.get();
    EXPECT_TRUE(r.has_value()) << r.err().message();
  }
  struct sigaction after{};
  ::sigaction(SIGTERM, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler) << "serve() did not restore the SIGTERM disposition";
}

TEST(http_serve, bind_error_is_a_value) {
  saturn::thread_pool pool({.threads = 2, .mode = saturn::pool_mode::io});
  auto routes = test_routes();
  auto held = saturn::net::tcp_listener::bind(saturn::net::address::loopback_v4(0));
  ASSERT_TRUE(held);
  const std::uint16_t port = held->local_address()->port();
  saturn::http::serve_options o;
  o.stop_on_signals = false;
  auto r = saturn::http::serve(pool, routes, saturn::net::address::loopback_v4(port), o);
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(r.err() == std::errc::address_in_use) << r.err().message();
}

TEST(http_response, add_header_refuses_a_bad_name) {
  response r;
  EXPECT_THROW(r.add_header("Bad Name", "v"), std::invalid_argument);
  EXPECT_THROW(r.add_header("", "v"), std::invalid_argument);
  r.add_header("X-Ok", "v");
  EXPECT_EQ(r.header("x-ok"), "v");
}

TEST(http_response, text_value_owns_what_is_not_a_literal) {
  saturn::http::text_value v;
  {
    std::string s = "application/problem+json";
    v = std::string_view(s);
  }
  EXPECT_EQ(v.view(), "application/problem+json");
  saturn::http::text_value lit = "text/html";
  EXPECT_EQ(lit.view(), "text/html");
  const char* p = "text/css";
  saturn::http::text_value from_ptr(p);  // copied: a pointer is not a literal
  EXPECT_EQ(from_ptr.view(), "text/css");
}
