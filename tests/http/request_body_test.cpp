// Streamed request bodies (route_options::stream_body) against a real server on
// 127.0.0.1, with a plain-socket client: Content-Length and chunked, read / read_all /
// next_piece, the window bound, 413 before and during the body, 100-continue only when the
// handler reads, pipelining after a streamed body, a client that aborts mid-body, and
// buffered routes on the same router.
#include "http_test_support.hpp"

#include <saturn/http/router.hpp>
#include <saturn/task/runtime.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <string>

namespace {

using namespace http_test;
using saturn::task;
using saturn::http::route_options;

std::atomic<std::size_t> g_max_piece{0};
std::atomic<int> g_calls{0};
std::atomic<int> g_errors{0};

/// Reads the body 1000 bytes at a time: "<bytes>:<sum of bytes mod 2^32>".
task<response> count(const request& req) {
  ++g_calls;
  std::uint64_t n = 0;
  std::uint32_t sum = 0;
  char buf[1000];
  for (;;) {
    auto r = req.body().read(buf);
    auto got = co_await std::move(r);
    if (!got) {
      ++g_errors;
      co_return response(got.err() == std::errc::message_size ? 413 : 400, "text/plain", got.err().message());
    }
    if (*got == 0)
      break;
    for (std::size_t i = 0; i < *got; ++i)
      sum += static_cast<unsigned char>(buf[i]);
    n += *got;
  }
  co_return response(200, "text/plain", std::to_string(n) + ":" + std::to_string(sum));
}

/// Takes the pieces as the connection holds them, recording the largest.
task<response> pieces(const request& req) {
  std::uint64_t n = 0;
  for (;;) {
    auto r = req.body().next_piece();
    auto got = co_await std::move(r);
    if (!got)
      co_return response(400, "text/plain", got.err().message());
    if (got->empty())
      break;
    std::size_t seen = g_max_piece.load();
    while (got->size() > seen && !g_max_piece.compare_exchange_weak(seen, got->size())) {
    }
    n += got->size();
  }
  co_return response(200, "text/plain", std::string(req.params().get("name")) + ":" + std::to_string(n));
}

/// read_all with a 100-byte limit: the body back, or 413.
task<response> all(const request& req) {
  auto r = req.body().read_all(100);
  auto got = co_await std::move(r);
  if (!got)
    co_return response(got.err() == std::errc::message_size ? 413 : 400, "text/plain", "");
  co_return response(200, "text/plain", std::move(*got));
}

/// Answers without reading the body.
task<response> reject(const request&) {
  ++g_calls;
  co_return response(401, "text/plain", "no");
}

std::string body_pattern(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i)
    s[i] = static_cast<char>('a' + (i * 7) % 26);
  return s;
}

std::string sum_of(const std::string& s) {
  std::uint32_t sum = 0;
  for (char c : s)
    sum += static_cast<unsigned char>(c);
  return std::to_string(s.size()) + ":" + std::to_string(sum);
}

std::string post(const std::string& path, const std::string& body, const std::string& extra = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra +
         "\r\n" + body;
}

std::string chunked(const std::string& path, const std::string& body, std::size_t chunk) {
  std::string s = "POST " + path + " HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n";
  char hex[32];
  for (std::size_t off = 0; off < body.size(); off += chunk) {
    std::size_t n = std::min(chunk, body.size() - off);
    std::snprintf(hex, sizeof hex, "%zx\r\n", n);
    s += hex;
    s.append(body, off, n);
    s += "\r\n";
  }
  return s + "0\r\n\r\n";
}

class request_body_test : public ::testing::Test {
 protected:
  request_body_test() : pool({.threads = 2, .mode = saturn::pool_mode::io}) {
    routes.post("/count", count, {.stream_body = true, .max_body = 64 << 20});
    routes.post("/small", count, {.stream_body = true, .max_body = 1000});
    routes.post("/pieces/{name}", pieces, {.stream_body = true, .max_body = 64 << 20, .window = 16 * 1024});
    routes.post("/all", all, {.stream_body = true});
    routes.post("/reject", reject, {.stream_body = true});
    routes.post("/buffered", echo);
    routes.get("/plaintext", plaintext);
    g_max_piece = 0;
    g_calls = 0;
    g_errors = 0;
  }
  saturn::thread_pool pool;
  saturn::http::router routes;
};

TEST_F(request_body_test, content_length_body_streams_in_full) {
  running srv(pool, routes, false);
  client c(srv.port());
  std::string body = body_pattern(5 << 20);
  c.send(post("/count", body));
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, sum_of(body));
  // Kept alive: the next request on the same connection is served.
  c.send("GET /plaintext HTTP/1.1\r\nHost: t\r\n\r\n");
  auto r2 = c.read_response();
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->status, 200);
}

TEST_F(request_body_test, chunked_body_streams_decoded) {
  running srv(pool, routes, false);
  client c(srv.port());
  std::string body = body_pattern(300000);
  c.send(chunked("/count", body, 777));
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, sum_of(body));
}

TEST_F(request_body_test, pieces_stay_within_the_window_and_params_survive) {
  running srv(pool, routes, false);
  client c(srv.port());
  std::string body = body_pattern(4 << 20);
  c.send(post("/pieces/up%20load", body));
  auto r = c.read_response(std::chrono::milliseconds(20000));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "up load:" + std::to_string(body.size()));
  EXPECT_GT(g_max_piece.load(), 0u);
  EXPECT_LE(g_max_piece.load(), 16u * 1024 + 1024 + 64);
}

