// http::static_files against a real server on 127.0.0.1: content types, exact bytes,
// HEAD, 304 (ETag, If-Modified-Since), ranges (206 / 416 / ignored), If-Range,
// precompressed siblings per Accept-Encoding, the index file, the in-memory cache, and
// every way out of the root we know of (`..` plain and encoded, NUL, symlinks); plus the
// pure helpers (path decoding, dates, If-None-Match, Range) against hand-made oracles.
#include <saturn/http/serve.hpp>
#include <saturn/http/static_files.hpp>

#include "http/static_detail.hpp"
#include "http_test_support.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

namespace {

using namespace std::chrono_literals;
namespace stdfs = std::filesystem;
using saturn::http::static_options;

/// A temporary directory: <tmp>/outside (a secret next to the root) and <tmp>/root.
struct tree {
  stdfs::path base;
  stdfs::path root;
  tree() {
    std::string tmpl = (stdfs::temp_directory_path() / "saturn-static-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr)
      throw std::runtime_error("mkdtemp failed");
    base = tmpl;
    root = base / "root";
    stdfs::create_directories(root / "css");
    stdfs::create_directories(root / "docs");
    stdfs::create_directories(root / "empty");
    write(base / "secret.txt", "top secret\n");
    write(root / "index.html", "<h1>home</h1>\n");
    write(root / "hello.txt", "Hello, World!\n");  // 14 bytes
    write(root / "css/site.css", "body{color:red}\n");
    write(root / "app.js", "console.log('identity');\n");
    write(root / "app.js.br", "BROTLI-BYTES");
    write(root / "app.js.gz", "GZIP-BYTES");
    write(root / "only-gz.js", "identity only-gz\n");
    write(root / "only-gz.js.gz", "GZ");
    write(root / "data.json", "{\"a\":1}");
    write(root / "pic.png", std::string("\x89PNG\r\n\x1a\n", 8));
    write(root / "font.woff2", "wOF2");
    write(root / "logo.svg", "<svg/>");
    write(root / "blob.bin", "xyz");
    write(root / "UPPER.CSS", "a{}");
    write(root / "docs/index.html", "<h1>docs</h1>\n");
    write(root / "a\\b.txt", "backslash\n");
    write(root / ".env", "PASSWORD=x\n");
    write(root / "zero.txt", "");
    stdfs::create_symlink("../secret.txt", root / "leak.txt");           // leaves the root
    stdfs::create_symlink(base / "secret.txt", root / "leak-abs.txt");   // absolute, outside
    stdfs::create_symlink("..", root / "up");                            // a directory outside
    stdfs::create_symlink("hello.txt", root / "alias.txt");              // stays inside
    stdfs::create_symlink("css/site.css", root / "alias.css");           // stays inside
    ::mkfifo((root / "fifo").c_str(), 0644);
  }
  ~tree() {
    std::error_code ec;
    stdfs::remove_all(base, ec);
  }
  static void write(const stdfs::path& p, const std::string& s) {
    std::ofstream f(p, std::ios::binary);
    f << s;
  }
};

/// serve() on a thread with a static route, stopped by token in the destructor.
struct running {
  saturn::thread_pool pool{{.threads = 2, .mode = saturn::pool_mode::io}};
  saturn::http::router routes;
  std::promise<std::uint16_t> port_p;
  std::stop_source stop;
  std::thread th;
  std::uint16_t port = 0;

