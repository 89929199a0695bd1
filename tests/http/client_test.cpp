// http::client against real servers: saturn's own (keep-alive reuse, the per-host cap
// under 64 concurrent requests, large and streamed request bodies, timeouts), Python's
// http.server (HTTP/1.0, close-delimited), and a scripted server on a plain socket that
// sends exact bytes (chunked with extensions and trailers one byte per write, 1xx
// interim answers, Connection: close, a server closing an idle pooled connection,
// truncation, malformed heads, gzip and br bodies, redirects).
#include <gtest/gtest.h>
#include <saturn/http/client.hpp>
#include <saturn/http/compression.hpp>
#include <saturn/saturn.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "http/http_test_support.hpp"

namespace {

using namespace std::chrono_literals;
using saturn::result;
using saturn::task;
namespace http = saturn::http;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// A server on a plain blocking socket that runs `script(fd, request_no)` for each request
/// it reads (a head up to the blank line, plus a Content-Length body), on each accepted
/// connection in turn. The script writes the exact answer bytes, or returns false to
/// close the connection.
class scripted_server {
 public:
  using script = std::function<bool(int fd, int n, const std::string& request)>;
  explicit scripted_server(script s) : m_script(std::move(s)) {
    m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(m_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(m_fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(m_fd, 64);
    socklen_t len = sizeof a;
    ::getsockname(m_fd, reinterpret_cast<sockaddr*>(&a), &len);
    m_port = ntohs(a.sin_port);
    m_thread = std::thread([this] { run(); });
  }
  ~scripted_server() {
    m_stop = true;
    ::shutdown(m_fd, SHUT_RDWR);
    m_thread.join();
    {
      std::lock_guard lock(m_mu);
      for (int c : m_open)
        ::shutdown(c, SHUT_RDWR);  // wakes a connection thread blocked in read
    }
    for (auto& t : m_conn_threads)
      t.join();
    ::close(m_fd);
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(m_port) + path; }
  int connections() const { return m_conns.load(); }
  int requests() const { return m_requests.load(); }

 private:
  void run() {
    while (!m_stop) {
      const int c = ::accept4(m_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0)
        return;
      m_conns.fetch_add(1);
      std::lock_guard lock(m_mu);
      m_open.push_back(c);
      m_conn_threads.emplace_back([this, c] { serve(c); });  // a thread per connection
    }
  }
  void serve(int c) {
    std::string in;
    char buf[65536];
    bool open = true;
    while (open) {
      std::size_t head_end;
      while ((head_end = in.find("\r\n\r\n")) == std::string::npos) {
        const ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) {
          open = false;
          break;
        }
        in.append(buf, static_cast<std::size_t>(n));
      }
      if (!open)
        break;
      std::size_t body = 0;
      if (const auto cl = in.find("Content-Length: "); cl != std::string::npos && cl < head_end)
        body = std::stoul(in.substr(cl + 16));
      while (in.size() < head_end + 4 + body) {
        const ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0)
          break;
        in.append(buf, static_cast<std::size_t>(n));
      }
      const std::string req = in.substr(0, head_end + 4 + body);
      in.erase(0, req.size());
      open = m_script(c, m_requests.fetch_add(1), req);
    }
    std::lock_guard lock(m_mu);
    std::erase(m_open, c);
    ::close(c);
  }
  std::mutex m_mu;
  std::vector<int> m_open;
  std::vector<std::thread> m_conn_threads;
  script m_script;
  int m_fd = -1;
  std::uint16_t m_port = 0;
  std::atomic<bool> m_stop{false};
  std::atomic<int> m_conns{0}, m_requests{0};
  std::thread m_thread;
};

void write_all(int fd, std::string_view s) {
  while (!s.empty()) {
    const ssize_t n = ::write(fd, s.data(), s.size());
    if (n <= 0)
      return;
    s.remove_prefix(static_cast<std::size_t>(n));
  }
}

using http_test::make_req;

saturn::http::server_options big_bodies() {
  saturn::http::server_options o;
  o.limits.max_body = 8u << 20;
  return o;
}

using http_test::run_on_pool;

}  // namespace

