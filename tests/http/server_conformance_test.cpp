// The server's answers where RFC 9110/9112 say what they must be, checked on the wire:
// 405 with Allow, 501 for unknown methods, 400 and a close for an invalid Host, target or
// chunk size, error answers to HEAD without a body, percent-encoded unreserved characters
// routed like the characters, and OPTIONS * / CONNECT.
#include "http_test_support.hpp"

#include <gtest/gtest.h>

using namespace std::chrono_literals;
using http_test::client;
using http_test::expect_answer_then_close;
using http_test::test_server;

namespace {

using http_test::field;

/// Sends `req`, reads until the server closes, returns all it sent.
std::string answer_then_close(std::uint16_t port, const std::string& req) {
  client c(port);
  c.send(req);
  EXPECT_TRUE(c.read_until_close()) << req.substr(0, 60);
  return c.buffer;
}

}  // namespace

TEST(http_conformance, method_not_allowed_lists_the_allowed_methods) {
  test_server srv;
  client c(srv.port());
  for (const char* m : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT"}) {
    c.send(std::string(m) + " /plaintext HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\n\r\nx");
    auto r = c.read_response();
    ASSERT_TRUE(r) << m;
    EXPECT_EQ(r->status, 405) << m;
    EXPECT_EQ(field(r->head, "Allow"), "GET, HEAD") << m;
  }
  c.send("GET /echo HTTP/1.1\r\nHost: t\r\n\r\nDELETE /seq/1 HTTP/1.1\r\nHost: t\r\n\r\n");
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(field(r->head, "Allow"), "POST");
  r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(field(r->head, "Allow"), "GET, HEAD");
  c.send("GET /plaintext HTTP/1.1\r\nHost: t\r\n\r\n");  // 405 keeps the connection
  r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(field(r->head, "Allow"), "");
}

TEST(http_conformance, unrecognized_methods_are_501) {
  test_server srv;
  client c(srv.port());
  for (const char* m : {"get", "FOO", "Get", "PROPFIND"})
    for (const char* path : {"/plaintext", "/nope"}) {
      c.send(std::string(m) + " " + path + " HTTP/1.1\r\nHost: t\r\n\r\n");
      auto r = c.read_response();
      ASSERT_TRUE(r) << m << " " << path;
      EXPECT_EQ(r->status, 501) << m << " " << path;
    }
  c.send("POST /nope HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n");  // known method, no path
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
}

TEST(http_conformance, invalid_host_is_400_and_close) {
  test_server srv;
  for (const char* h : {"a b", "u@a", "a:xx", "a/b", "[::1", "[::1]x", "[zz::1]", "a:1:2", "a%zz", "a?b", "a#b"})
    expect_answer_then_close(srv.port(), std::string("GET /plaintext HTTP/1.1\r\nHost: ") + h + "\r\n\r\n", 400);
  client c(srv.port());
  for (const char* h : {"", "a", "127.0.0.1", "127.0.0.1:8080", "a:", "[::1]", "[::1]:80", "ex%41mple.com", "x-y.z_~!$&'()*+,;="}) {
    c.send(std::string("GET /plaintext HTTP/1.1\r\nHost: ") + h + "\r\n\r\n");
    auto r = c.read_response();
    ASSERT_TRUE(r) << h;
    EXPECT_EQ(r->status, 200) << "Host: " << h;
  }
}