  explicit running(const std::string& root, static_options opts = {}) {
    std::signal(SIGPIPE, SIG_IGN);
    routes.get("/static/{*path}", saturn::http::static_files(root, std::move(opts)));
    saturn::http::serve_options o;
    o.stop_on_signals = false;
    o.listeners = 1;
    o.stop = stop.get_token();
    o.on_listening = [this](const saturn::net::address& a) { port_p.set_value(a.port()); };
    auto f = port_p.get_future();
    th = std::thread([this, o] { (void)saturn::http::serve(pool, routes, saturn::net::address::loopback_v4(0), o); });
    if (f.wait_for(10s) != std::future_status::ready)
      throw std::runtime_error("serve did not start listening");
    port = f.get();
  }
  ~running() {
    stop.request_stop();
    th.join();
  }
  http_test::client::resp get(const std::string& target, const std::string& extra = "",
                              const std::string& method = "GET") {
    http_test::client c(port);
    c.send(method + " " + target + " HTTP/1.1\r\nHost: x\r\n" + extra + "\r\n");
    auto r = method == "HEAD" ? head_only(c) : c.read_response();
    if (!r)
      throw std::runtime_error("no response to " + target);
    return *r;
  }
  static std::optional<http_test::client::resp> head_only(http_test::client& c) {
    for (int i = 0; i < 100; ++i) {
      std::size_t end = c.buffer.find("\r\n\r\n");
      if (end != std::string::npos) {
        http_test::client::resp r;
        r.head = c.buffer.substr(0, end + 4);
        r.status = std::stoi(r.head.substr(9, 3));
        r.body = c.buffer.substr(end + 4);
        return r;
      }
      if (c.eof || !c.read_some(5000ms))
        return std::nullopt;
    }
    return std::nullopt;
  }
};

using http_test::field;

TEST(http_static, content_types_and_exact_bytes) {
  tree t;
  running srv(t.root.string());
  struct expect {
    const char* path;
    const char* type;
    const char* body;
  };
  for (auto [path, type, body] : {
           expect{"/static/hello.txt", "text/plain; charset=utf-8", "Hello, World!\n"},
           expect{"/static/css/site.css", "text/css; charset=utf-8", "body{color:red}\n"},
           expect{"/static/app.js", "application/javascript; charset=utf-8", "console.log('identity');\n"},
           expect{"/static/data.json", "application/json", "{\"a\":1}"},
           expect{"/static/index.html", "text/html; charset=utf-8", "<h1>home</h1>\n"},
           expect{"/static/font.woff2", "font/woff2", "wOF2"},
           expect{"/static/logo.svg", "image/svg+xml", "<svg/>"},
           expect{"/static/blob.bin", "application/octet-stream", "xyz"},
           expect{"/static/UPPER.CSS", "text/css; charset=utf-8", "a{}"},
           expect{"/static/a%5Cb.txt", "text/plain; charset=utf-8", "backslash\n"},  // '\' is a plain byte
           expect{"/static/%68ello.txt", "text/plain; charset=utf-8", "Hello, World!\n"},
           expect{"/static/zero.txt", "text/plain; charset=utf-8", ""},
       }) {
    auto r = srv.get(path);
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(field(r.head, "Content-Type"), type) << path;
    EXPECT_EQ(r.body, body) << path;
    EXPECT_EQ(field(r.head, "Accept-Ranges"), "bytes") << path;
    EXPECT_EQ(field(r.head, "Vary"), "") << path;  // precompressed is off
  }
  auto png = srv.get("/static/pic.png");
  EXPECT_EQ(field(png.head, "Content-Type"), "image/png");
  EXPECT_EQ(png.body, std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(saturn::http::static_content_type("x.webp"), "image/webp");
  EXPECT_EQ(saturn::http::static_content_type("x.wasm"), "application/wasm");
  EXPECT_EQ(saturn::http::static_content_type("a/b.c/noext"), "application/octet-stream");
  EXPECT_EQ(saturn::http::static_content_type(".bashrc"), "application/octet-stream");
  EXPECT_EQ(saturn::http::static_content_type("r.md", {{"md", "text/x-md"}}), "text/x-md");
}

TEST(http_static, validators_head_and_304) {
  tree t;
  running srv(t.root.string());
  struct ::stat sb {};
  ASSERT_EQ(::stat((t.root / "hello.txt").c_str(), &sb), 0);
  char want[64];
  std::snprintf(want, sizeof want, "\"%llx-%llx\"", static_cast<unsigned long long>(sb.st_size),
                static_cast<unsigned long long>(sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec));
  auto r = srv.get("/static/hello.txt");
  const std::string etag = field(r.head, "ETag"), lm = field(r.head, "Last-Modified");
  EXPECT_EQ(etag, want);
  char date[64];
  std::tm tm{};
  ::gmtime_r(&sb.st_mtim.tv_sec, &tm);
  std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);  // C locale in tests
  EXPECT_EQ(lm, date);

  auto h = srv.get("/static/hello.txt", "", "HEAD");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(field(h.head, "Content-Length"), "14");
  EXPECT_EQ(field(h.head, "ETag"), etag);
  EXPECT_EQ(h.body, "");

  auto n = srv.get("/static/hello.txt", "If-None-Match: " + etag + "\r\n");
  EXPECT_EQ(n.status, 304);
  EXPECT_EQ(field(n.head, "ETag"), etag);
  EXPECT_EQ(n.body, "");
  EXPECT_EQ(srv.get("/static/hello.txt", "If-None-Match: \"nope\", W/" + etag + "\r\n").status, 304);  // weak
  EXPECT_EQ(srv.get("/static/hello.txt", "If-None-Match: *\r\n").status, 304);
  EXPECT_EQ(srv.get("/static/hello.txt", "If-None-Match: \"nope\"\r\n").status, 200);
  EXPECT_EQ(srv.get("/static/hello.txt", "If-Modified-Since: " + lm + "\r\n").status, 304);
  EXPECT_EQ(srv.get("/static/hello.txt", "If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n").status, 200);
  EXPECT_EQ(srv.get("/static/hello.txt", "If-Modified-Since: garbage\r\n").status, 200);
  // If-None-Match wins over If-Modified-Since (RFC 9110 §13.1.3).
  EXPECT_EQ(srv.get("/static/hello.txt", "If-None-Match: \"nope\"\r\nIf-Modified-Since: " + lm + "\r\n").status, 200);
  EXPECT_EQ(srv.get("/static/hello.txt", "If-None-Match: " + etag + "\r\n", "HEAD").status, 304);
}

TEST(http_static, ranges) {
  tree t;
  running srv(t.root.string());
  struct expect {
    const char* range;
    int status;
    const char* body;
    const char* content_range;
  };
  for (auto [range, status, body, cr] : {
           expect{"bytes=0-0", 206, "H", "bytes 0-0/14"},
           expect{"bytes=5-", 206, ", World!\n", "bytes 5-13/14"},
           expect{"bytes=-3", 206, "d!\n", "bytes 11-13/14"},
           expect{"bytes=7-11", 206, "World", "bytes 7-11/14"},
           expect{"bytes=10-999", 206, "ld!\n", "bytes 10-13/14"},
           expect{"bytes=-100", 206, "Hello, World!\n", "bytes 0-13/14"},
           expect{"bytes=14-", 416, nullptr, "bytes */14"},
           expect{"bytes=100-200", 416, nullptr, "bytes */14"},
           expect{"bytes=-0", 416, nullptr, "bytes */14"},
           expect{"bytes=abc", 200, "Hello, World!\n", ""},
           expect{"bytes=5-2", 200, "Hello, World!\n", ""},
           expect{"items=0-1", 200, "Hello, World!\n", ""},
           expect{"bytes=0-0,2-3", 200, "Hello, World!\n", ""},
       }) {
    auto r = srv.get("/static/hello.txt", std::string("Range: ") + range + "\r\n");
    EXPECT_EQ(r.status, status) << range;
    if (body != nullptr) {
      EXPECT_EQ(r.body, body) << range;
    }
    EXPECT_EQ(field(r.head, "Content-Range"), cr) << range;
  }
  EXPECT_EQ(srv.get("/static/zero.txt", "Range: bytes=0-\r\n").status, 416);
  const std::string etag = field(srv.get("/static/hello.txt").head, "ETag");
  const std::string lm = field(srv.get("/static/hello.txt").head, "Last-Modified");
  EXPECT_EQ(srv.get("/static/hello.txt", "Range: bytes=0-0\r\nIf-Range: " + etag + "\r\n").status, 206);
  EXPECT_EQ(srv.get("/static/hello.txt", "Range: bytes=0-0\r\nIf-Range: " + lm + "\r\n").status, 206);
  EXPECT_EQ(srv.get("/static/hello.txt", "Range: bytes=0-0\r\nIf-Range: \"old\"\r\n").status, 200);
  EXPECT_EQ(srv.get("/static/hello.txt", "Range: bytes=0-0\r\nIf-Range: W/" + etag + "\r\n").status, 200);
}

TEST(http_static, precompressed_siblings_per_accept_encoding) {
  tree t;
  static_options o;
  o.precompressed = true;
  running srv(t.root.string(), o);
  const std::string identity_etag = field(srv.get("/static/app.js").head, "ETag");
  struct expect {
    const char* accept;
    const char* encoding;
    const char* body;
  };
  for (auto [accept, enc, body] : {
           expect{"br;q=1, gzip;q=0.8", "br", "BROTLI-BYTES"},
           expect{"gzip;q=1, br;q=0.5", "gzip", "GZIP-BYTES"},
           expect{"gzip", "gzip", "GZIP-BYTES"},
           expect{"br", "br", "BROTLI-BYTES"},
           expect{"identity", "", "console.log('identity');\n"},
           expect{"br;q=0, gzip;q=0", "", "console.log('identity');\n"},
           expect{nullptr, "", "console.log('identity');\n"},
       }) {
    std::string extra = accept != nullptr ? std::string("Accept-Encoding: ") + accept + "\r\n" : "";
    auto r = srv.get("/static/app.js", extra);
    EXPECT_EQ(r.status, 200) << extra;
    EXPECT_EQ(r.body, body) << extra;
    EXPECT_EQ(field(r.head, "Content-Encoding"), enc) << extra;
    EXPECT_EQ(field(r.head, "Vary"), "Accept-Encoding") << extra;
    EXPECT_EQ(field(r.head, "Content-Type"), "application/javascript; charset=utf-8") << extra;
    if (*enc != '\0') {
      EXPECT_NE(field(r.head, "ETag"), identity_etag) << extra;
      const std::string tag = field(r.head, "ETag"), suffix = std::string("-") + enc + "\"";
      EXPECT_TRUE(tag.size() > suffix.size() && tag.compare(tag.size() - suffix.size(), suffix.size(), suffix) == 0)
          << tag;
    }
  }
  // br preferred but missing: the .gz sibling.
  auto g = srv.get("/static/only-gz.js", "Accept-Encoding: br;q=1, gzip;q=0.8\r\n");
  EXPECT_EQ(g.body, "GZ");
  EXPECT_EQ(field(g.head, "Content-Encoding"), "gzip");
  // No sibling at all: identity, still Vary.
  auto c = srv.get("/static/hello.txt", "Accept-Encoding: br, gzip\r\n");
  EXPECT_EQ(c.body, "Hello, World!\n");
  EXPECT_EQ(field(c.head, "Content-Encoding"), "");
  EXPECT_EQ(field(c.head, "Vary"), "Accept-Encoding");
  // A range addresses the identity bytes.
  auto rg = srv.get("/static/app.js", "Accept-Encoding: br\r\nRange: bytes=0-6\r\n");
  EXPECT_EQ(rg.status, 206);
  EXPECT_EQ(rg.body, "console");
  EXPECT_EQ(field(rg.head, "Content-Encoding"), "");
  // 304 against the variant's own ETag.
  auto brotli = srv.get("/static/app.js", "Accept-Encoding: br\r\n");
  auto nm = srv.get("/static/app.js", "Accept-Encoding: br\r\nIf-None-Match: " + field(brotli.head, "ETag") + "\r\n");
  EXPECT_EQ(nm.status, 304);
  EXPECT_EQ(field(nm.head, "Vary"), "Accept-Encoding");
}

void expect_no_way_out(running& srv) {
  for (const char* path : {
           "/static/../secret.txt", "/static/%2e%2e/secret.txt", "/static/%2E%2E/secret.txt",
           "/static/.%2e/secret.txt", "/static/%2e./secret.txt", "/static/..%2fsecret.txt",
           "/static/..%2Fsecret.txt", "/static/css/..%2f..%2fsecret.txt", "/static/css/../../secret.txt",
           "/static/a%00b", "/static/hello.txt%00.png", "/static/leak.txt", "/static/leak-abs.txt",
           "/static/up/secret.txt", "/static/up", "/static/.env", "/static/%2eenv", "/static/./hello.txt",
           "/static/missing.txt", "/static/hello.txt/", "/static/css/missing/x", "/static//etc/passwd",
           "/static/%2fetc%2fpasswd",
       }) {
    auto r = srv.get(path);
    EXPECT_TRUE(r.status == 404 || r.status == 403) << path << " → " << r.status;
    EXPECT_EQ(r.body.find("top secret"), std::string::npos) << path;
    EXPECT_EQ(r.body.find("PASSWORD"), std::string::npos) << path;
  }
  EXPECT_EQ(srv.get("/static/bad%zzescape").status, 400);
  EXPECT_EQ(srv.get("/static/bad%2").status, 400);
  // Symlinks that stay inside are followed.
  auto a = srv.get("/static/alias.txt");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, "Hello, World!\n");
  auto c = srv.get("/static/alias.css");
  EXPECT_EQ(c.body, "body{color:red}\n");
  EXPECT_EQ(field(c.head, "Content-Type"), "text/css; charset=utf-8");
  // Not a regular file.
  EXPECT_EQ(srv.get("/static/fifo").status, 403);
  // Only GET and HEAD.
  auto p = srv.get("/static/hello.txt", "Content-Length: 0\r\n", "POST");
  EXPECT_EQ(p.status, 405);
  EXPECT_EQ(field(p.head, "Allow"), "GET, HEAD");
}

TEST(http_static, no_way_out_of_the_root) {
  tree t;
  running srv(t.root.string());
  expect_no_way_out(srv);
}

TEST(http_static, no_way_out_of_the_root_without_openat2) {
  tree t;
  saturn::http::detail::pretend_no_openat2 = true;
  running srv(t.root.string());
  saturn::http::detail::pretend_no_openat2 = false;
  expect_no_way_out(srv);
  EXPECT_EQ(srv.get("/static/").body, "<h1>home</h1>\n");  // the root itself is inside
}

TEST(http_static, directories_index_and_hidden) {
  tree t;
  {
    running srv(t.root.string());
    auto root = srv.get("/static/");
    EXPECT_EQ(root.status, 200);
    EXPECT_EQ(root.body, "<h1>home</h1>\n");
    EXPECT_EQ(field(root.head, "Content-Type"), "text/html; charset=utf-8");
    EXPECT_EQ(srv.get("/static/docs/").body, "<h1>docs</h1>\n");
    auto redirect = srv.get("/static/docs?x=1");
    EXPECT_EQ(redirect.status, 301);
    EXPECT_EQ(field(redirect.head, "Location"), "/static/docs/?x=1");
    EXPECT_EQ(srv.get("/static/empty/").status, 403);  // a directory without index
    EXPECT_EQ(srv.get("/static").status, 404);         // the route needs the '/'
  }
  {
    static_options o;
    o.index.clear();
    o.hidden = true;
    running srv(t.root.string(), o);
    EXPECT_EQ(srv.get("/static/").status, 403);
    EXPECT_EQ(srv.get("/static/docs/").status, 403);
    EXPECT_EQ(srv.get("/static/.env").body, "PASSWORD=x\n");
    EXPECT_EQ(srv.get("/static/../secret.txt").status, 404);  // hidden does not allow '..'
  }
  {
    static_options o;
    o.max_file_size = 10;
    running srv(t.root.string(), o);
    EXPECT_EQ(srv.get("/static/hello.txt").status, 403);
    EXPECT_EQ(srv.get("/static/hello.txt", "Range: bytes=0-4\r\n").status, 206);
  }
  {
    running srv((t.base / "no-such-root").string());
    EXPECT_EQ(srv.get("/static/hello.txt").status, 404);
  }
}

TEST(http_static, cache_serves_and_notices_a_change) {
  tree t;
  static_options o;
  o.cache = true;
  running srv(t.root.string(), o);
  EXPECT_EQ(srv.get("/static/hello.txt").body, "Hello, World!\n");
  EXPECT_EQ(srv.get("/static/hello.txt").body, "Hello, World!\n");  // from memory
  EXPECT_EQ(srv.get("/static/hello.txt", "Range: bytes=0-4\r\n").body, "Hello");
  EXPECT_EQ(srv.get("/static/hello.txt", "", "HEAD").status, 200);
  // Same size, same mtime: the cache cannot tell, so the bytes in memory are served — which
  // shows they come from memory.
  struct ::stat sb {};
  ASSERT_EQ(::stat((t.root / "hello.txt").c_str(), &sb), 0);
  tree::write(t.root / "hello.txt", "HELLO, WORLD!\n");
  const ::timespec times[2] = {sb.st_atim, sb.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, (t.root / "hello.txt").c_str(), times, 0), 0);
  std::this_thread::sleep_for(1100ms);  // past the revalidation: statx sees the same size and mtime
  EXPECT_EQ(srv.get("/static/hello.txt").body, "Hello, World!\n");
  // A change (size and mtime) is seen once the entry is older than a second.
  tree::write(t.root / "hello.txt", "changed\n");
  std::string body;
  for (int i = 0; i < 60 && body != "changed\n"; ++i) {
    std::this_thread::sleep_for(100ms);
    body = srv.get("/static/hello.txt").body;
  }
  EXPECT_EQ(body, "changed\n");
  ::unlink((t.root / "hello.txt").c_str());
  int status = 200;
  for (int i = 0; i < 60 && status == 200; ++i) {
    std::this_thread::sleep_for(100ms);
    status = srv.get("/static/hello.txt").status;
  }
  EXPECT_EQ(status, 404);
}