TEST(http_url, splits_scheme_host_port_and_target_and_refuses_what_it_cannot_send) {
  auto a = http::parse_url("http://127.0.0.1:8080/json?x=1#frag");
  ASSERT_TRUE(a) << a.err().message();
  EXPECT_FALSE(a->https);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 8080);
  EXPECT_EQ(a->target, "/json?x=1");
  EXPECT_EQ(a->authority(), "127.0.0.1:8080");
  auto b = http::parse_url("HTTPS://[::1]?q");
  ASSERT_TRUE(b) << b.err().message();
  EXPECT_TRUE(b->https);
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(b->port, 443);
  EXPECT_EQ(b->target, "/?q");
  EXPECT_EQ(b->authority(), "[::1]");
  for (const char* bad : {"ftp://x/", "http://", "http://u@h/", "http://h:0/", "http://h:65536/", "http://h:8x/",
                          "http://h/a b", "http://[::1/"}) {
    auto r = http::parse_url(bad);
    EXPECT_FALSE(r) << bad;
  }
}

TEST(http_client, keeps_one_connection_alive_across_sequential_requests) {
  http_test::test_server srv;
  http::client c;
  const auto got = run_on_pool([](http::client& cl, std::string u) -> task<int> {
    int ok = 0;
    for (int i = 0; i < 20; ++i) {
      auto r = co_await cl.get(u);
      if (r && r->status == 200 && r->body == "Hello, World!" && r->header("content-type") == "text/plain")
        ++ok;
    }
    co_return ok;
  }(c, srv.url("/plaintext")));
  EXPECT_EQ(got, 20);
  EXPECT_EQ(c.connections_opened(), 1u);
  EXPECT_EQ(c.idle_connections(), 1u);
}

// Each thread caches the last URLs it sent to, parsed, with their origin's pool: a
// cached URL must never lead a request into another client's pool (one destroyed, or
// one alive at the same time), and URLs past the cache's size still share their origin.
TEST(http_client, parsed_urls_are_cached_per_client_and_never_cross_clients) {
  http_test::test_server srv;
  const std::string u = srv.url("/plaintext");
  for (int i = 0; i < 20; ++i) {  // a fresh client each time, often at the same address
    http::client c;
    auto r = run_on_pool(c.get(u));
    ASSERT_TRUE(r) << r.err().message();
    EXPECT_EQ(r->body, "Hello, World!");
    EXPECT_EQ(c.connections_opened(), 1u);
    EXPECT_EQ(c.idle_connections(), 1u);
  }
  http::client a, b;
  const int both = run_on_pool([](http::client& x, http::client& y, std::string url) -> task<int> {
    int ok = 0;
    for (int i = 0; i < 10; ++i) {
      auto rx = co_await x.get(url);
      auto ry = co_await y.get(url);
      ok += (rx && rx->status == 200) + (ry && ry->status == 200);
    }
    co_return ok;
  }(a, b, u));
  EXPECT_EQ(both, 20);
  EXPECT_EQ(a.connections_opened(), 1u);
  EXPECT_EQ(b.connections_opened(), 1u);
  EXPECT_EQ(a.idle_connections(), 1u);
  EXPECT_EQ(b.idle_connections(), 1u);
  http::client many;
  const int rotated = run_on_pool([](http::client& c, http_test::test_server& s) -> task<int> {
    int ok = 0;
    for (int i = 0; i < 60; ++i) {  // 20 URLs in turn: more than a thread's cache holds
      auto r = co_await c.get(s.url("/seq/" + std::to_string(i % 20)));
      ok += r && r->status == 200 && r->body == std::to_string(i % 20);
    }
    co_return ok;
  }(many, srv));
  EXPECT_EQ(rotated, 60);
  EXPECT_EQ(many.connections_opened(), 1u) << "one origin, one pool, one connection";
}

