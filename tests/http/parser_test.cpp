// request_parser: every RFC 9112 rule the parser enforces (Host and request-target
// grammar included; uri_test.cpp checks the URI pieces alone), pipelining, and a randomized
// split of a valid stream into arbitrary chunks that must yield the same requests as the
// whole stream parsed at once (the oracle).
#include <saturn/http/parser.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

using saturn::http::parse_status;
using saturn::http::parser_limits;
using saturn::http::request_parser;

namespace {

/// A parsed request copied out of the buffer (for comparing parses).
struct parsed {
  std::string method, target, path, query, body;
  std::vector<std::pair<std::string, std::string>> headers;
  int minor = 0;
  bool keep_alive = false;
  bool operator==(const parsed&) const = default;
};

parsed copy(const saturn::http::request& r) {
  parsed p{std::string(r.method), std::string(r.target), std::string(r.path), std::string(r.raw_query),
           std::string(r.body().view()), {}, r.version_minor, r.keep_alive};
  for (auto& h : r.headers())
    p.headers.emplace_back(std::string(h.name), std::string(h.value));
  return p;
}

/// Parses a whole buffer: the requests, and the error status (0 if none) that ended it.
struct outcome {
  std::vector<parsed> requests;
  int error = 0;
  bool incomplete_tail = false;
};

outcome parse_all(std::string s, parser_limits limits = {}) {
  outcome o;
  request_parser p(limits);
  std::size_t off = 0;
  for (;;) {
    parse_status st = p.parse(s.data() + off, s.size() - off);
    if (st == parse_status::complete) {
      o.requests.push_back(copy(p.get()));
      off += p.consumed();
      p.reset();
      if (off == s.size())
        return o;
    } else if (st == parse_status::error) {
      o.error = p.error_status();
      return o;
    } else {
      o.incomplete_tail = true;
      return o;
    }
  }
}

/// Feeds `s` in the chunks given by `cuts` the way a connection does: a buffer that grows
/// by appending and drops each completed request from its front.
outcome parse_chunked(const std::string& s, const std::vector<std::size_t>& cuts, parser_limits limits = {}) {
  outcome o;
  request_parser p(limits);
  std::string buf;
  std::size_t fed = 0;
  auto feed_to = [&](std::size_t end) {
    buf.append(s, fed, end - fed);
    fed = end;
    for (;;) {
      parse_status st = p.parse(buf.data(), buf.size());
      if (st == parse_status::complete) {
        o.requests.push_back(copy(p.get()));
        buf.erase(0, p.consumed());
        p.reset();
        if (buf.empty())
          return true;
      } else if (st == parse_status::error) {
        o.error = p.error_status();
        return false;
      } else {
        return true;
      }
    }
  };
  for (std::size_t c : cuts)
    if (!feed_to(c))
      return o;
  if (feed_to(s.size()))
    o.incomplete_tail = !buf.empty();
  return o;
}

int status_of(const std::string& s, parser_limits limits = {}) { return parse_all(s, limits).error; }

}  // namespace

TEST(http_parser, simple_get) {
  auto o = parse_all("GET /plaintext?x=1 HTTP/1.1\r\nHost: a\r\nAccept: */*  \r\n\r\n");
  ASSERT_EQ(o.requests.size(), 1u);
  auto& r = o.requests[0];
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.target, "/plaintext?x=1");
  EXPECT_EQ(r.path, "/plaintext");
  EXPECT_EQ(r.query, "x=1");
  EXPECT_EQ(r.minor, 1);
  EXPECT_TRUE(r.keep_alive);
  ASSERT_EQ(r.headers.size(), 2u);
  EXPECT_EQ(r.headers[1].second, "*/*");
}

TEST(http_parser, views_point_into_the_buffer) {
  std::string s = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
  request_parser p;
  ASSERT_EQ(p.parse(s.data(), s.size()), parse_status::complete);
  EXPECT_EQ(p.get().path.data(), s.data() + 4);
  EXPECT_EQ(p.consumed(), s.size());
}

