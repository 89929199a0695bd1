// http::client against the servers services really talk to: Go's net/http (the standard
// library server, built here from tests/http/peers/go_server.go with Debian's golang-go,
// offline) and nginx (Debian's, one worker process on a private prefix). Each runs as a
// child process on 127.0.0.1 and is killed and reaped at the end of its test. What is
// checked is what differs between real servers: keep-alive and who closes (Go's idle
// timeout, nginx's keepalive_requests, Connection: close), chunked answers written in
// many flushes, gzip from zlib (nginx) and from Go's compress/gzip, a chunked request
// body as Go reads it, HEAD with a Content-Length, redirects, large bodies, and the
// per-host cap under 64 concurrent requests.
#include <gtest/gtest.h>
#include <saturn/http/client.hpp>
#include <saturn/net/tcp_listener.hpp>
#include <saturn/saturn.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "http/http_test_support.hpp"
#include "support/child_server.hpp"

namespace {

using namespace std::chrono_literals;
using saturn::result;
using saturn::task;
using saturn_test::child_server;
namespace http = saturn::http;
namespace fs = std::filesystem;

using http_test::run_on_pool;

using http_test::make_req;

result<http::client_response> fetch(http::client& c, http::client_request req) { return run_on_pool(c.request(std::move(req))); }
result<http::client_response> fetch(http::client& c, const std::string& url) { return fetch(c, make_req("GET", url)); }

fs::path scratch(const char* what) {
  auto d = fs::temp_directory_path() / ("saturn-client-" + std::string(what) + "-" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

std::string alphabet(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i)
    s[i] = static_cast<char>('a' + i % 26);
  return s;
}

std::string lines(const char* prefix, int n) {
  std::string s;
  for (int i = 0; i < n; ++i)
    s += prefix + std::to_string(i) + "\n";
  return s;
}

std::uint16_t free_port() {
  auto l = saturn::net::tcp_listener::bind(saturn::net::address::loopback_v4(0));
  return l->local_address()->port();  // closed at return: free again
}

/// Retries a GET until the server listens (nginx prints nothing when it is ready).
result<http::client_response> first_answer(http::client& c, const std::string& url) {
  result<http::client_response> r = saturn::error{std::make_error_code(std::errc::timed_out), "not tried"};
  for (int i = 0; i < 100; ++i) {
    r = fetch(c, url);
    if (r)
      break;
    std::this_thread::sleep_for(50ms);
  }
  return r;
}

// ---- Go net/http ----------------------------------------------------------------------

class go_server : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::system("command -v go >/dev/null 2>&1") != 0)
      return;
    s_dir = scratch("go");
    const std::string bin = (s_dir / "go_server").string();
    const std::string cmd = "cd '" + s_dir.string() + "' && GOCACHE='" + (s_dir / "cache").string() +
                            "' GOPATH='" + (s_dir / "gopath").string() +
                            "' GOPROXY=off GO111MODULE=off GOFLAGS= go build -o '" + bin + "' '" SATURN_TESTS_DIR
                            "/http/peers/go_server.go' 2>&1";
    s_built = std::system(cmd.c_str()) == 0;
  }
  static void TearDownTestSuite() {
    if (!s_dir.empty())
      fs::remove_all(s_dir);
  }
  void SetUp() override {
    if (s_dir.empty())
      GTEST_SKIP() << "go is not installed (Debian package golang-go; scripts/deps test installs it)";
    ASSERT_TRUE(s_built) << "go build of tests/http/peers/go_server.go failed";
    m_server.emplace(std::vector<std::string>{(s_dir / "go_server").string()});
    const std::string line = m_server->first_line();
    ASSERT_EQ(line.rfind("PORT ", 0), 0u) << "the Go server did not start: '" << line << "'";
    m_base = "http://127.0.0.1:" + line.substr(5);
  }
  std::string url(const std::string& path) const { return m_base + path; }

  static inline fs::path s_dir;
  static inline bool s_built = false;
  std::optional<child_server> m_server;
  std::string m_base;
};