TEST(http_client, the_request_head_names_target_host_agent_and_codings) {
  std::mutex mu;
  std::vector<std::string> heads;
  scripted_server srv([&](int fd, int, const std::string& req) {
    {
      std::lock_guard lock(mu);
      heads.push_back(req);
    }
    write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    return true;
  });
  const std::string port = srv.url("").substr(std::string("http://127.0.0.1:").size());
  http::client c;
  ASSERT_TRUE(run_on_pool(c.get(srv.url("/a/b?x=1&y=2#frag"))));
  ASSERT_TRUE(run_on_pool(c.get(srv.url("/a/b?x=1&y=2#frag"))));  // the cached target
  ASSERT_TRUE(run_on_pool(c.get("http://127.0.0.1:" + port)));  // no path: "/"
  ASSERT_TRUE(run_on_pool(c.get("http://127.0.0.1:" + port + "?q")));
  http::client_request own = make_req("GET", srv.url("/own"));
  own.headers = {{"user-agent", "mine/1"}, {"Accept-Encoding", "identity"}};
  ASSERT_TRUE(run_on_pool(c.request(std::move(own))));
  http::client bare({.decompress = false, .user_agent = ""});
  ASSERT_TRUE(run_on_pool(bare.get(srv.url("/bare"))));
  std::lock_guard lock(mu);
  ASSERT_EQ(heads.size(), 6u);
  const std::string host = "Host: 127.0.0.1:" + port + "\r\n";
  const std::string common = host + "User-Agent: saturn-http-client\r\nAccept-Encoding: gzip, br\r\n\r\n";
  EXPECT_EQ(heads[0], "GET /a/b?x=1&y=2 HTTP/1.1\r\n" + common);
  EXPECT_EQ(heads[1], heads[0]);
  EXPECT_EQ(heads[2], "GET / HTTP/1.1\r\n" + common);
  EXPECT_EQ(heads[3], "GET /?q HTTP/1.1\r\n" + common);
  EXPECT_EQ(heads[4], "GET /own HTTP/1.1\r\n" + host + "user-agent: mine/1\r\nAccept-Encoding: identity\r\n\r\n");
  EXPECT_EQ(heads[5], "GET /bare HTTP/1.1\r\n" + host + "\r\n");
}

TEST(http_client, sixty_four_concurrent_requests_share_at_most_the_per_host_cap) {
  http_test::test_server srv;
  http::client c({.max_connections_per_host = 4});
  const int ok = run_on_pool([](http::client& cl, http_test::test_server& s) -> task<int> {
    std::atomic<int> good{0};
    co_await saturn::task_group::run([&](saturn::task_group& g) -> task<> {
      for (int i = 0; i < 64; ++i)
        g.spawn([](http::client& k, std::string u, std::string want, std::atomic<int>& n) -> task<> {
          auto r = co_await k.get(u);
          if (r && r->status == 200 && r->body == want)
            n.fetch_add(1);
        }(cl, s.url("/seq/" + std::to_string(i)), std::to_string(i), good));
      co_return;
    });
    co_return good.load();
  }(c, srv));
  EXPECT_EQ(ok, 64);
  EXPECT_LE(c.connections_opened(), 4u);
  EXPECT_GE(c.connections_opened(), 1u);
}