TEST(http_parser, keep_alive_defaults_and_connection_header) {
  EXPECT_FALSE(parse_all("GET / HTTP/1.0\r\n\r\n").requests.at(0).keep_alive);
  EXPECT_TRUE(parse_all("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").requests.at(0).keep_alive);
  EXPECT_TRUE(parse_all("GET / HTTP/1.1\r\nHost: a\r\n\r\n").requests.at(0).keep_alive);
  EXPECT_FALSE(parse_all("GET / HTTP/1.1\r\nHost: a\r\nConnection: Close\r\n\r\n").requests.at(0).keep_alive);
  EXPECT_FALSE(parse_all("GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, close\r\n\r\n").requests.at(0).keep_alive);
  EXPECT_FALSE(parse_all("GET / HTTP/1.0\r\nConnection: close\r\nConnection: keep-alive\r\n\r\n").requests.at(0).keep_alive);
}

TEST(http_parser, bare_lf_ends_header_lines_and_leading_empty_lines_are_skipped) {
  auto o = parse_all("\r\n\nGET /x HTTP/1.1\nHost: a\n\n");
  ASSERT_EQ(o.requests.size(), 1u);
  EXPECT_EQ(o.requests[0].path, "/x");
  EXPECT_EQ(o.requests[0].headers.at(0).second, "a");
}

TEST(http_parser, content_length_body) {
  auto o = parse_all("POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: a\r\n\r\n");
  ASSERT_EQ(o.requests.size(), 2u);
  EXPECT_EQ(o.requests[0].body, "hello");
  EXPECT_EQ(o.requests[1].method, "GET");
  EXPECT_EQ(parse_all("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\nContent-Length: 5\r\n\r\nhello").requests.at(0).body, "hello");
}

TEST(http_parser, bad_content_length_is_400) {
  for (const char* cl : {"abc", "5a", "-1", "+5", "", "5 5", "99999999999999999999999", "18446744073709551616",
                         "0x10", "5, 6"})
    EXPECT_EQ(status_of(std::string("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: ") + cl + "\r\n\r\n"), 400) << cl;
  EXPECT_EQ(status_of("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"), 400);
}

