// Streamed responses (response::stream) against a real server on 127.0.0.1 with a
// plain-socket client: chunked framing decoded byte for byte, a declared length, HEAD
// (the producer does not run), HTTP/1.0 (close-delimited), and the failures that must end
// the connection instead of completing a wrong response (too few bytes, too many, a
// producer error).
#include "http_test_support.hpp"

#include <saturn/http/router.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <string>

namespace {

using namespace http_test;
using saturn::result;
using saturn::task;
using saturn::http::body_writer;

std::atomic<int> g_runs{0};

std::string line(int i) { return "line " + std::to_string(i) + "\n"; }

std::string lines(int n) {
  std::string s;
  for (int i = 0; i < n; ++i)
    s += line(i);
  return s;
}

task<result<void>> write_lines(body_writer& w, int n, bool fail_half) {
  ++g_runs;
  for (int i = 0; i < n; ++i) {
    if (fail_half && i == n / 2)
      co_return saturn::error{std::make_error_code(std::errc::io_error), "produce"};
    auto wr = w.write(line(i));
    result<void> r = co_await std::move(wr);
    if (!r)
      co_return r;
    if (i % 100 == 99) {
      auto fl = w.flush();
      result<void> f = co_await std::move(fl);
      if (!f)
        co_return f;
    }
  }
  co_return result<void>{};
}

task<response> chunked_lines(const request&) {
  co_return response::stream(200, "text/plain", [](body_writer& w) { return write_lines(w, 5000, false); });
}
task<response> failing_lines(const request&) {
  co_return response::stream(200, "text/plain", [](body_writer& w) { return write_lines(w, 5000, true); });
}
task<response> sized(const request& req) {
  // ?n= bytes written against a declared 3000.
  const std::size_t n = static_cast<std::size_t>(req.query().get<std::int64_t>("n").value());
  co_return response::stream(
      200, "application/octet-stream",
      [n](body_writer& w) -> task<result<void>> {
        ++g_runs;
        std::string piece(1000, 'x');
        for (std::size_t done = 0; done < n; done += 1000) {
          auto wr = w.write(std::string_view(piece).substr(0, std::min<std::size_t>(1000, n - done)));
          result<void> r = co_await std::move(wr);
          if (!r)
            co_return r;
        }
        co_return result<void>{};
      },
      3000);
}

/// Decodes a chunked body off the front of `buf`; nullopt while incomplete.
std::optional<std::string> dechunk(const std::string& buf, std::size_t from) {
  std::string out;
  std::size_t p = from;
  for (;;) {
    std::size_t e = buf.find("\r\n", p);
    if (e == std::string::npos)
      return std::nullopt;
    std::size_t n = std::stoul(buf.substr(p, e - p), nullptr, 16);
    p = e + 2;
    if (n == 0)
      return buf.compare(p, 2, "\r\n") == 0 ? std::optional<std::string>(out) : std::nullopt;
    if (buf.size() < p + n + 2)
      return std::nullopt;
    out.append(buf, p, n);
    p += n + 2;
  }
}

class response_stream_test : public ::testing::Test {
 protected:
  response_stream_test() : pool({.threads = 2, .mode = saturn::pool_mode::io}) {
    routes.get("/lines", chunked_lines);
    routes.get("/failing", failing_lines);
    routes.get("/sized", sized);
    routes.get("/plaintext", plaintext);
    g_runs = 0;
  }
  saturn::thread_pool pool;
  saturn::http::router routes;
};

TEST_F(response_stream_test, chunked_body_arrives_whole_and_the_connection_stays) {
  running srv(pool, routes, false);
  client c(srv.port());
  c.send("GET /lines HTTP/1.1\r\nHost: t\r\n\r\n");
  std::optional<std::string> body;
  std::size_t head_end = std::string::npos;
  while (!body) {
    ASSERT_TRUE(c.read_some(std::chrono::milliseconds(5000)));
    ASSERT_FALSE(c.eof);
    head_end = c.buffer.find("\r\n\r\n");
    if (head_end != std::string::npos)
      body = dechunk(c.buffer, head_end + 4);
  }
  const std::string head = c.buffer.substr(0, head_end);
  EXPECT_NE(head.find("Transfer-Encoding: chunked"), std::string::npos) << head;
  EXPECT_EQ(head.find("Content-Length"), std::string::npos) << head;
  EXPECT_EQ(*body, lines(5000));
  c.buffer.clear();
  c.send("GET /plaintext HTTP/1.1\r\nHost: t\r\n\r\n");
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "Hello, World!");
}