TEST(http_static_detail, decode_path) {
  using saturn::http::detail::decode_static_path;
  using saturn::http::detail::path_verdict;
  std::string out;
  EXPECT_EQ(decode_static_path("a/b.txt", false, out), path_verdict::ok);
  EXPECT_EQ(out, "a/b.txt");
  EXPECT_EQ(decode_static_path("//a//b/", false, out), path_verdict::ok);
  EXPECT_EQ(out, "a/b/");
  EXPECT_EQ(decode_static_path("", false, out), path_verdict::ok);
  EXPECT_EQ(out, "");
  EXPECT_EQ(decode_static_path("a%20b%5Cc", false, out), path_verdict::ok);
  EXPECT_EQ(out, "a b\\c");
  EXPECT_EQ(decode_static_path("a%2Fb", false, out), path_verdict::ok);
  EXPECT_EQ(out, "a/b");
  EXPECT_EQ(decode_static_path("a..b/c..", false, out), path_verdict::ok);  // ".." inside a name is fine
  for (const char* bad : {"..", "../x", "a/..", "a/../b", "%2e%2e", ".%2E/x", "..%2fx", "a%00b", ".", "./x",
                          ".hidden", "a/.git/config"})
    EXPECT_EQ(decode_static_path(bad, false, out), path_verdict::not_found) << bad;
  EXPECT_EQ(decode_static_path(".hidden", true, out), path_verdict::ok);
  EXPECT_EQ(decode_static_path("..", true, out), path_verdict::not_found);
  for (const char* bad : {"%", "%2", "%zz", "a%g0"})
    EXPECT_EQ(decode_static_path(bad, false, out), path_verdict::bad_escape) << bad;
}

