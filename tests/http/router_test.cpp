// router: literal and parameter routes, decoded and typed parameters, 404/405/501 and
// Allow, path normalization (checked against an oracle), order of routes, malformed
// patterns; and the response writer's framing (status line, Server, Date, Content-Length,
// Connection).
#include <saturn/http/router.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <ctime>
#include <random>
#include <string>

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

TEST(http_router, unknown_methods_are_501_and_405_says_what_is_allowed) {
  router r;
  r.get("/plaintext", ok);
  r.get("/items/{id}", ok);
  r.add("DELETE", "/items/{id}", ok);
  r.add("PURGE", "/cache", ok);
  for (const char* m : {"get", "FOO", "Get", "", "PURGEX"}) {
    EXPECT_FALSE(r.recognizes(m)) << m;
    EXPECT_EQ(r.match(m, "/plaintext").status, 501) << m;
    EXPECT_EQ(r.match(m, "/nope").status, 501) << m;
  }
  for (const char* m : {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "PURGE"})
    EXPECT_TRUE(r.recognizes(m)) << m;
  EXPECT_EQ(r.match("PATCH", "/plaintext").status, 405);
  EXPECT_EQ(r.match("PURGE", "/plaintext").status, 405);  // registered elsewhere: known
  EXPECT_EQ(r.match("PURGE", "/cache").status, 200);
  EXPECT_EQ(r.allowed_methods("/plaintext"), "GET, HEAD");
  EXPECT_EQ(r.allowed_methods("/items/7"), "GET, HEAD, DELETE");
  EXPECT_EQ(r.allowed_methods("/cache"), "PURGE");
  EXPECT_EQ(r.allowed_methods("/nope"), "");
  EXPECT_EQ(r.allowed_methods("*"), "GET, HEAD, DELETE, PURGE, OPTIONS");
  router h;  // an explicit HEAD route is listed once
  h.add("HEAD", "/x", ok);
  h.get("/x", ok);
  EXPECT_EQ(h.allowed_methods("/x"), "HEAD, GET");
}

TEST(http_router, normalize_path_decodes_unreserved_escapes_only) {
  std::string scratch;
  std::string_view plain = "/plaintext";
  EXPECT_EQ(saturn::http::normalize_path(plain, scratch).data(), plain.data());  // no '%': no copy
  EXPECT_EQ(saturn::http::normalize_path("/%70laintext", scratch), "/plaintext");
  EXPECT_EQ(saturn::http::normalize_path("/%41%7a%30%2D%2e%5F%7E", scratch), "/Az0-._~");
  EXPECT_EQ(saturn::http::normalize_path("/a%2fb%3F%25%20", scratch), "/a%2Fb%3F%25%20");
  EXPECT_EQ(saturn::http::normalize_path("/%zz%4", scratch), "/%zz%4");  // not escapes: kept
  EXPECT_EQ(saturn::http::normalize_path("%", scratch), "%");
  // Oracle: a path of unreserved bytes, '/' and upper-case reserved escapes, with random
  // unreserved bytes escaped (random hex case), normalizes back to itself.
  std::mt19937_64 rng(99);
  const std::string unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
  const char* kept[] = {"%2F", "%3F", "%25", "%20", "%C3%A9"};
  for (int round = 0; round < 500; ++round) {
    std::string path, escaped;
    for (int i = 0, n = 1 + static_cast<int>(rng() % 30); i < n; ++i) {
      unsigned pick = rng() % 10;
      if (pick == 0) {
        path += '/', escaped += '/';
      } else if (pick == 1) {
        std::string k = kept[rng() % 5];
        path += k;
        escaped += k;
      } else {
        char c = unreserved[rng() % unreserved.size()];
        path += c;
        if (rng() % 2) {
          char hex[4];
          std::snprintf(hex, sizeof hex, rng() % 2 ? "%%%02X" : "%%%02x", static_cast<unsigned char>(c));
          escaped += hex;
        } else {
          escaped += c;
        }
      }
    }
    ASSERT_EQ(saturn::http::normalize_path(escaped, scratch), path) << escaped;
  }
  // Routing sees the normalized path; parameters view it.
  router r;
  r.get("/delay/{ms}", ok);
  auto m = r.match("GET", saturn::http::normalize_path("/d%65lay/%35", scratch));
  ASSERT_NE(m.fn, nullptr);
  EXPECT_EQ(m.params.get("ms"), "5");
}

TEST(http_router, parameters_are_percent_decoded) {
  router r;
  r.get("/user/{name}", ok);
  r.get("/item/{id}/{qty}", ok);
  std::string scratch;
  auto m = r.match("GET", saturn::http::normalize_path("/user/a%20b", scratch));
  ASSERT_NE(m.fn, nullptr);
  EXPECT_EQ(m.params.get("name"), "a b");
  EXPECT_TRUE(m.params.get("name").owns());
  EXPECT_EQ(m.params.raw("name"), "a%20b");
  // "%2F" is one segment for routing, a '/' in the value; '+' is not a space in a path;
  // the normalizer's upper-cased "%25" decodes once.
  m = r.match("GET", saturn::http::normalize_path("/user/a%2fb+c%2541%C3%A9", scratch));
  ASSERT_NE(m.fn, nullptr);
  EXPECT_EQ(m.params.get("name"), "a/b+c%41\xC3\xA9");
  // A plain value is a view into the matched path: no copy.
  std::string_view plain = "/user/alpha";
  m = r.match("GET", plain);
  ASSERT_NE(m.fn, nullptr);
  auto v = m.params.get("name");
  EXPECT_FALSE(v.owns());
  EXPECT_EQ(v.data(), plain.data() + 6);
  EXPECT_TRUE(m.params.has("name"));
  EXPECT_FALSE(m.params.has("nope"));
  EXPECT_EQ(m.params.get("nope"), "");
  EXPECT_EQ(m.params.raw("nope"), "");
}