TEST_F(request_body_test, declared_length_over_the_limit_is_413_before_the_handler) {
  running srv(pool, routes, false);
  expect_answer_then_close(srv.port(), post("/small", std::string(1001, 'x')), 413);
  EXPECT_EQ(g_calls.load(), 0);
}

TEST_F(request_body_test, chunked_body_over_the_limit_fails_the_read_and_closes) {
  running srv(pool, routes, false);
  expect_answer_then_close(srv.port(), chunked("/small", std::string(5000, 'x'), 300), 413);
  EXPECT_EQ(g_errors.load(), 1);
}

TEST_F(request_body_test, broken_chunk_framing_fails_the_read_with_bad_message) {
  running srv(pool, routes, false);
  expect_answer_then_close(
      srv.port(), "POST /count HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n", 400);
}

TEST_F(request_body_test, read_all_returns_the_body_or_message_size) {
  running srv(pool, routes, false);
  const std::uint16_t port = srv.port();
  client c(port);
  c.send(post("/all", "hello world"));
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello world");
  // The whole body arrived and was decoded: the 413 leaves the connection usable.
  c.send(post("/all", std::string(101, 'y')));
  auto r2 = c.read_response();
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->status, 413);
  // A body larger than one read, refused after its first pieces: the rest was never
  // read, so the connection closes after the answer.
  expect_answer_then_close(port, post("/all", std::string(300000, 'y')), 413);
}

TEST_F(request_body_test, continue_is_sent_when_the_handler_reads) {
  running srv(pool, routes, false);
  client c(srv.port());
  std::string body = body_pattern(10000);
  c.send("POST /count HTTP/1.1\r\nHost: t\r\nContent-Length: 10000\r\nExpect: 100-continue\r\n\r\n");
  while (c.buffer.find("\r\n\r\n") == std::string::npos)
    ASSERT_TRUE(c.read_some(std::chrono::milliseconds(5000))) << "no 100 Continue";
  ASSERT_EQ(c.buffer.rfind("HTTP/1.1 100 Continue\r\n\r\n", 0), 0u) << c.buffer;
  c.buffer.erase(0, 25);
  c.send(body);
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, sum_of(body));
}

TEST_F(request_body_test, handler_that_answers_without_reading_sends_no_continue_and_closes) {
  running srv(pool, routes, false);
  client c(srv.port());
  c.send("POST /reject HTTP/1.1\r\nHost: t\r\nContent-Length: 10000\r\nExpect: 100-continue\r\n\r\n");
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_NE(r->head.find("Connection: close"), std::string::npos);
  EXPECT_EQ(r->head.find("100 Continue"), std::string::npos);
}

TEST_F(request_body_test, pipelined_requests_after_streamed_bodies_are_answered_in_order) {
  running srv(pool, routes, false);
  client c(srv.port());
  std::string a = body_pattern(70000), b = body_pattern(123);
  c.send(post("/count", a) + chunked("/count", b, 50) + "GET /plaintext HTTP/1.1\r\nHost: t\r\n\r\n" +
         post("/buffered", "buf"));
  auto r1 = c.read_response();
  auto r2 = c.read_response();
  auto r3 = c.read_response();
  auto r4 = c.read_response();
  ASSERT_TRUE(r1 && r2 && r3 && r4);
  EXPECT_EQ(r1->body, sum_of(a));
  EXPECT_EQ(r2->body, sum_of(b));
  EXPECT_EQ(r3->body, "Hello, World!");
  EXPECT_EQ(r4->body, "buf");
}

TEST_F(request_body_test, buffered_route_on_a_streaming_router_still_buffers) {
  running srv(pool, routes, false);
  client c(srv.port());
  c.send(chunked("/buffered", "chunked and buffered", 4));
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "chunked and buffered");
}

TEST_F(request_body_test, client_aborting_mid_body_fails_the_read_and_others_are_served) {
  running srv(pool, routes, false);
  const std::uint16_t port = srv.port();
  {
    client c(port);
    c.send("POST /count HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\n\r\n" + body_pattern(5000));
  }  // closed with 995000 bytes missing
  for (int i = 0; i < 200 && g_errors.load() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(g_errors.load(), 1);
  client c2(port);
  c2.send(post("/count", "abc"));
  auto r = c2.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, sum_of("abc"));
}

TEST(request_body_buffered, read_and_next_piece_work_on_a_buffered_view) {
  saturn::http::request_parser p;
  std::string raw = "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello";
  ASSERT_EQ(p.parse(raw.data(), raw.size()), saturn::http::parse_status::complete);
  const request& req = p.get();
  EXPECT_EQ(req.body().view(), "hello");
  EXPECT_FALSE(req.body().streamed());
  ASSERT_TRUE(req.body().length());
  EXPECT_EQ(*req.body().length(), 5u);
  saturn::runtime rt;
  auto got = rt.block_on([](const request& r) -> task<std::string> {
    char b[3];
    std::string out;
    for (;;) {
      auto rd = r.body().read(b);
      auto n = co_await std::move(rd);
      if (!n || *n == 0)
        break;
      out.append(b, *n);
    }
    co_return out;
  }(req));
  EXPECT_EQ(got, "hello");
}

}  // namespace