TEST(http_static_detail, dates_etags_and_ranges) {
  using namespace saturn::http::detail;
  EXPECT_EQ(imf_fixdate(784111777), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(parse_imf_fixdate("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777);
  EXPECT_EQ(parse_imf_fixdate("Sunday, 06-Nov-94 08:49:37 GMT"), std::nullopt);
  EXPECT_EQ(parse_imf_fixdate("Sun, 06 Foo 1994 08:49:37 GMT"), std::nullopt);
  EXPECT_EQ(parse_imf_fixdate(""), std::nullopt);
  EXPECT_EQ(make_etag(14, 0x1234), "\"e-1234\"");
  EXPECT_TRUE(none_match_hits("\"a\", \"e-1\"", "\"e-1\""));
  EXPECT_TRUE(none_match_hits("W/\"e-1\"", "\"e-1\""));
  EXPECT_FALSE(none_match_hits("\"e-10\"", "\"e-1\""));
  EXPECT_FALSE(none_match_hits("e-1", "\"e-1\""));
  EXPECT_FALSE(none_match_hits("", "\"e-1\""));
  auto r = parse_range("bytes=2-", 10);
  EXPECT_EQ(r.kind, range_request::single);
  EXPECT_EQ(r.range.first, 2u);
  EXPECT_EQ(r.range.last, 9u);
  EXPECT_EQ(parse_range("Bytes=0-0", 10).kind, range_request::single);
  EXPECT_EQ(parse_range("bytes=", 10).kind, range_request::none);
  EXPECT_EQ(parse_range("bytes=-", 10).kind, range_request::none);
  EXPECT_EQ(parse_range("bytes=1-2-3", 10).kind, range_request::none);
  EXPECT_EQ(parse_range("bytes=99999999999999999999-", 10).kind, range_request::none);
  EXPECT_EQ(parse_range("bytes=10-", 10).kind, range_request::unsatisfiable);
  EXPECT_EQ(parse_range("bytes=-5", 0).kind, range_request::unsatisfiable);
}

}  // namespace