TEST(http_router, typed_parameters_and_their_errors) {
  router r;
  r.get("/item/{id}/{qty}", ok);
  auto m = r.match("GET", "/item/42/-3");
  ASSERT_NE(m.fn, nullptr);
  EXPECT_EQ(*m.params.get<int>("id"), 42);
  EXPECT_EQ(*m.params.get<long>("qty"), -3);
  EXPECT_DOUBLE_EQ(*m.params.get<double>("id"), 42.0);
  EXPECT_TRUE(m.params.get<unsigned>("qty").err() == std::errc::invalid_argument);
  auto missing = m.params.get<int>("nope");
  ASSERT_FALSE(missing);
  EXPECT_TRUE(missing.err() == std::errc::no_message_available);
  EXPECT_EQ(m.params.describe("nope", missing.err()), "route parameter \"nope\": missing");
  m = r.match("GET", "/item/7x/99999999999");
  ASSERT_NE(m.fn, nullptr);
  auto bad = m.params.get<int>("id");
  ASSERT_FALSE(bad);
  EXPECT_TRUE(bad.err() == std::errc::invalid_argument);
  EXPECT_EQ(m.params.describe("id", bad.err()), "route parameter \"id\": not an integer: \"7x\"");
  auto big = m.params.get<int>("qty");
  ASSERT_FALSE(big);
  EXPECT_TRUE(big.err() == std::errc::result_out_of_range);
  EXPECT_EQ(*m.params.get<long long>("qty"), 99999999999LL);
  // Decoded before it is read: "%31%32" is 12, "1%20" is "1 " (trailing junk).
  std::string scratch;
  m = r.match("GET", saturn::http::normalize_path("/item/%31%32/1%20", scratch));
  ASSERT_NE(m.fn, nullptr);
  EXPECT_EQ(*m.params.get<int>("id"), 12);
  EXPECT_TRUE(m.params.get<int>("qty").err() == std::errc::invalid_argument);
}

TEST(http_router, malformed_patterns_throw) {
  router r;
  EXPECT_THROW(r.get("nope", ok), std::invalid_argument);
  EXPECT_THROW(r.get("/a{b}", ok), std::invalid_argument);
  EXPECT_THROW(r.get("/a/{*rest}/b", ok), std::invalid_argument);  // a catch-all must be last
  EXPECT_THROW(r.get("/a/{*}", ok), std::invalid_argument);        // and have a name
}

TEST(http_router, catch_all_takes_the_rest_of_the_path) {
  router r;
  r.get("/static/{*path}", ok);
  r.get("/u/{id}/files/{*file}", ok);
  r.get("/static-x", ok);
  struct expect_rest {
    const char* path;
    const char* value;
  };
  for (auto [path, value] : {expect_rest{"/static/", ""}, expect_rest{"/static/a.css", "a.css"},
                             expect_rest{"/static/css/site/a.css", "css/site/a.css"},
                             expect_rest{"/static//x/", "/x/"}, expect_rest{"/static/%2E%2E/x", "%2E%2E/x"}}) {
    auto m = r.match("GET", path);
    ASSERT_NE(m.fn, nullptr) << path;
    EXPECT_EQ(m.params.size(), 1u) << path;
    EXPECT_EQ(m.params.raw("path"), value) << path;  // the matched bytes; get() decodes them
  }
  EXPECT_EQ(r.match("GET", "/static/%2E%2E/x").params.get("path").str(), "../x");
  for (const char* p : {"/static", "/staticx/a", "/stati/a", "/"})
    EXPECT_EQ(r.match("GET", p).fn, nullptr) << p;
  EXPECT_NE(r.match("GET", "/static-x").fn, nullptr);
  auto m = r.match("GET", "/u/7/files/a/b");
  ASSERT_NE(m.fn, nullptr);
  EXPECT_EQ(m.params.get("id"), "7");
  EXPECT_EQ(m.params.get("file"), "a/b");
  EXPECT_EQ(r.match("GET", "/u/7/files").fn, nullptr);
  EXPECT_EQ(r.match("GET", "/u//files/a").fn, nullptr);  // a one-segment parameter is never empty
  EXPECT_EQ(r.match("POST", "/static/a").status, 405);
  EXPECT_EQ(r.allowed_methods("/static/a/b"), "GET, HEAD");
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

TEST(router, otherwise_takes_only_what_it_accepts) {
  saturn::http::router r;
  r.get("/a", [](const saturn::http::request&) -> saturn::task<saturn::http::response> {
    co_return saturn::http::response::text("a");
  });
  saturn::http::request plain;
  const saturn::http::route_options* opts = nullptr;
  EXPECT_EQ(r.otherwise_for(plain, &opts), nullptr);  // none set
  r.otherwise([](const saturn::http::request& q) { return q.method == "POST"; },
              [](const saturn::http::request&, const saturn::http::route_params&) -> saturn::task<saturn::http::response> {
                co_return saturn::http::response::text("other");
              },
              {.stream_body = true});
  EXPECT_EQ(r.otherwise_for(plain, &opts), nullptr);  // not accepted: 404 / 405 as before
  EXPECT_EQ(r.match("GET", "/nope").status, 404);
  EXPECT_EQ(r.match("DELETE", "/a").status, 405);
  saturn::http::request post;
  post.method = "POST";
  ASSERT_NE(r.otherwise_for(post, &opts), nullptr);
  ASSERT_NE(opts, nullptr);
  EXPECT_TRUE(opts->stream_body);
}