TEST(http_client, posts_a_large_body_and_a_streamed_chunked_body) {
  http_test::test_server srv(big_bodies());
  http::client c;
  std::string big(3u << 20, '\0');
  for (std::size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<char>('a' + i % 23);
  auto r = run_on_pool(c.request(make_req("POST", srv.url("/echo"), big)));
  ASSERT_TRUE(r) << r.err().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(r->body == big) << "echoed " << r->body.size() << " bytes of " << big.size();
  // The same bytes from a body_source, 16 KiB pieces, sent chunked.
  std::size_t off = 0;
  http::client_request req = make_req("POST", srv.url("/echo"));
  req.body_source = [&big, &off](std::span<std::byte> buf) -> task<result<std::size_t>> {
    const std::size_t n = std::min(buf.size(), big.size() - off);
    std::memcpy(buf.data(), big.data() + off, n);
    off += n;
    co_return n;
  };
  auto s = run_on_pool(c.request(std::move(req)));
  ASSERT_TRUE(s) << s.err().message();
  EXPECT_EQ(s->status, 200);
  EXPECT_TRUE(s->body == big) << "echoed " << s->body.size() << " bytes of " << big.size();
}

TEST(http_client, a_timeout_ends_a_slow_request_and_a_refused_connect_says_where) {
  http_test::test_server srv;
  http::client c({.timeout = 100ms});
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_on_pool(c.get(srv.url("/delay/3000")));
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.err() == std::errc::timed_out) << r.err().message();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  // A closed port: connect fails, and the message names the origin.
  auto l = saturn::net::tcp_listener::bind(saturn::net::address::loopback_v4(0));
  ASSERT_TRUE(l);
  const auto port = l->local_address()->port();
  l->close();
  http::client d;
  auto refused = run_on_pool(d.get("http://127.0.0.1:" + std::to_string(port) + "/"));
  ASSERT_FALSE(refused);
  EXPECT_TRUE(contains(refused.err().message(), "connect http://127.0.0.1:" + std::to_string(port)))
      << refused.err().message();
  // A name: resolved through net::resolve, here against a local port where no DNS
  // server answers (the test sends no query off this machine).
  http::client_options no_dns;
  no_dns.resolve.servers = {"127.0.0.1:" + std::to_string(port)};
  no_dns.resolve.timeout = 100ms;
  no_dns.resolve.tries = 1;
  http::client e(no_dns);
  auto unresolved = run_on_pool(e.get("http://no-such-host.invalid/"));
  ASSERT_FALSE(unresolved);
  EXPECT_TRUE(contains(unresolved.err().message(), "no-such-host.invalid")) << unresolved.err().message();
}

TEST(http_client, chunked_with_extensions_and_trailers_one_byte_per_write) {
  scripted_server srv([](int fd, int, const std::string&) {
    const std::string wire =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        "5;name=value\r\nhello\r\n1;x;y=\"q v\"\r\n \r\n6\r\nworld!\r\n0\r\nX-Trailer: t\r\n\r\n";
    for (char ch : wire) {
      write_all(fd, std::string_view(&ch, 1));
      std::this_thread::sleep_for(100us);
    }
    return true;
  });
  http::client c;
  auto r = run_on_pool(c.get(srv.url("/")));
  ASSERT_TRUE(r) << r.err().message();
  EXPECT_EQ(r->body, "hello world!");
  auto again = run_on_pool(c.get(srv.url("/")));
  ASSERT_TRUE(again) << again.err().message();
  EXPECT_EQ(srv.connections(), 1) << "a chunked body read to its end leaves the connection reusable";
}

TEST(http_client, interim_answers_are_skipped_and_connection_close_is_honoured) {
  scripted_server srv([](int fd, int n, const std::string&) {
    if (n == 0) {
      write_all(fd, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
                    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc");
      return false;
    }
    write_all(fd, "HTTP/1.1 204 No Content\r\n\r\n");
    return true;
  });
  http::client c;
  auto r = run_on_pool(c.get(srv.url("/")));
  ASSERT_TRUE(r) << r.err().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "abc");
  EXPECT_EQ(c.idle_connections(), 0u) << "Connection: close must not be pooled";
  auto second = run_on_pool(c.get(srv.url("/")));
  ASSERT_TRUE(second) << second.err().message();
  EXPECT_EQ(second->status, 204);
  EXPECT_EQ(srv.connections(), 2);
}