TEST_F(go_server, keeps_one_connection_for_sequential_requests_and_reads_chunked_answers) {
  http::client c;
  for (int i = 0; i < 5; ++i) {
    auto r = fetch(c, url("/hello"));
    ASSERT_TRUE(r) << r.err().message();
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "hello from go");
  }
  auto ch = fetch(c, url("/chunked?n=2000"));  // one flush, so one chunk, per line
  ASSERT_TRUE(ch) << ch.err().message();
  EXPECT_EQ(ch->status, 200);
  EXPECT_EQ(ch->header("transfer-encoding"), "chunked");
  EXPECT_TRUE(ch->body == lines("line ", 2000)) << ch->body.size() << " bytes";
  EXPECT_EQ(c.connections_opened(), 1u);
}

TEST_F(go_server, sends_bodies_with_a_length_and_chunked_and_gets_them_back) {
  http::client c;
  const std::string big = alphabet(2u << 20);
  auto a = fetch(c, make_req("POST", url("/echo"), big));
  ASSERT_TRUE(a) << a.err().message();
  EXPECT_EQ(a->status, 200);
  EXPECT_TRUE(a->body == big) << a->body.size() << " bytes";

  // A streamed body, sent chunked in 1000 pieces of 1000 bytes.
  auto sent = std::make_shared<int>(0);
  http::client_request req = make_req("POST", url("/echo"));
  req.body_source = [sent](std::span<std::byte> buf) -> task<result<std::size_t>> {
    if (*sent == 1000)
      co_return std::size_t{0};
    const std::string piece = alphabet(1000);
    const std::size_t n = std::min(buf.size(), piece.size());
    std::memcpy(buf.data(), piece.data(), n);
    ++*sent;
    co_return n;
  };
  auto b = fetch(c, std::move(req));
  ASSERT_TRUE(b) << b.err().message();
  EXPECT_EQ(b->status, 200);
  std::string want;
  for (int i = 0; i < 1000; ++i)
    want += alphabet(1000);
  EXPECT_TRUE(b->body == want) << b->body.size() << " bytes";
}

TEST_F(go_server, opens_a_new_connection_after_connection_close_and_after_the_idle_timeout) {
  http::client c;
  auto a = fetch(c, url("/close"));
  ASSERT_TRUE(a) << a.err().message();
  EXPECT_EQ(a->body, "bye");
  EXPECT_EQ(c.idle_connections(), 0u);  // not pooled: the server said close
  auto b = fetch(c, url("/hello"));
  ASSERT_TRUE(b) << b.err().message();
  EXPECT_EQ(c.connections_opened(), 2u);
  // Go closes a connection idle for 300 ms; the pooled one is found dead and replaced.
  std::this_thread::sleep_for(800ms);
  auto d = fetch(c, url("/hello"));
  ASSERT_TRUE(d) << d.err().message();
  EXPECT_EQ(d->body, "hello from go");
  EXPECT_EQ(c.connections_opened(), 3u);
}

TEST_F(go_server, head_big_bodies_gzip_and_redirects) {
  http::client c;
  auto h = fetch(c, make_req("HEAD", url("/big")));
  ASSERT_TRUE(h) << h.err().message();
  EXPECT_EQ(h->status, 200);
  EXPECT_EQ(h->header("content-length"), std::to_string(3u << 20));
  EXPECT_TRUE(h->body.empty());
  auto g = fetch(c, url("/big"));  // the same connection: HEAD's length was not read as a body
  ASSERT_TRUE(g) << g.err().message();
  EXPECT_TRUE(g->body == alphabet(3u << 20)) << g->body.size() << " bytes";
  auto z = fetch(c, url("/gzip"));
  ASSERT_TRUE(z) << z.err().message();
  EXPECT_EQ(z->status, 200);
  EXPECT_TRUE(z->body == lines("gzip line ", 5000)) << z->body.size() << " bytes";
  EXPECT_EQ(c.connections_opened(), 1u);

  auto raw = fetch(c, url("/redirect"));
  ASSERT_TRUE(raw) << raw.err().message();
  EXPECT_EQ(raw->status, 302);
  EXPECT_EQ(raw->header("location"), "/hello");
  http::client follows({.max_redirects = 2});
  auto f = fetch(follows, url("/redirect"));
  ASSERT_TRUE(f) << f.err().message();
  EXPECT_EQ(f->status, 200);
  EXPECT_EQ(f->body, "hello from go");
}