TEST_F(response_stream_test, declared_length_is_sent_as_content_length) {
  running srv(pool, routes, false);
  client c(srv.port());
  c.send("GET /sized?n=3000 HTTP/1.1\r\nHost: t\r\n\r\nGET /plaintext HTTP/1.1\r\nHost: t\r\n\r\n");
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_NE(r->head.find("Content-Length: 3000"), std::string::npos) << r->head;
  EXPECT_EQ(r->body, std::string(3000, 'x'));
  auto r2 = c.read_response();
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->body, "Hello, World!");
}

TEST_F(response_stream_test, too_few_bytes_end_the_connection) {
  running srv(pool, routes, false);
  client c(srv.port());
  c.send("GET /sized?n=2000 HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(c.read_until_close());
  std::size_t e = c.buffer.find("\r\n\r\n");
  ASSERT_NE(e, std::string::npos);
  EXPECT_EQ(c.buffer.size() - e - 4, 2000u);  // short of the declared 3000: the client can tell
}

TEST_F(response_stream_test, too_many_bytes_fail_the_write_and_end_the_connection) {
  running srv(pool, routes, false);
  client c(srv.port());
  c.send("GET /sized?n=5000 HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(c.read_until_close());
  std::size_t e = c.buffer.find("\r\n\r\n");
  ASSERT_NE(e, std::string::npos);
  EXPECT_EQ(c.buffer.size() - e - 4, 3000u);  // never more than declared
}

TEST_F(response_stream_test, producer_error_leaves_the_chunked_body_unterminated) {
  running srv(pool, routes, false);
  client c(srv.port());
  c.send("GET /failing HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(c.read_until_close());
  std::size_t e = c.buffer.find("\r\n\r\n");
  ASSERT_NE(e, std::string::npos);
  EXPECT_FALSE(dechunk(c.buffer, e + 4)) << "a failed body must not look complete";
}

TEST_F(response_stream_test, head_sends_the_head_and_does_not_run_the_producer) {
  running srv(pool, routes, false);
  client c(srv.port());
  c.send("HEAD /sized?n=3000 HTTP/1.1\r\nHost: t\r\n\r\nGET /plaintext HTTP/1.1\r\nHost: t\r\n\r\n");
  while (c.buffer.find("Hello, World!") == std::string::npos)
    ASSERT_TRUE(c.read_some(std::chrono::milliseconds(5000)));
  EXPECT_NE(c.buffer.find("Content-Length: 3000\r\n"), std::string::npos);
  EXPECT_EQ(c.buffer.find("xxx"), std::string::npos);
  EXPECT_EQ(g_runs.load(), 0);
}

TEST_F(response_stream_test, http10_body_is_delimited_by_the_close) {
  running srv(pool, routes, false);
  client c(srv.port());
  c.send("GET /lines HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(c.read_until_close());
  std::size_t e = c.buffer.find("\r\n\r\n");
  ASSERT_NE(e, std::string::npos);
  const std::string head = c.buffer.substr(0, e);
  EXPECT_EQ(head.find("chunked"), std::string::npos) << head;
  EXPECT_NE(head.find("Connection: close"), std::string::npos) << head;
  EXPECT_EQ(c.buffer.substr(e + 4), lines(5000));
}

}  // namespace