TEST(http_client, a_pooled_connection_the_server_closed_is_retried_once_for_a_get) {
  // The server answers one request per connection and then closes without saying so:
  // the client's next GET finds the pooled connection dead and retries on a new one.
  scripted_server srv([](int fd, int, const std::string&) {
    write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    return false;
  });
  http::client c;
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(20ms);  // let the close reach the client
    auto r = run_on_pool(c.get(srv.url("/")));
    ASSERT_TRUE(r) << "request " << i << ": " << r.err().message();
    EXPECT_EQ(r->body, "ok");
  }
  EXPECT_EQ(srv.connections(), 3);
  // A POST is not retried: it fails, saying the connection closed.
  std::this_thread::sleep_for(20ms);
  auto post = run_on_pool(c.request(make_req("POST", srv.url("/"), "x")));
  ASSERT_FALSE(post);
  EXPECT_TRUE(contains(post.err().message(), "closed") || contains(post.err().message(), "reset"))
      << post.err().message();
}

TEST(http_client, close_delimited_truncated_and_malformed_answers) {
  scripted_server srv([](int fd, int, const std::string& req) {
    if (contains(req, "GET /eof "))
      write_all(fd, "HTTP/1.1 200 OK\r\n\r\nuntil the end");
    else if (contains(req, "GET /short "))
      write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this");
    else if (contains(req, "GET /badchunk "))
      write_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
    else if (contains(req, "GET /twolengths "))
      write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc");
    else
      write_all(fd, "HTTP/2 200\r\n\r\n");
    return false;
  });
  http::client c;
  auto eof = run_on_pool(c.get(srv.url("/eof")));
  ASSERT_TRUE(eof) << eof.err().message();
  EXPECT_EQ(eof->body, "until the end");
  auto shortb = run_on_pool(c.get(srv.url("/short")));
  ASSERT_FALSE(shortb);
  EXPECT_TRUE(contains(shortb.err().message(), "truncated")) << shortb.err().message();
  auto badchunk = run_on_pool(c.get(srv.url("/badchunk")));
  ASSERT_FALSE(badchunk);
  EXPECT_TRUE(contains(badchunk.err().message(), "chunk")) << badchunk.err().message();
  auto two = run_on_pool(c.get(srv.url("/twolengths")));
  ASSERT_FALSE(two);
  EXPECT_TRUE(contains(two.err().message(), "Content-Length")) << two.err().message();
  auto v2 = run_on_pool(c.get(srv.url("/v2")));
  ASSERT_FALSE(v2);
  EXPECT_TRUE(contains(v2.err().message(), "status line")) << v2.err().message();
}

TEST(http_client, gzip_and_br_bodies_are_decoded_and_head_has_no_body) {
  const std::string text(50000, 'z');
  const std::string gz = http::compress(http::content_coding::gzip, text).value();
  const std::string br = http::compress(http::content_coding::br, text).value();
  scripted_server srv([&](int fd, int, const std::string& req) {
    EXPECT_TRUE(contains(req, "Accept-Encoding: gzip, br\r\n")) << req;
    if (contains(req, "HEAD ")) {
      write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
    } else {
      const std::string& b = contains(req, "/gz ") ? gz : br;
      write_all(fd, "HTTP/1.1 200 OK\r\nContent-Encoding: " + std::string(contains(req, "/gz ") ? "gzip" : "br") +
                        "\r\nContent-Length: " + std::to_string(b.size()) + "\r\n\r\n" + b);
    }
    return true;
  });
  http::client c;
  auto g = run_on_pool(c.get(srv.url("/gz")));
  ASSERT_TRUE(g) << g.err().message();
  EXPECT_TRUE(g->body == text);
  auto b = run_on_pool(c.get(srv.url("/br")));
  ASSERT_TRUE(b) << b.err().message();
  EXPECT_TRUE(b->body == text);
  auto h = run_on_pool(c.request(make_req("HEAD", srv.url("/"))));
  ASSERT_TRUE(h) << h.err().message();
  EXPECT_EQ(h->body, "");
  EXPECT_EQ(h->header("content-length"), "5");
  auto after = run_on_pool(c.get(srv.url("/gz")));
  ASSERT_TRUE(after) << after.err().message();
  EXPECT_EQ(srv.connections(), 1) << "the HEAD answer's connection is reused";
  // A body over max_body is refused.
  http::client small({.max_body = 1000});
  auto over = run_on_pool(small.get(srv.url("/gz")));
  ASSERT_FALSE(over);
}