TEST_F(go_server, sixty_four_concurrent_requests_share_the_per_host_cap) {
  http::client c({.max_connections_per_host = 4});
  const int ok = run_on_pool([](http::client& cl, std::string u) -> task<int> {
    std::atomic<int> good{0};
    co_await saturn::task_group::run([&](saturn::task_group& g) -> task<> {
      for (int i = 0; i < 64; ++i)
        g.spawn([](http::client& k, std::string target, std::atomic<int>& n) -> task<> {
          auto r = co_await k.get(target);
          if (r && r->status == 200 && r->body == "hello from go")
            n.fetch_add(1);
        }(cl, u, good));
      co_return;
    });
    co_return good.load();
  }(c, url("/hello")));
  EXPECT_EQ(ok, 64);
  EXPECT_LE(c.connections_opened(), 4u);
}

// ---- nginx ----------------------------------------------------------------------------

class nginx_server : public ::testing::Test {
 protected:
  void SetUp() override {
    if (saturn_test::nginx_binary().empty())
      GTEST_SKIP() << "nginx is not installed (Debian package nginx; scripts/deps test installs it)";
    m_dir = scratch("nginx");
    fs::create_directories(m_dir / "www");
    std::ofstream(m_dir / "www" / "lines.txt") << lines("nginx line ", 20000);
    std::ofstream(m_dir / "www" / "big.bin") << alphabet(3u << 20);
    const auto port = free_port();
    m_base = "http://127.0.0.1:" + std::to_string(port);
    const std::string body = "  server { listen 127.0.0.1:" + std::to_string(port) +
                             "; keepalive_requests 3; root " + (m_dir / "www").string() +
                             ";\n    types { text/plain txt; } default_type application/octet-stream;\n"
                             "    gzip on; gzip_types text/plain; gzip_min_length 1;\n"
                             "    location = /moved { return 301 /lines.txt; }\n"
                             "    location = /hi { return 200 'hello from nginx'; } }";
    m_server.emplace(saturn_test::nginx_config((m_dir / "conf").string(), body));
  }
  void TearDown() override {
    m_server.reset();
    if (!m_dir.empty())
      fs::remove_all(m_dir);
  }
  std::string url(const std::string& path) const { return m_base + path; }

  fs::path m_dir;
  std::string m_base;
  std::optional<child_server> m_server;
};

TEST_F(nginx_server, follows_keepalive_requests_and_decodes_chunked_gzip) {
  http::client c;
  auto first = first_answer(c, url("/hi"));
  ASSERT_TRUE(first) << first.err().message();
  EXPECT_EQ(first->body, "hello from nginx");
  const auto opened_before = c.connections_opened();  // the attempts before nginx listened
  // nginx answers the third request on a connection with Connection: close.
  for (int i = 0; i < 8; ++i) {
    auto r = fetch(c, url("/lines.txt"));  // gzip on the fly: chunked, no Content-Length
    ASSERT_TRUE(r) << i << ": " << r.err().message();
    EXPECT_EQ(r->status, 200);
    EXPECT_TRUE(r->body == lines("nginx line ", 20000)) << i << ": " << r->body.size() << " bytes";
  }
  // 9 requests: /hi and 2 /lines.txt on the first connection, then 3 and 3.
  EXPECT_EQ(c.connections_opened() - opened_before, 2u);
}

TEST_F(nginx_server, head_big_files_missing_files_and_redirects) {
  http::client c;
  auto first = first_answer(c, url("/hi"));
  ASSERT_TRUE(first) << first.err().message();
  auto h = fetch(c, make_req("HEAD", url("/big.bin")));
  ASSERT_TRUE(h) << h.err().message();
  EXPECT_EQ(h->status, 200);
  EXPECT_EQ(h->header("content-length"), std::to_string(3u << 20));
  EXPECT_TRUE(h->body.empty());
  auto g = fetch(c, url("/big.bin"));  // sendfile on nginx's side
  ASSERT_TRUE(g) << g.err().message();
  EXPECT_TRUE(g->body == alphabet(3u << 20)) << g->body.size() << " bytes";
  auto missing = fetch(c, url("/nothing-here"));
  ASSERT_TRUE(missing) << missing.err().message();
  EXPECT_EQ(missing->status, 404);
  http::client follows({.max_redirects = 1});
  auto f = fetch(follows, url("/moved"));
  ASSERT_TRUE(f) << f.err().message();
  EXPECT_EQ(f->status, 200);
  EXPECT_TRUE(f->body == lines("nginx line ", 20000)) << f->body.size() << " bytes";
}

}  // namespace
