// buffered_reader over TCP and Unix streams: lines split across many small sends (checked
// against std::getline), CRLF and LF, a delimiter split across two recvs, records longer
// than the limit, end of stream mid-line, read_exact across chunks, leftover bytes, the
// stream's read timeout and a per-call deadline, and cancellation through the stop token.
#include "net_util.hpp"

#include <saturn/net/buffered_reader.hpp>
#include <saturn/task/join_handle.hpp>
#include <saturn/task/time.hpp>

#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <string>
#include <string_view>

using namespace net_test;
using saturn::result;
using saturn::runtime;
using namespace std::chrono_literals;

namespace {

using net_test::bytes_of;

// Random lines (some empty, some long), ended by LF or CRLF; the last one unterminated
// when `partial_tail`.
std::string random_text(std::uint32_t seed, int lines, bool partial_tail) {
  std::mt19937 rng(seed);
  std::string out;
  for (int i = 0; i < lines; ++i) {
    const int len = static_cast<int>(rng() % 8 == 0 ? rng() % 1500 : rng() % 40);
    for (int j = 0; j < len; ++j)
      out += static_cast<char>('a' + rng() % 26);
    out += rng() % 2 == 0 ? "\n" : "\r\n";
  }
  if (partial_tail)
    out += "tail without newline";
  return out;
}

// The oracle: std::getline, with a trailing CR of a terminated line removed.
std::vector<std::string> getline_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!in.eof() && !line.empty() && line.back() == '\r')
      line.pop_back();
    out.push_back(line);
  }
  return out;
}

// Sends `text` in random chunks of 1..max_chunk bytes, then half-closes.
template <class S>
task<void> send_in_chunks(S* s, const std::string* text, std::uint32_t seed, std::size_t max_chunk) {
  std::mt19937 rng(seed);
  std::size_t at = 0;
  while (at < text->size()) {
    const std::size_t n = std::min<std::size_t>(1 + rng() % max_chunk, text->size() - at);
    auto tx = s->send(bytes_of(std::string_view(*text).substr(at, n)));
    auto w = co_await tx;
    CO_ASSERT_OK(w);
    at += n;
  }
  auto sh = co_await s->shutdown();
  CO_ASSERT_OK(sh);
}

// Lets other tasks on this (single-threaded) runtime run until they wait on the ring.
task<void> let_others_run() {
  for (int i = 0; i < 4; ++i) {
    auto n = co_await saturn::nop();
    (void)n;
  }
}

template <class S>
task<void> lines_match_getline(S* writer, S* reader, std::uint32_t seed) {
  const std::string text = random_text(seed, 400, seed % 2 == 0);
  const std::vector<std::string> want = getline_lines(text);
  saturn::task_context& root = co_await saturn::this_task::context();
  auto sender = saturn::spawn_in(root, send_in_chunks(writer, &text, seed, 7));
  net::buffered_reader_options o;
  o.initial_size = 16;  // grows many times on the long lines
  net::buffered_reader r(*reader, o);
  std::vector<std::string> got;
  for (;;) {
    auto line = co_await r.read_line();
    CO_ASSERT_OK(line);
    if (!*line)
      break;
    got.emplace_back(**line);
  }
  co_await sender;
  EXPECT_TRUE(r.eof());
  EXPECT_EQ(got.size(), want.size());
  EXPECT_EQ(got, want);
  // After the end, the end again.
  auto again = co_await r.read_line();
  CO_ASSERT_OK(again);
  EXPECT_FALSE(again->has_value());
}

}  // namespace

TEST(BufferedReader, TcpLinesAcrossSmallSendsMatchGetline) {
  runtime rt;
  rt.block_on([]() -> task<> {
    for (std::uint32_t seed = 1; seed <= 2; ++seed) {
      auto p = co_await connect_tcp_pair();
      CO_ASSERT_OK(p);
      co_await lines_match_getline<net::tcp_stream>(&p->client, &p->server, seed);
    }
  }());
}

TEST(BufferedReader, UnixLinesAcrossSmallSendsMatchGetline) {
  runtime rt;
  rt.block_on([]() -> task<> {
    for (std::uint32_t seed = 3; seed <= 4; ++seed) {
      auto p = net::unix_stream::pair();
      CO_ASSERT_OK(p);
      co_await lines_match_getline<net::unix_stream>(&p->first, &p->second, seed);
    }
  }());
}