TEST(http_client, follows_redirects_when_asked_and_turns_a_303_into_a_get) {
  scripted_server srv([](int fd, int, const std::string& req) {
    if (contains(req, "POST /form "))
      write_all(fd, "HTTP/1.1 303 See Other\r\nLocation: /done\r\nContent-Length: 0\r\n\r\n");
    else if (contains(req, "GET /done "))
      write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ndone");
    else if (contains(req, "GET /loop "))
      write_all(fd, "HTTP/1.1 302 Found\r\nLocation: /loop\r\nContent-Length: 0\r\n\r\n");
    else
      write_all(fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    return true;
  });
  http::client follow({.max_redirects = 3});
  auto r = run_on_pool(follow.request(make_req("POST", srv.url("/form"), "a=1")));
  ASSERT_TRUE(r) << r.err().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "done");
  auto loop = run_on_pool(follow.get(srv.url("/loop")));
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop->status, 302) << "after max_redirects the last answer is returned";
  http::client plain;
  auto as_is = run_on_pool(plain.request(make_req("POST", srv.url("/form"), "a=1")));
  ASSERT_TRUE(as_is);
  EXPECT_EQ(as_is->status, 303);
}

TEST(http_client, streams_a_body_piece_by_piece) {
  http_test::test_server srv(big_bodies());
  http::client c;
  const std::string big(2u << 20, 'q');
  const std::size_t got = run_on_pool([](http::client& cl, std::string u, const std::string& body) -> task<std::size_t> {
    http::client_request req = make_req("POST", u, body);
    auto s = co_await cl.send(std::move(req));
    if (!s)
      co_return 0;
    std::vector<std::byte> buf(4096);
    std::size_t total = 0;
    for (;;) {
      auto n = co_await s->read(buf);
      if (!n || *n == 0)
        break;
      total += *n;
    }
    co_return s->finished() ? total : 0;
  }(c, srv.url("/echo"), big));
  EXPECT_EQ(got, big.size());
  EXPECT_EQ(c.idle_connections(), 1u);
}

TEST(http_client, python_http_server_http_1_0_answers) {
  if (std::system("python3 -c 'import http.server' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3 is not installed";
  const auto dir = std::filesystem::temp_directory_path() / ("saturn-client-py-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string content;
  for (int i = 0; i < 20000; ++i)
    content += std::to_string(i) + "\n";
  std::ofstream(dir / "data.txt") << content;
  auto l = saturn::net::tcp_listener::bind(saturn::net::address::loopback_v4(0));
  ASSERT_TRUE(l);
  const auto port = l->local_address()->port();
  l->close();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string p = std::to_string(port);
    ::execlp("python3", "python3", "-m", "http.server", p.c_str(), "--bind", "127.0.0.1", "--directory", dir.c_str(),
             nullptr);
    ::_exit(127);
  }
  http::client c;
  result<http::client_response> r = saturn::error{std::make_error_code(std::errc::timed_out), "not tried"};
  for (int i = 0; i < 100; ++i) {  // until python listens
    r = run_on_pool(c.get("http://127.0.0.1:" + std::to_string(port) + "/data.txt"));
    if (r)
      break;
    std::this_thread::sleep_for(50ms);
  }
  ::kill(pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(r) << r.err().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(r->body == content) << r->body.size() << " bytes of " << content.size();
}