TEST(http_parser, smuggling_shapes_are_400) {
  EXPECT_EQ(status_of("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(status_of("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, identity\r\n\r\n"), 400);
  EXPECT_EQ(status_of("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"), 400);
  EXPECT_EQ(status_of("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n"), 400);
  EXPECT_EQ(status_of("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(status_of("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n"), 400);
  EXPECT_EQ(status_of("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"), 501);
  // RFC 9112 §7: chunked defines no parameters, and their presence SHOULD be an error.
  EXPECT_EQ(status_of("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked;x=1\r\n\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(status_of("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked ; q=0\r\n\r\n0\r\n\r\n"), 400);
}

TEST(http_parser, malformed_syntax_is_400) {
  for (const char* s : {"GET  / HTTP/1.1\r\nHost: a\r\n\r\n", "GET / HTTP/1.1 \r\nHost: a\r\n\r\n",
                        "GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n", "G(T / HTTP/1.1\r\nHost: a\r\n\r\n",
                        "GET / HTTX/1.1\r\nHost: a\r\n\r\n", "GET / HTTP/1.1\r\nHost a\r\n\r\n",
                        "GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n",
                        "GET / HTTP/1.1\r\nHo\rst: a\r\n\r\n", "GET / HTTP/1.1\r\n: a\r\nHost: a\r\n\r\n",
                        "GET / HTTP/1.1\r\nHost: a\x7f\r\n\r\n", "GET / HTTP/1.1\r\r\nHost: a\r\n\r\n",
                        "GET x HTTP/1.1\r\nHost: a\r\n\r\n", "GET / HTTP/1.1\r\n\tHost: a\r\n\r\n",
                        "GET / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
                        "GET / HTTP/1.1\r\nHost: a\r\n\r\r\n", "GET / HTTP/1.1\r\nHost: a\r\n\rX"})
    EXPECT_EQ(status_of(s), 400) << s;
  EXPECT_EQ(status_of("GET / HTTP/2.0\r\nHost: a\r\n\r\n"), 505);
}

TEST(http_parser, head_over_8k_is_431_or_414_for_the_request_line) {
  // The request line alone is over the limit: 414 for its target, 501 for a method longer
  // than any implemented (RFC 9112 §3), with or without its line end.
  std::string line = "GET /" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: a\r\n\r\n";
  EXPECT_EQ(status_of(line), 414);
  EXPECT_EQ(status_of("GET /" + std::string(9000, 'a')), 414);  // no line end yet, already too long
  EXPECT_EQ(status_of(std::string(9000, 'G') + " / HTTP/1.1\r\n\r\n"), 501);
  EXPECT_EQ(status_of("GET /" + std::string(8000, 'a') + " HTTP/1.1\r\nHost: " + std::string(400, 'h') + "\r\n\r\n"), 431);
  std::string fields = "GET / HTTP/1.1\r\nHost: a\r\n";
  for (int i = 0; i < 200; ++i)
    fields += "X-Filler-" + std::to_string(i) + ": " + std::string(40, 'v') + "\r\n";
  EXPECT_EQ(status_of(fields + "\r\n"), 431);
  EXPECT_EQ(status_of(fields), 431);
  std::string many = "GET / HTTP/1.1\r\nHost: a\r\n";
  for (int i = 0; i < 120; ++i)
    many += "X: 1\r\n";
  EXPECT_EQ(status_of(many + "\r\n"), 431);
  // Exactly at the limit is accepted.
  std::string head = "GET / HTTP/1.1\r\nHost: a\r\nX: ";
  std::string exact = head + std::string(8192 - head.size() - 4, 'z') + "\r\n\r\n";
  ASSERT_EQ(exact.size(), 8192u);
  EXPECT_EQ(parse_all(exact).requests.size(), 1u);
}

TEST(http_parser, body_over_max_is_413) {
  parser_limits l;
  l.max_body = 10;
  EXPECT_EQ(status_of("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n", l), 413);
  EXPECT_EQ(status_of("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n3\r\n", l), 413);
  EXPECT_EQ(parse_all("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789", l).requests.size(), 1u);
}

TEST(http_parser, chunked_body_is_decoded_in_place) {
  std::string s = "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip;q=1 , Chunked\r\n\r\n";
  EXPECT_EQ(status_of(s), 501);
  s = "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;name=val;quoted=\"a \\\" b\"\r\nhello\r\n1 ; x\r\n \r\nA\r\n0123456789\r\n0\r\nTrailer: t\r\n\r\n"
      "GET /next HTTP/1.1\r\nHost: a\r\n\r\n";
  auto o = parse_all(s);
  ASSERT_EQ(o.requests.size(), 2u);
  EXPECT_EQ(o.requests[0].body, "hello 0123456789");
  EXPECT_EQ(o.requests[1].path, "/next");
}

TEST(http_parser, invalid_chunks_are_400) {
  std::string h = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (const char* body : {"g\r\n", "\r\n", "5\nhello\r\n0\r\n\r\n", "5\r\nhelloXX0\r\n\r\n", "5;\r\nhello\r\n",
                           "5;a=\r\nhello\r\n", "5;a=\"x\r\n", "5 x\r\n", "11111111111111111\r\n",
                           "-5\r\n", "0x5\r\n", "0\r\nbad trailer\r\n\r\n", "0\r\n\r\r\n",
                           "5\r\nhello\r\n0\r\nT: v\n\r\n", "5 \r\nhello\r\n0\r\n\r\n", "5\t\r\n",
                           "5;a \r\n", "5;a=b \r\n", "5;a=\"b\" \r\n", "0 \r\n\r\n"})
    EXPECT_EQ(status_of(h + body), 400) << body;
  // BWS is fine where the grammar puts it: around ';' and '='.
  EXPECT_EQ(parse_all(h + "5 ;a\r\nhello\r\n1\t;\tb = \"c\" ; d\r\n!\r\n0\r\n\r\n").requests.at(0).body, "hello!");
}

// The reason names what is wrong: a size followed by something that cannot start an
// extension is a bad size; a bad extension after a good size is a bad extension.
TEST(http_parser, malformed_chunk_sizes_are_named_as_sizes) {
  const std::string h = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  auto reason_of = [&](const char* body) {
    request_parser p;
    std::string s = h + body;  // decoded in place: the parser writes into it
    EXPECT_EQ(p.parse(s.data(), s.size()), parse_status::error) << body;
    return std::string(p.error_reason());
  };
  for (const char* body : {"5x\r\n", "0x5\r\n", "-5\r\n", "g\r\n", "5=1\r\n"})
    EXPECT_EQ(reason_of(body), "invalid chunk size") << body;
  for (const char* body : {"5;\r\n", "5 x\r\n", "5;a=\"x\r\n"})
    EXPECT_EQ(reason_of(body), "invalid chunk extension") << body;
}

TEST(http_parser, obs_fold_and_space_before_colon_rejected) {
  EXPECT_EQ(status_of("GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n 2\r\n\r\n"), 400);
  EXPECT_EQ(status_of("GET / HTTP/1.1\r\nHost : a\r\n\r\n"), 400);
}

TEST(http_parser, absolute_form_target_gives_its_path) {
  auto o = parse_all("GET http://example.com/a/b?q HTTP/1.1\r\nHost: example.com\r\n\r\n");
  ASSERT_EQ(o.requests.size(), 1u);
  EXPECT_EQ(o.requests[0].path, "/a/b");
  EXPECT_EQ(o.requests[0].query, "q");
  // No path: "/" (RFC 9112 §3.2.1), and a '/' in the query is not the path's.
  o = parse_all("GET http://example.com?x=/a HTTP/1.1\r\nHost: example.com\r\n\r\n");
  ASSERT_EQ(o.requests.size(), 1u);
  EXPECT_EQ(o.requests[0].path, "/");
  EXPECT_EQ(o.requests[0].query, "x=/a");
  EXPECT_EQ(parse_all("GET https://[::1]:8443 HTTP/1.1\r\nHost: a\r\n\r\n").requests.at(0).path, "/");
}

TEST(http_parser, host_must_be_a_valid_authority) {
  for (const char* h : {"a b", "u@a", "a:xx", "a/b", "a:1:2", "[::1", "[::1]x", "[::1]:x", "[1::2::3]", "[::g]",
                        "a%2", "a%zz", "a?b", "a#b", "a\"b", "[v.x]", "[v1.]", "a\x80"})
    EXPECT_EQ(status_of(std::string("GET / HTTP/1.1\r\nHost: ") + h + "\r\n\r\n"), 400) << h;
  for (const char* h : {"", "a", "a:", ":80", "a:8080", "127.0.0.1", "[::1]", "[::1]:80", "[1:2:3:4:5:6:7:8]",
                        "[::ffff:1.2.3.4]", "[v1.fe:x]", "ex%41mple.com", "a-b.c_d~e", "!$&'()*+,;="})
    EXPECT_EQ(parse_all(std::string("GET / HTTP/1.1\r\nHost: ") + h + "\r\n\r\n").requests.size(), 1u) << h;
  // HTTP/1.0 need not send Host, but a Host it sends is checked.
  EXPECT_EQ(status_of("GET / HTTP/1.0\r\nHost: a b\r\n\r\n"), 400);
}

TEST(http_parser, request_target_must_fit_its_form) {
  for (const char* t : {"/a#b", "/a#", "/%zz", "/a%", "/a%4", "/a%4g", "/{}", "/a|b", "/a\"b", "/a\\b", "/a^b",
                        "/a`b", "/<a>", "/[a]", "/\x80", "/\xff", "/a?b#c", "*", "*x", "x", "a:80", "http:/a",
                        "http://", "http://u@a/", "http://:80/", "http://a b/", "1http://a/", "http://a/%x",
                        "http://a/#"})
    EXPECT_EQ(status_of(std::string("GET ") + t + " HTTP/1.1\r\nHost: a\r\n\r\n"), 400) << t;
  for (const char* t : {"/", "/a/b;c=d", "/a?b?c/d", "/%41%2f", "/-._~!$&'()*+,;=:@", "http://a", "h+t.t-p://a:1/b?c"})
    EXPECT_EQ(parse_all(std::string("GET ") + t + " HTTP/1.1\r\nHost: a\r\n\r\n").requests.size(), 1u) << t;
  // asterisk-form with OPTIONS only; authority-form with CONNECT only.
  auto o = parse_all("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n");
  ASSERT_EQ(o.requests.size(), 1u);
  EXPECT_EQ(o.requests[0].path, "*");
  o = parse_all("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
  ASSERT_EQ(o.requests.size(), 1u);
  EXPECT_EQ(o.requests[0].path, "example.com:443");
  EXPECT_EQ(parse_all("CONNECT [::1]:443 HTTP/1.1\r\nHost: a\r\n\r\n").requests.size(), 1u);
  for (const char* t : {"example.com", "u@example.com:443", "example.com:443/x", "[::1]"})
    EXPECT_EQ(status_of(std::string("CONNECT ") + t + " HTTP/1.1\r\nHost: a\r\n\r\n"), 400) << t;
}

TEST(http_parser, an_error_remembers_whether_the_request_was_head) {
  auto head_after = [](std::string s) {
    request_parser p;
    EXPECT_EQ(p.parse(s.data(), s.size()), parse_status::error) << s.substr(0, 40);
    return std::pair{p.head_request(), p.error_status()};
  };
  EXPECT_EQ(head_after("HEAD / HTTP/1.1\r\n\r\n"), (std::pair{true, 400}));
  EXPECT_EQ(head_after("GET / HTTP/1.1\r\n\r\n"), (std::pair{false, 400}));
  EXPECT_EQ(head_after("HEAD /# HTTP/1.1\r\nHost: a\r\n\r\n"), (std::pair{true, 400}));
  EXPECT_EQ(head_after("HEAD / HTTP/3.0\r\nHost: a\r\n\r\n"), (std::pair{true, 505}));
  EXPECT_EQ(head_after("HEAD / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999\r\n\r\n"), (std::pair{true, 413}));
  EXPECT_EQ(head_after("HEAD / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: br, chunked\r\n\r\n"), (std::pair{true, 501}));
  // Over-long before the request line was parsed: known from the first bytes.
  EXPECT_EQ(head_after("\r\nHEAD /" + std::string(9000, 'a')), (std::pair{true, 414}));
  EXPECT_EQ(head_after("HEADX /" + std::string(9000, 'a')), (std::pair{false, 414}));
  EXPECT_EQ(head_after("GET /" + std::string(9000, 'a')), (std::pair{false, 414}));
  EXPECT_EQ(head_after("HEAD/ HTTP/1.1\r\nHost: a\r\n\r\n"), (std::pair{false, 400}));
  request_parser p;
  std::string s = "HEAD / HTTP/1.1\r\nHost: a\r\n\r\n";
  ASSERT_EQ(p.parse(s.data(), s.size()), parse_status::complete);
  EXPECT_TRUE(p.head_request());
  p.reset();
  EXPECT_FALSE(p.head_request());
}

TEST(http_parser, pipelined_requests_parse_in_order) {
  std::string s;
  for (int i = 0; i < 100; ++i)
    s += "GET /r" + std::to_string(i) + " HTTP/1.1\r\nHost: a\r\n\r\n";
  auto o = parse_all(s);
  ASSERT_EQ(o.requests.size(), 100u);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(o.requests[static_cast<std::size_t>(i)].path, "/r" + std::to_string(i));
}

TEST(http_parser, incomplete_input_waits) {
  std::string s = "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nab";
  auto o = parse_all(s);
  EXPECT_TRUE(o.incomplete_tail);
  EXPECT_EQ(o.error, 0);
  EXPECT_TRUE(o.requests.empty());
}

TEST(http_parser, random_splits_give_the_same_parse) {
  std::mt19937_64 rng(12345);
  std::vector<std::string> pieces = {
      "GET /plaintext HTTP/1.1\r\nHost: localhost\r\nAccept: text/plain\r\n\r\n",
      "POST /x?y HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world",
      "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;e=\"v\"\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nT: 1\r\n\r\n",
      "\r\nGET /lf HTTP/1.1\nHost: b\nX:  spaced  \n\n",
      "GET /old HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
  };
  for (int round = 0; round < 300; ++round) {
    std::string stream;
    int n = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i)
      stream += pieces[rng() % pieces.size()];
    outcome whole = parse_all(stream);
    ASSERT_EQ(whole.error, 0);
    ASSERT_EQ(whole.requests.size(), static_cast<std::size_t>(n));
    std::vector<std::size_t> cuts;
    int k = static_cast<int>(rng() % 20);
    for (int i = 0; i < k; ++i)
      cuts.push_back(rng() % stream.size());
    if (round % 10 == 0)  // byte by byte
      for (std::size_t i = 1; i < stream.size(); ++i)
        cuts.push_back(i);
    std::sort(cuts.begin(), cuts.end());
    outcome split = parse_chunked(stream, cuts);
    EXPECT_EQ(split.error, 0);
    EXPECT_FALSE(split.incomplete_tail);
    ASSERT_EQ(split.requests.size(), whole.requests.size());
    for (std::size_t i = 0; i < whole.requests.size(); ++i)
      EXPECT_EQ(split.requests[i], whole.requests[i]) << "round " << round << " request " << i;
  }
}

TEST(http_parser, random_splits_report_the_same_error) {
  std::mt19937_64 rng(777);
  std::vector<std::pair<std::string, int>> bad = {
      {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX", 400},
      {"GET / HTTP/1.1\r\nHost: a\r\n\tfold\r\n\r\n", 400},
      {"GET /" + std::string(9000, 'q') + " HTTP/1.1\r\n\r\n", 414},
      {"GET / HTTP/1.1\r\nHost: a\r\nX: " + std::string(9000, 'q') + "\r\n\r\n", 431},
  };
  for (auto& [s, status] : bad)
    for (int round = 0; round < 50; ++round) {
      std::vector<std::size_t> cuts;
      for (int i = 0; i < 5; ++i)
        cuts.push_back(rng() % s.size());
      std::sort(cuts.begin(), cuts.end());
      EXPECT_EQ(parse_chunked(s, cuts).error, status);
    }
}

TEST(http_parser, expect_continue_is_reported_until_sent) {
  std::string s = "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n";
  request_parser p;
  EXPECT_EQ(p.parse(s.data(), s.size()), parse_status::incomplete);
  EXPECT_TRUE(p.head_complete());
  EXPECT_TRUE(p.expects_continue());
  p.continue_sent();
  EXPECT_FALSE(p.expects_continue());
  s += "abc";
  EXPECT_EQ(p.parse(s.data(), s.size()), parse_status::complete);
  request_parser q;  // HTTP/1.0 and body-less requests never get a 100
  std::string t = "POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n";
  q.parse(t.data(), t.size());
  EXPECT_FALSE(q.expects_continue());
}