TEST(http_conformance, error_answers_to_head_have_no_body) {
  saturn::http::server_options o;
  o.limits.max_body = 1024;
  test_server srv(o);
  struct probe {
    std::string req;
    int status;
  };
  std::string fields = "HEAD /plaintext HTTP/1.1\r\nHost: t\r\n";
  while (fields.size() < 9000)
    fields += "X-Filler: " + std::string(100, 'f') + "\r\n";
  for (const probe& p : {probe{"HEAD /plaintext HTTP/1.1\r\n\r\n", 400},
                         probe{"HEAD /plaintext HTTP/1.1\r\nHost: a b\r\n\r\n", 400},
                         probe{"HEAD /plain#x HTTP/1.1\r\nHost: t\r\n\r\n", 400},
                         probe{"HEAD /plaintext HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\n\r\n", 413},
                         probe{"HEAD /" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: t\r\n\r\n", 414},
                         probe{fields + "\r\n", 431},
                         probe{"HEAD /plaintext HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501},
                         probe{"HEAD /plaintext HTTP/2.0\r\nHost: t\r\n\r\n", 505}}) {
    std::string got = answer_then_close(srv.port(), p.req);
    ASSERT_GE(got.size(), 12u) << p.req.substr(0, 60);
    EXPECT_EQ(got.substr(9, 3), std::to_string(p.status)) << p.req.substr(0, 60);
    std::size_t end = got.find("\r\n\r\n");
    ASSERT_NE(end, std::string::npos);
    EXPECT_EQ(end + 4, got.size()) << "a body after the head: " << got;
    EXPECT_NE(field(got, "Content-Length"), "0") << "Content-Length should be the GET answer's";
    EXPECT_EQ(field(got, "Connection"), "close");
  }
  // The same error to a GET carries its body.
  std::string get = answer_then_close(srv.port(), "GET /plaintext HTTP/1.1\r\n\r\n");
  EXPECT_EQ(get.substr(get.find("\r\n\r\n") + 4), "missing Host\n");
}

TEST(http_conformance, invalid_request_targets_are_400_and_close) {
  test_server srv;
  for (const char* t : {"/plain#x", "/plaintext#", "/plain%zz", "/plaintext%", "/plaintext%4", "/p%G1", "/a{b}", "/a|b",
                        "/a\"b", "/a\\b", "/a^b", "/a`b", "/a<b>", "/[a]", "/\x80", "*", "x", "//a#",
                        "http://u@a/plaintext", "http:///plaintext", "ht%74p://a/", "http://a/b#c"})
    expect_answer_then_close(srv.port(), std::string("GET ") + t + " HTTP/1.1\r\nHost: t\r\n\r\n", 400);
  client c(srv.port());
  for (const char* t : {"/plaintext?a=b/c?d%20e", "http://t/plaintext", "http://t:80/plaintext?x", "HTTP://t/plaintext"}) {
    c.send(std::string("GET ") + t + " HTTP/1.1\r\nHost: t\r\n\r\n");
    auto r = c.read_response();
    ASSERT_TRUE(r) << t;
    EXPECT_EQ(r->status, 200) << t;
  }
}

TEST(http_conformance, percent_encoded_unreserved_characters_route_like_themselves) {
  test_server srv;
  client c(srv.port());
  struct probe {
    const char* target;
    int status;
    const char* body;
  };
  for (const probe& p : {probe{"/%70laintext", 200, "Hello, World!"}, probe{"/%70%6C%61%69%6e%74%65%78%74", 200, "Hello, World!"},
                         // "%2F" stays inside its segment for routing; the parameter decodes it.
                         probe{"/seq/%34%32", 200, "42"}, probe{"/seq/a%2fb", 200, "a/b"},
                         probe{"/seq/%7E%2D%2E%5F", 200, "~-._"}, probe{"/%2Fplaintext", 404, "Not Found"},
                         probe{"/plaintext%2F", 404, "Not Found"}, probe{"/seq%2F1", 404, "Not Found"},
                         probe{"/%65cho", 405, "Method Not Allowed"}}) {
    c.send(std::string("GET ") + p.target + " HTTP/1.1\r\nHost: t\r\n\r\n");
    auto r = c.read_response();
    ASSERT_TRUE(r) << p.target;
    EXPECT_EQ(r->status, p.status) << p.target;
    EXPECT_EQ(r->body, p.body) << p.target;
  }
}

TEST(http_conformance, whitespace_after_a_chunk_size_needs_an_extension) {
  test_server srv;
  const std::string head = "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (const char* body : {"5 \r\nhello\r\n0\r\n\r\n", "5\t\r\nhello\r\n0\r\n\r\n", "5;a \r\nhello\r\n0\r\n\r\n",
                           "5;a=b\t\r\nhello\r\n0\r\n\r\n", "5\r\nhello\r\n0 \r\n\r\n"})
    expect_answer_then_close(srv.port(), head + body, 400);
  client c(srv.port());
  c.send(head + "5 ;a\r\nhello\r\n2\t; b = c\r\n!!\r\n0\r\n\r\n");
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello!!");
}

TEST(http_conformance, options_asterisk_and_connect) {
  test_server srv;
  client c(srv.port());
  c.send("OPTIONS * HTTP/1.1\r\nHost: t\r\n\r\n");
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(field(r->head, "Allow"), "GET, HEAD, POST, OPTIONS");
  EXPECT_EQ(field(r->head, "Content-Length"), "0");
  EXPECT_TRUE(r->body.empty());
  c.send("CONNECT t:443 HTTP/1.1\r\nHost: t:443\r\n\r\nCONNECT [::1]:443 HTTP/1.1\r\nHost: t\r\n\r\n");
  for (int i = 0; i < 2; ++i) {
    r = c.read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 501);
  }
  c.send("GET /plaintext HTTP/1.1\r\nHost: t\r\n\r\n");  // still open
  r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  expect_answer_then_close(srv.port(), "GET * HTTP/1.1\r\nHost: t\r\n\r\n", 400);
  expect_answer_then_close(srv.port(), "CONNECT t HTTP/1.1\r\nHost: t\r\n\r\n", 400);
  expect_answer_then_close(srv.port(), "CONNECT u@t:443 HTTP/1.1\r\nHost: t\r\n\r\n", 400);
}