TEST(BufferedReader, DelimiterSplitAcrossTwoRecvs) {
  runtime rt;
  rt.block_on([]() -> task<> {
    auto p = net::unix_stream::pair();
    CO_ASSERT_OK(p);
    auto& [w, rd] = *p;
    net::buffered_reader r(rd);
    std::string got;
    bool done = false;
    saturn::task_context& root = co_await saturn::this_task::context();
    auto tx1 = w.send(bytes_of("GET / HTTP/1.1\r\nHost: x\r\n\r"));
    auto w1 = co_await tx1;
    CO_ASSERT_OK(w1);
    // The reader takes the first part and waits, mid-delimiter, for more.
    auto reader = saturn::spawn_in(root, [](net::buffered_reader<net::unix_stream>* br, std::string* out,
                                            bool* fin) -> task<void> {
      auto head = co_await br->read_until("\r\n\r\n");
      CO_ASSERT_OK(head);
      CO_ASSERT_TRUE(head->has_value());
      *out = std::string(**head);
      *fin = true;
    }(&r, &got, &done));
    co_await let_others_run();
    EXPECT_FALSE(done);
    auto tx2 = w.send(bytes_of("\nbody"));
    auto w2 = co_await tx2;
    CO_ASSERT_OK(w2);
    co_await reader;
    EXPECT_EQ(got, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");  // the delimiter is included
    // What follows the delimiter stays buffered (or arrives with the next read).
    auto body = co_await r.read_exact(4);
    CO_ASSERT_OK(body);
    EXPECT_EQ(*body, "body");
    EXPECT_TRUE(r.buffered().empty());
  }());
}

TEST(BufferedReader, LineLongerThanMaxFailsAndLeavesTheBytes) {
  runtime rt;
  rt.block_on([]() -> task<> {
    auto p = net::unix_stream::pair();
    CO_ASSERT_OK(p);
    auto& [w, rd] = *p;
    const std::string text = "short\n" + std::string(100, 'x') + "\nafter\n";
    auto tx = w.send(bytes_of(text));
    auto sent = co_await tx;
    CO_ASSERT_OK(sent);
    net::buffered_reader_options o;
    o.initial_size = 8;
    o.max_size = 64;
    net::buffered_reader r(rd, o);
    auto a = co_await r.read_line();
    CO_ASSERT_OK(a);
    EXPECT_EQ(a->value_or("?"), "short");
    auto b = co_await r.read_line();
    CO_ASSERT_TRUE(!b.has_value());
    EXPECT_EQ(b.err(), std::errc::message_size) << b.err().message();
    EXPECT_STREQ(b.err().operation, "read_line (line longer than max)");
    // Nothing consumed: the same call fails the same way, the long line's start is buffered.
    auto b2 = co_await r.read_line();
    CO_ASSERT_TRUE(!b2.has_value());
    const std::string_view held = r.buffered();
    CO_ASSERT_TRUE(!held.empty() && held.size() <= 64);
    EXPECT_EQ(held, std::string(held.size(), 'x'));
    // Skipping what is held resumes inside the long line, then the next line comes whole.
    const std::size_t skipped = held.size();
    r.consume(skipped);
    auto rest = co_await r.read_line();
    CO_ASSERT_OK(rest);
    EXPECT_EQ(rest->value_or("?"), std::string(100 - skipped, 'x'));
    auto c = co_await r.read_line();
    CO_ASSERT_OK(c);
    EXPECT_EQ(c->value_or("?"), "after");
  }());
}

TEST(BufferedReader, ExplicitMaxIsExactForLinesAndRecords) {
  runtime rt;
  rt.block_on([]() -> task<> {
    auto p = net::unix_stream::pair();
    CO_ASSERT_OK(p);
    auto& [w, rd] = *p;
    // 10 bytes + CRLF fits max 10; 11 bytes does not; read_until counts the delimiter.
    auto tx = w.send(bytes_of("0123456789\r\n0123456789a\nabcd;abcde;"));
    auto sent = co_await tx;
    CO_ASSERT_OK(sent);
    net::buffered_reader r(rd);
    auto a = co_await r.read_line(10);
    CO_ASSERT_OK(a);
    EXPECT_EQ(a->value_or("?"), "0123456789");
    auto b = co_await r.read_line(10);
    CO_ASSERT_TRUE(!b.has_value());
    EXPECT_EQ(b.err(), std::errc::message_size);
    r.consume(12);  // "0123456789a\n"
    auto c = co_await r.read_until(';', 5);
    CO_ASSERT_OK(c);
    EXPECT_EQ(c->value_or("?"), "abcd;");
    auto d = co_await r.read_until(';', 5);
    CO_ASSERT_TRUE(!d.has_value());
    EXPECT_EQ(d.err(), std::errc::message_size);
    EXPECT_STREQ(d.err().operation, "read_until (record longer than max)");
    EXPECT_EQ(r.buffered(), "abcde;");
  }());
}

TEST(BufferedReader, EndOfStreamMidLineGivesThePartialLineThenTheEnd) {
  runtime rt;
  rt.block_on([]() -> task<> {
    auto p = co_await connect_tcp_pair();
    CO_ASSERT_OK(p);
    auto tx = p->client.send(bytes_of("a\r\nb\npartial"));
    auto sent = co_await tx;
    CO_ASSERT_OK(sent);
    auto sh = co_await p->client.shutdown();
    CO_ASSERT_OK(sh);
    net::buffered_reader r(p->server);
    std::vector<std::string> got;
    for (;;) {
      auto line = co_await r.read_line();
      CO_ASSERT_OK(line);
      if (!*line)
        break;
      got.emplace_back(**line);
    }
    EXPECT_EQ(got, (std::vector<std::string>{"a", "b", "partial"}));
    auto more = co_await r.read_until(';');
    CO_ASSERT_OK(more);
    EXPECT_FALSE(more->has_value());
    auto some = co_await r.read_some();
    CO_ASSERT_OK(some);
    EXPECT_TRUE(some->empty());
  }());
}

TEST(BufferedReader, ReadUntilAtEndReturnsTheRecordWithoutItsDelimiter) {
  runtime rt;
  rt.block_on([]() -> task<> {
    auto p = net::unix_stream::pair();
    CO_ASSERT_OK(p);
    auto& [w, rd] = *p;
    auto tx = w.send(bytes_of("one;two"));
    auto sent = co_await tx;
    CO_ASSERT_OK(sent);
    auto sh = co_await w.shutdown();
    CO_ASSERT_OK(sh);
    net::buffered_reader r(rd);
    auto a = co_await r.read_until(';');
    CO_ASSERT_OK(a);
    EXPECT_EQ(a->value_or("?"), "one;");
    auto b = co_await r.read_until(';');
    CO_ASSERT_OK(b);
    EXPECT_EQ(b->value_or("?"), "two");  // no ';': the stream ended
    auto c = co_await r.read_until(';');
    CO_ASSERT_OK(c);
    EXPECT_FALSE(c->has_value());
  }());
}

TEST(BufferedReader, ReadExactAcrossChunks) {
  runtime rt;
  rt.block_on([]() -> task<> {
    auto p = co_await connect_tcp_pair();
    CO_ASSERT_OK(p);
    const auto bytes = pattern(10007, 11);
    const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    saturn::task_context& root = co_await saturn::this_task::context();
    auto sender = saturn::spawn_in(root, send_in_chunks(&p->client, &text, 5, 300));
    net::buffered_reader_options o;
    o.initial_size = 64;
    o.max_size = 4096;
    net::buffered_reader r(p->server, o);
    std::string got;
    for (std::size_t n : {1u, 999u, 4096u, 3000u, 1900u}) {
      auto chunk = co_await r.read_exact(n);
      CO_ASSERT_OK(chunk);
      CO_ASSERT_TRUE(chunk->size() == n);
      got += *chunk;
    }
    auto big = co_await r.read_exact(4097);
    CO_ASSERT_TRUE(!big.has_value());
    EXPECT_EQ(big.err(), std::errc::message_size);
    // 11 bytes remain; asking for 12 meets the end and keeps the 11.
    auto tail = co_await r.read_exact(12);
    CO_ASSERT_TRUE(!tail.has_value());
    EXPECT_EQ(tail.err(), std::errc::no_message_available) << tail.err().message();
    EXPECT_STREQ(tail.err().operation, "read_exact (end of stream)");
    got += r.buffered();
    EXPECT_EQ(got, text);
    co_await sender;
  }());
}

TEST(BufferedReader, ReadSomeAndLeftoverBytes) {
  runtime rt;
  rt.block_on([]() -> task<> {
    auto p = net::unix_stream::pair();
    CO_ASSERT_OK(p);
    auto& [w, rd] = *p;
    auto tx = w.send(bytes_of("HEAD\r\n\r\nbody-bytes"));
    auto sent = co_await tx;
    CO_ASSERT_OK(sent);
    auto sh = co_await w.shutdown();
    CO_ASSERT_OK(sh);
    net::buffered_reader r(rd);
    auto head = co_await r.read_until("\r\n\r\n");
    CO_ASSERT_OK(head);
    EXPECT_EQ(head->value_or("?"), "HEAD\r\n\r\n");
    // The rest: first what is buffered, then recvs, until the empty view at the end.
    std::string rest(r.buffered());
    r.consume(rest.size());
    for (;;) {
      auto some = co_await r.read_some();
      CO_ASSERT_OK(some);
      if (some->empty())
        break;
      rest += *some;
    }
    EXPECT_EQ(rest, "body-bytes");
  }());
}

TEST(BufferedReader, IdlePeerTimesOutAndTheReaderCarriesOn) {
  runtime rt;
  rt.block_on([]() -> task<> {
    auto p = co_await connect_tcp_pair();
    CO_ASSERT_OK(p);
    p->server.set_read_timeout(30ms);
    net::buffered_reader r(p->server);
    auto tx = p->client.send(bytes_of("par"));
    auto sent = co_await tx;
    CO_ASSERT_OK(sent);
    // The peer goes quiet mid-line: the stream's read timeout ends the read.
    auto a = co_await r.read_line();
    CO_ASSERT_TRUE(!a.has_value());
    EXPECT_EQ(a.err(), std::errc::timed_out) << a.err().message();
    EXPECT_STREQ(a.err().operation, "recv (read timeout)");
    EXPECT_EQ(r.buffered(), "par");
    // A per-call deadline (with_timeout) on a stream without a read timeout.
    p->server.set_read_timeout(0ms);
    auto b = co_await saturn::with_timeout(30ms, r.read_line());
    CO_ASSERT_TRUE(!b.has_value());
    EXPECT_EQ(b.err(), std::errc::timed_out) << b.err().message();
    EXPECT_EQ(r.buffered(), "par");
    // Then the rest of the line comes and the line is whole.
    auto tx2 = p->client.send(bytes_of("tial\nnext\n"));
    auto sent2 = co_await tx2;
    CO_ASSERT_OK(sent2);
    auto c = co_await r.read_line();
    CO_ASSERT_OK(c);
    EXPECT_EQ(c->value_or("?"), "partial");
    auto d = co_await r.read_line();
    CO_ASSERT_OK(d);
    EXPECT_EQ(d->value_or("?"), "next");
  }());
}

TEST(BufferedReader, StopTokenCancelsAReadAndKeepsItsBytes) {
  runtime rt;
  rt.block_on([]() -> task<> {
    auto p = net::unix_stream::pair();
    CO_ASSERT_OK(p);
    auto& [w, rd] = *p;
    net::buffered_reader r(rd);
    auto tx = w.send(bytes_of("abc"));
    auto sent = co_await tx;
    CO_ASSERT_OK(sent);
    saturn::error inner{};
    auto timed = co_await saturn::with_timeout(
        20ms, [](net::buffered_reader<net::unix_stream>* br, saturn::error* e) -> task<result<std::size_t>> {
          auto line = co_await br->read_line();
          if (!line) {
            *e = line.err();
            co_return line.err();
          }
          co_return std::size_t{0};
        }(&r, &inner));
    CO_ASSERT_TRUE(!timed.has_value());
    EXPECT_EQ(inner, std::errc::operation_canceled) << inner.message();
    EXPECT_EQ(r.buffered(), "abc");
    auto tx2 = w.send(bytes_of("def\n"));
    auto sent2 = co_await tx2;
    CO_ASSERT_OK(sent2);
    auto line = co_await r.read_line();
    CO_ASSERT_OK(line);
    EXPECT_EQ(line->value_or("?"), "abcdef");
  }());
}
