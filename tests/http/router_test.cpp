// router: literal and parameter routes, 404/405, order of routes, malformed patterns; and
// the response writer's framing (status line, Server, Date, Content-Length, Connection).
#include <saturn/http/router.hpp>

#include <gtest/gtest.h>

#include <ctime>

using saturn::http::response;
using saturn::http::route_params;
using saturn::http::router;

namespace {
saturn::task<response> ok(const saturn::http::request&, const route_params&) { co_return response(200, "text/plain", "ok"); }
}  // namespace

TEST(http_router, literal_and_parameter_routes) {
  router r;
  r.get("/plaintext", ok);
  r.get("/delay/{ms}", ok);
  r.add("POST", "/users/{id}/posts/{post}", ok);
  EXPECT_EQ(r.match("GET", "/plaintext").status, 200);
  EXPECT_NE(r.match("GET", "/plaintext").fn, nullptr);
  auto m = r.match("GET", "/delay/10");
  ASSERT_NE(m.fn, nullptr);
  EXPECT_EQ(m.params.get("ms"), "10");
  EXPECT_EQ(m.params.get("nope"), "");
  m = r.match("POST", "/users/7/posts/abc");
  ASSERT_NE(m.fn, nullptr);
  EXPECT_EQ(m.params.get("id"), "7");
  EXPECT_EQ(m.params.get("post"), "abc");
  EXPECT_EQ(m.params.size(), 2u);
}

TEST(http_router, misses_are_404_and_wrong_method_405) {
  router r;
  r.get("/plaintext", ok);
  r.get("/delay/{ms}", ok);
  for (const char* p : {"/", "/plaintext/", "/plaintextx", "/delay", "/delay/", "/delay/1/2", "/Plaintext", ""})
    EXPECT_EQ(r.match("GET", p).fn, nullptr) << p;
  EXPECT_EQ(r.match("GET", "/nothing").status, 404);
  EXPECT_EQ(r.match("POST", "/plaintext").status, 405);
  EXPECT_EQ(r.match("HEAD", "/plaintext").status, 200);  // GET routes serve HEAD
}

TEST(http_router, first_added_route_wins) {
  router r;
  int which = 0;
  r.get("/a/{x}", [&which](const saturn::http::request& q, const route_params& p) { which = 1; return ok(q, p); });
  r.get("/a/b", [&which](const saturn::http::request& q, const route_params& p) { which = 2; return ok(q, p); });
  auto m = r.match("GET", "/a/b");
  ASSERT_NE(m.fn, nullptr);
  saturn::http::request req;
  auto t = (*m.fn)(req, m.params);
  EXPECT_EQ(which, 1);
}

TEST(http_router, malformed_patterns_throw) {
  router r;
  EXPECT_THROW(r.get("nope", ok), std::invalid_argument);
  EXPECT_THROW(r.get("/a{b}", ok), std::invalid_argument);
}

TEST(http_writer, framing_fields) {
  std::string out;
  saturn::http::write_response(out, response(200, "text/plain", "Hello, World!"), {}, "saturn");
  const std::string head = "HTTP/1.1 200 OK\r\nServer: saturn\r\nDate: ";
  ASSERT_EQ(out.substr(0, head.size()), head);
  std::string date = out.substr(head.size(), 29);
  std::tm tm{};
  const char* end = strptime(date.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  ASSERT_NE(end, nullptr) << date;
  EXPECT_EQ(*end, '\0');
  EXPECT_EQ(out.substr(head.size() + 29),
            "\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!");
  out.clear();
  auto r = response::with_static_body(404, "text/plain", "");
  r.add_header("X-A", "b");
  saturn::http::write_response(out, r, {.keep_alive = false}, "s");
  EXPECT_NE(out.find("HTTP/1.1 404 Not Found\r\n"), std::string::npos);
  EXPECT_NE(out.find("\r\nContent-Length: 0\r\nConnection: close\r\nX-A: b\r\n\r\n"), std::string::npos) << out;
  out.clear();
  saturn::http::write_response(out, response(200, "text/plain", "abc"), {.keep_alive = true, .version_minor = 0, .head = true}, "s");
  EXPECT_NE(out.find("Content-Length: 3\r\nConnection: keep-alive\r\n\r\n"), std::string::npos);
  EXPECT_EQ(out.substr(out.size() - 4), "\r\n\r\n");  // HEAD: no body
}

TEST(http_writer, date_matches_the_clock) {
  std::time_t before = std::time(nullptr);
  std::string d(saturn::http::http_date());
  std::time_t after = std::time(nullptr);
  std::tm tm{};
  ASSERT_NE(strptime(d.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm), nullptr) << d;
  std::time_t t = timegm(&tm);
  EXPECT_GE(t, before - 1);
  EXPECT_LE(t, after);
}
