// arena-beast: the `arena` suite's Boost.Beast peer (bench/peers/arena/README.md,
// docs/arena.md §2, §4 json-tls), written the way Beast's own examples write a server
// (advanced_server, http_server_async, websocket_server_async; see README.md).
//
//   arena-beast --port P --threads W --data DIR [--tls-port Q --tls-cert CRT --tls-key KEY]
//
// One io_context run by W threads; a listener per port does async_accept onto a new
// strand; a session per connection reads one request (header first, so /upload can
// stream its body and Expect: 100-continue can be answered), writes the response and
// only then reads the next one — pipelined requests wait in the flat_buffer and are
// answered in order. A WebSocket upgrade hands the socket to a websocket::stream
// session that echoes every message with its opcode. The TLS listener runs the same
// HTTP session over beast::ssl_stream<beast::tcp_stream> (ALPN: http/1.1 only).
// SIGTERM/SIGINT stop the io_context (asio::signal_set); main returns 0.
//
//   GET|POST /baseline11?a=&b=  text/plain   a+b (+ the integer body of a POST)
//   GET /pipeline               text/plain   ok
//   GET /json/{count}?m=        application/json, serialised per request (nlohmann);
//                               gzip (zlib level 6) or br (quality 4) on Accept-Encoding
//   POST /upload                text/plain   the number of body bytes read (streamed)
//   GET /static/<file>          the file (http::file_body, read per request), or its
//                               .br / .gz sibling when Accept-Encoding allows it
//   GET /ws                     WebSocket echo (426 without an upgrade)
#include <boost/asio.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/version.hpp>
#include <boost/beast/websocket.hpp>
#include <brotli/encode.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "peer_bench.hpp"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using beast::error_code;

namespace {

constexpr const char* kUsage =
    "arena-beast --port P [--threads W] --data DIR [--tls-port Q --tls-cert CRT --tls-key KEY]";

// ------------------------------------------------------------------ data loaded at start
struct static_file {
  std::string path;  // DIR/static/<name>
  std::string content_type;
  bool has_gz = false;
  bool has_br = false;
};

struct app_data {
  nlohmann::json dataset;  // the array from DIR/dataset.json
  std::unordered_map<std::string, static_file> files;  // by name relative to DIR/static
};

const app_data* g_data = nullptr;

std::string mime_type(std::string_view path) {
  auto dot = path.rfind('.');
  std::string_view ext = dot == std::string_view::npos ? "" : path.substr(dot);
  if (ext == ".css") return "text/css";
  if (ext == ".js") return "application/javascript";
  if (ext == ".json") return "application/json";
  if (ext == ".html" || ext == ".htm") return "text/html";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".webp") return "image/webp";
  if (ext == ".woff2") return "font/woff2";
  if (ext == ".woff") return "font/woff";
  if (ext == ".png") return "image/png";
  if (ext == ".jpg" || ext == ".jpeg") return "image/jpeg";
  if (ext == ".txt") return "text/plain";
  return "application/octet-stream";
}

app_data load_data(const std::string& dir) {
  app_data d;
  std::ifstream in(dir + "/dataset.json", std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + dir + "/dataset.json");
  d.dataset = nlohmann::json::parse(in);
  if (!d.dataset.is_array()) throw std::runtime_error(dir + "/dataset.json is not an array");
  namespace fs = std::filesystem;
  const fs::path root = fs::path(dir) / "static";
  std::error_code ec;
  if (fs::is_directory(root, ec)) {
    for (const auto& e : fs::recursive_directory_iterator(root, ec)) {
      if (!e.is_regular_file()) continue;
      std::string name = fs::relative(e.path(), root).generic_string();
      if (name.size() > 3 && (name.compare(name.size() - 3, 3, ".gz") == 0 ||
                              name.compare(name.size() - 3, 3, ".br") == 0))
        continue;
      static_file f;
      f.path = e.path().string();
      f.content_type = mime_type(name);
      f.has_gz = fs::is_regular_file(f.path + ".gz", ec);
      f.has_br = fs::is_regular_file(f.path + ".br", ec);
      d.files.emplace(std::move(name), std::move(f));
    }
  }
  return d;
}

// ------------------------------------------------------------------ small helpers
bool iequals(std::string_view a, std::string_view b) {
  return beast::iequals(beast::string_view(a.data(), a.size()), beast::string_view(b.data(), b.size()));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The value of `name` in a query string, if present.
std::optional<std::string_view> query_param(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    auto amp = query.find('&');
    std::string_view kv = query.substr(0, amp);
    auto eq = kv.find('=');
    if (kv.substr(0, eq) == name) return eq == std::string_view::npos ? "" : kv.substr(eq + 1);
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

// A decimal integer (leading zeros and a sign allowed), or nullopt.
std::optional<long long> to_int(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  bool neg = false;
  if (s.front() == '-' || s.front() == '+') {
    neg = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty() || s.size() > 18) return std::nullopt;
  long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return neg ? -v : v;
}

// Accept-Encoding negotiation (RFC 9110 §12.5.3): the q of each coding, `*` for the
// ones not named, q=0 refuses. Returns "br", "gzip" or "" (identity); br wins a tie.
std::string_view choose_encoding(std::string_view ae, bool br_ok, bool gzip_ok) {
  double q_br = -1, q_gzip = -1, q_star = -1;
  while (!ae.empty()) {
    auto comma = ae.find(',');
    std::string_view item = trim(ae.substr(0, comma));
    ae = comma == std::string_view::npos ? std::string_view{} : ae.substr(comma + 1);
    auto semi = item.find(';');
    std::string_view coding = trim(item.substr(0, semi));
    double q = 1;
    if (semi != std::string_view::npos) {
      std::string_view params = item.substr(semi + 1);
      while (!params.empty()) {
        auto s2 = params.find(';');
        std::string_view p = trim(params.substr(0, s2));
        if (p.size() >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=')
          q = std::atof(std::string(trim(p.substr(2))).c_str());
        params = s2 == std::string_view::npos ? std::string_view{} : params.substr(s2 + 1);
      }
    }
    if (iequals(coding, "br")) q_br = q;
    else if (iequals(coding, "gzip") || iequals(coding, "x-gzip")) q_gzip = q;
    else if (coding == "*") q_star = q;
  }
  if (q_br < 0) q_br = q_star;
  if (q_gzip < 0) q_gzip = q_star;
  if (!br_ok) q_br = -1;
  if (!gzip_ok) q_gzip = -1;
  if (q_br > 0 && q_br >= q_gzip) return "br";
  if (q_gzip > 0) return "gzip";
  return "";
}

// gzip with zlib's default level (6), the level a zlib user gets by asking for none.
std::string gzip(std::string_view in) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2");
  std::string out(deflateBound(&z, uLong(in.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = uInt(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate");
  return out;
}

// brotli at quality 4, a usual choice for dynamic content (11 is for precompression).
constexpr int kBrotliQuality = 4;
std::string brotli(std::string_view in) {
  std::size_t n = BrotliEncoderMaxCompressedSize(in.size());
  std::string out(n, '\0');
  if (!BrotliEncoderCompress(kBrotliQuality, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT, in.size(),
                             reinterpret_cast<const uint8_t*>(in.data()), &n,
                             reinterpret_cast<uint8_t*>(out.data())))
    throw std::runtime_error("BrotliEncoderCompress");
  out.resize(n);
  return out;
}

void fail(error_code ec, const char* what) {
  // Ordinary ends of connections are not worth a line (as in Beast's examples, minus
  // the noise of a load test).
  if (ec == asio::error::operation_aborted || ec == beast::error::timeout || ec == http::error::end_of_stream ||
      ec == asio::error::eof || ec == asio::error::connection_reset || ec == asio::ssl::error::stream_truncated ||
      ec == websocket::error::closed || ec == asio::error::broken_pipe)
    return;
  (void)what;
}

// ------------------------------------------------------------------ WebSocket echo session
// websocket_server_async's session, accepting an upgrade request already read.
class websocket_session : public std::enable_shared_from_this<websocket_session> {
 public:
  explicit websocket_session(tcp::socket&& socket) : m_ws(std::move(socket)) {}

  template <class Body, class Allocator>
  void run(http::request<Body, http::basic_fields<Allocator>> req) {
    m_ws.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    // Echo frame for frame: a message goes back as one frame, not cut into
    // write_buffer_bytes (4 KB) fragments (gcannon and the validator count frames).
    m_ws.auto_fragment(false);
    m_ws.set_option(websocket::stream_base::decorator([](websocket::response_type& res) {
      res.set(http::field::server, BOOST_BEAST_VERSION_STRING);
    }));
    m_ws.async_accept(req, beast::bind_front_handler(&websocket_session::on_accept, shared_from_this()));
  }

 private:
  void on_accept(error_code ec) {
    if (ec) return fail(ec, "ws accept");
    do_read();
  }
  void do_read() {
    m_ws.async_read(m_buffer, beast::bind_front_handler(&websocket_session::on_read, shared_from_this()));
  }
  void on_read(error_code ec, std::size_t) {
    if (ec) return fail(ec, "ws read");  // websocket::error::closed: Beast answered the close
    m_ws.text(m_ws.got_text());
    m_ws.async_write(m_buffer.data(), beast::bind_front_handler(&websocket_session::on_write, shared_from_this()));
  }
  void on_write(error_code ec, std::size_t n) {
    if (ec) return fail(ec, "ws write");
    m_buffer.consume(n);
    do_read();
  }

  websocket::stream<beast::tcp_stream> m_ws;
  beast::flat_buffer m_buffer;
};

// ------------------------------------------------------------------ HTTP session
template <class Stream>
constexpr bool is_tls = !std::is_same_v<Stream, beast::tcp_stream>;

template <class Stream>
class http_session : public std::enable_shared_from_this<http_session<Stream>> {
 public:
  template <class... Args>
  explicit http_session(Args&&... args) : m_stream(std::forward<Args>(args)...) {}

  void run() {
    // As in Beast's examples: start on the connection's strand.
    asio::dispatch(m_stream.get_executor(), beast::bind_front_handler(&http_session::on_run, this->shared_from_this()));
  }

 private:
  using self = http_session;
  static constexpr auto kTimeout = std::chrono::seconds(30);
  static constexpr std::uint64_t kBodyLimit = 1024 * 1024;  // request_parser's default
  static constexpr std::uint64_t kNoLimit = std::numeric_limits<std::uint64_t>::max();

  void on_run() {
    if constexpr (is_tls<Stream>) {
      beast::get_lowest_layer(m_stream).expires_after(kTimeout);
      m_stream.async_handshake(ssl::stream_base::server,
                               beast::bind_front_handler(&self::on_handshake, this->shared_from_this()));
    } else {
      do_read();
    }
  }
  void on_handshake(error_code ec) {
    if (ec) return fail(ec, "handshake");
    do_read();
  }

  // ---- reading: the header first (Beast's "Expect: 100-continue" and incremental-read
  // recipes), then the body into a string, or counted chunk by chunk for /upload.
  void do_read() {
    m_header.emplace();
    // Beast checks Content-Length against the limit when the header ends: no limit on
    // the header parser; the string body gets Beast's default (1 MB) below. (Not
    // boost::none: Boost 1.74 compares `len_ > body_limit_` against the optional, and a
    // disengaged optional is less than every length.)
    m_header->body_limit(kNoLimit);
    m_body.reset();
    m_upload.reset();
    beast::get_lowest_layer(m_stream).expires_after(kTimeout);
    http::async_read_header(m_stream, m_buffer, *m_header,
                            beast::bind_front_handler(&self::on_header, this->shared_from_this()));
  }

  void on_header(error_code ec, std::size_t) {
    if (ec == http::error::end_of_stream) return do_close();
    if (ec) return fail(ec, "read header");
    auto& h = m_header->get();
    const bool upload = h.method() == http::verb::post && path_of(h.target()) == "/upload";
    if (upload) {
      m_upload.emplace(std::move(*m_header));
      m_upload->body_limit(kNoLimit);  // counted, never stored
    } else {
      m_body.emplace(std::move(*m_header));
      const auto cl = m_body->content_length();
      if (cl && *cl > kBodyLimit) {
        return send(text(m_body->get().version(), false, http::status::payload_too_large, "text/plain", "body too large"));
      }
      m_body->body_limit(kBodyLimit);
    }
    const http::fields& msg = upload ? static_cast<const http::fields&>(m_upload->get())
                                      : static_cast<const http::fields&>(m_body->get());
    const bool is_done = upload ? m_upload->is_done() : m_body->is_done();
    if (!is_done && beast::iequals(msg[http::field::expect], "100-continue")) {
      auto res = std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
      http::async_write(m_stream, *res, [self = this->shared_from_this(), res, upload](error_code ec, std::size_t) {
        if (ec) return fail(ec, "write 100");
        upload ? self->read_upload() : self->read_body();
      });
      return;
    }
    upload ? read_upload() : read_body();
  }

  void read_body() {
    http::async_read(m_stream, m_buffer, *m_body, beast::bind_front_handler(&self::on_body, this->shared_from_this()));
  }
  void on_body(error_code ec, std::size_t) {
    if (ec) return fail(ec, "read body");
    handle(m_body->release());
  }

  void read_upload() {
    if (m_upload->is_done()) return on_upload_done();
    // flat_buffer starts at 512 bytes and read_some reads only what fits: without this a
    // 2 MiB body took 4,096 recvmsg calls of 512 bytes (strace). A Beast user streaming
    // large bodies reserves room once, as here (64 KiB, kept for the connection).
    if (m_buffer.capacity() < kUploadRead) m_buffer.reserve(kUploadRead);
    auto& body = m_upload->get().body();
    body.data = m_chunk.data();
    body.size = m_chunk.size();
    beast::get_lowest_layer(m_stream).expires_after(kTimeout);
    http::async_read_some(m_stream, m_buffer, *m_upload,
                          beast::bind_front_handler(&self::on_upload, this->shared_from_this()));
  }
  void on_upload(error_code ec, std::size_t) {
    if (ec == http::error::need_buffer) ec = {};  // the chunk buffer is full: count and go on
    if (ec) return fail(ec, "read upload");
    m_uploaded += m_chunk.size() - m_upload->get().body().size;
    read_upload();
  }
  void on_upload_done() {
    auto req = m_upload->release();
    const std::uint64_t n = m_uploaded;
    m_uploaded = 0;
    send(text(req.version(), req.keep_alive(), http::status::ok, "text/plain", std::to_string(n)));
  }

  // ---- routing
  static std::string_view path_of(beast::string_view target) {
    std::string_view t(target.data(), target.size());
    return t.substr(0, t.find('?'));
  }
  static std::string_view query_of(beast::string_view target) {
    std::string_view t(target.data(), target.size());
    auto q = t.find('?');
    return q == std::string_view::npos ? std::string_view{} : t.substr(q + 1);
  }

  static http::response<http::string_body> text(unsigned version, bool keep_alive, http::status status,
                                                const char* type, std::string body) {
    http::response<http::string_body> res{status, version};
    res.set(http::field::server, BOOST_BEAST_VERSION_STRING);
    res.set(http::field::content_type, type);
    res.keep_alive(keep_alive);
    res.body() = std::move(body);
    res.prepare_payload();
    return res;
  }

  void handle(http::request<http::string_body>&& req) {
    const std::string_view path = path_of(req.target());
    const std::string_view query = query_of(req.target());
    const unsigned v = req.version();
    const bool ka = req.keep_alive();
    const auto method = req.method();
    auto status_text = [&](http::status st, const char* msg) {
      return send(text(v, ka, st, "text/plain", msg));
    };

    if (path == "/baseline11") {
      if (method != http::verb::get && method != http::verb::post) return status_text(http::status::method_not_allowed, "method not allowed");
      auto a = to_int(query_param(query, "a").value_or("0"));
      auto b = to_int(query_param(query, "b").value_or("0"));
      long long sum = a.value_or(0) + b.value_or(0);
      if (method == http::verb::post && !trim(req.body()).empty()) {
        auto n = to_int(req.body());
        if (!n) return status_text(http::status::bad_request, "body is not an integer");
        sum += *n;
      }
      if (!a || !b) return status_text(http::status::bad_request, "a and b must be integers");
      return send(text(v, ka, http::status::ok, "text/plain", std::to_string(sum)));
    }
    if (path == "/pipeline" && method == http::verb::get) return send(text(v, ka, http::status::ok, "text/plain", "ok"));
    if (path.rfind("/json/", 0) == 0 && method == http::verb::get) {
      auto count = to_int(path.substr(6));
      if (!count) return status_text(http::status::not_found, "not found");
      const long long max = static_cast<long long>(g_data->dataset.size());
      const long long n = std::clamp<long long>(*count, 1, std::max<long long>(1, max));
      long long m = 1;
      if (auto mp = query_param(query, "m"); mp && !mp->empty()) {
        auto mv = to_int(*mp);
        if (!mv) return status_text(http::status::bad_request, "m must be an integer");
        m = *mv;
      }
      nlohmann::json items = nlohmann::json::array();
      for (long long i = 0; i < n && i < max; ++i) {
        nlohmann::json item = g_data->dataset[std::size_t(i)];
        item["total"] = item["price"].get<long long>() * item["quantity"].get<long long>() * m;
        items.push_back(std::move(item));
      }
      nlohmann::json doc = {{"items", std::move(items)}, {"count", n}};
      std::string body = doc.dump();
      http::response<http::string_body> res{http::status::ok, v};
      res.set(http::field::server, BOOST_BEAST_VERSION_STRING);
      res.set(http::field::content_type, "application/json");
      res.set(http::field::vary, "Accept-Encoding");
      const std::string_view enc = choose_encoding(sv(req[http::field::accept_encoding]), true, true);
      if (enc == "br") {
        res.set(http::field::content_encoding, "br");
        body = brotli(body);
      } else if (enc == "gzip") {
        res.set(http::field::content_encoding, "gzip");
        body = gzip(body);
      }
      res.keep_alive(ka);
      res.body() = std::move(body);
      res.prepare_payload();
      return send(std::move(res));
    }
    if (path.rfind("/static/", 0) == 0 && method == http::verb::get) {
      auto it = g_data->files.find(std::string(path.substr(8)));
      if (it == g_data->files.end()) return status_text(http::status::not_found, "not found");
      const static_file& f = it->second;
      const std::string_view enc = choose_encoding(sv(req[http::field::accept_encoding]), f.has_br, f.has_gz);
      const std::string file = enc == "br" ? f.path + ".br" : enc == "gzip" ? f.path + ".gz" : f.path;
      // http_server_async's file serving: http::file_body opened per request.
      beast::error_code ec;
      http::file_body::value_type body;
      body.open(file.c_str(), beast::file_mode::scan, ec);
      if (ec) return status_text(http::status::not_found, "not found");
      const auto size = body.size();
      http::response<http::file_body> res{std::piecewise_construct, std::make_tuple(std::move(body)),
                                          std::make_tuple(http::status::ok, v)};
      res.set(http::field::server, BOOST_BEAST_VERSION_STRING);
      res.set(http::field::content_type, f.content_type);
      if (f.has_br || f.has_gz) res.set(http::field::vary, "Accept-Encoding");
      if (!enc.empty()) res.set(http::field::content_encoding, beast::string_view(enc.data(), enc.size()));
      res.content_length(size);
      res.keep_alive(ka);
      return send(std::move(res));
    }
    if (path == "/ws") {
      if constexpr (!is_tls<Stream>) {
        if (websocket::is_upgrade(req)) {
          // websocket_server_async / advanced_server: the session's socket moves on.
          beast::get_lowest_layer(m_stream).expires_never();
          std::make_shared<websocket_session>(m_stream.release_socket())->run(std::move(req));
          return;
        }
      }
      return status_text(http::status::upgrade_required, "websocket upgrade required");
    }
    if (path == "/upload") return status_text(http::status::method_not_allowed, "method not allowed");
    return status_text(http::status::not_found, "not found");
  }

  static std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }

  // ---- writing: http_server_async's send_lambda — keep the message alive until written,
  // then read the next request (or close).
  template <class Body>
  void send(http::response<Body>&& msg) {
    auto sp = std::make_shared<http::response<Body>>(std::move(msg));
    m_res = sp;
    http::async_write(m_stream, *sp,
                      beast::bind_front_handler(&self::on_write, this->shared_from_this(), sp->need_eof()));
  }
  void on_write(bool close, error_code ec, std::size_t) {
    if (ec) return fail(ec, "write");
    m_res.reset();
    if (close) return do_close();
    do_read();
  }

  void do_close() {
    if constexpr (is_tls<Stream>) {
      beast::get_lowest_layer(m_stream).expires_after(kTimeout);
      m_stream.async_shutdown([self = this->shared_from_this()](error_code) {});
    } else {
      error_code ec;
      m_stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    }
  }

  Stream m_stream;
  static constexpr std::size_t kUploadRead = 65536;
  beast::flat_buffer m_buffer;
  std::optional<http::request_parser<http::empty_body>> m_header;
  std::optional<http::request_parser<http::string_body>> m_body;
  std::optional<http::request_parser<http::buffer_body>> m_upload;
  std::uint64_t m_uploaded = 0;
  std::vector<char> m_chunk = std::vector<char>(64 * 1024);
  std::shared_ptr<void> m_res;
};

// ------------------------------------------------------------------ listener
// advanced_server's listener: async_accept onto a new strand per connection.
class listener : public std::enable_shared_from_this<listener> {
 public:
  listener(asio::io_context& ioc, tcp::endpoint at, ssl::context* tls) : m_ioc(ioc), m_acceptor(ioc), m_tls(tls) {
    m_acceptor.open(at.protocol());
    m_acceptor.set_option(asio::socket_base::reuse_address(true));
    m_acceptor.bind(at);
    m_acceptor.listen(asio::socket_base::max_listen_connections);
  }
  void run() { do_accept(); }

 private:
  void do_accept() {
    m_acceptor.async_accept(asio::make_strand(m_ioc), beast::bind_front_handler(&listener::on_accept, shared_from_this()));
  }
  void on_accept(error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec == asio::error::operation_aborted) return;
      // EMFILE and friends: try again shortly rather than spin.
      auto t = std::make_shared<asio::steady_timer>(m_ioc, std::chrono::milliseconds(10));
      t->async_wait([self = shared_from_this(), t](error_code) { self->do_accept(); });
      return;
    }
    socket.set_option(tcp::no_delay(true), ec);
    if (m_tls)
      std::make_shared<http_session<beast::ssl_stream<beast::tcp_stream>>>(std::move(socket), *m_tls)->run();
    else
      std::make_shared<http_session<beast::tcp_stream>>(std::move(socket))->run();
    do_accept();
  }

  asio::io_context& m_ioc;
  tcp::acceptor m_acceptor;
  ssl::context* m_tls;
};

// ALPN: the TLS port speaks HTTP/1.1 only.
int select_alpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in, unsigned int inlen, void*) {
  static const unsigned char ours[] = "\x08http/1.1";
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, outlen, ours, sizeof ours - 1, in, inlen) != OPENSSL_NPN_NEGOTIATED)
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

unsigned short parse_port(const peer::options& o, const char* flag, bool required) {
  std::string v = o.value_of(flag, required ? "" : "0");
  long long p = peer::parse_count(kUsage, std::string("--") + flag, v.c_str());
  if (p > 65535) peer::usage_error(kUsage, std::string("--") + flag + " must be below 65536");
  return static_cast<unsigned short>(p);
}

}  // namespace

int main(int argc, char** argv) {
  peer::options o = peer::parse_options(argc, argv, kUsage, {"port", "data", "tls-port", "tls-cert", "tls-key"});
  const unsigned short port = parse_port(o, "port", true);
  const unsigned short tls_port = parse_port(o, "tls-port", false);
  const std::string dir = o.value_of("data", "");
  if (dir.empty()) peer::usage_error(kUsage, "--data DIR is required");

  app_data data;
  try {
    data = load_data(dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "arena-beast: %s\n", e.what());
    return 1;
  }
  g_data = &data;

  asio::io_context ioc{o.threads};
  std::optional<ssl::context> tls;
  try {
    const auto loopback = asio::ip::address_v4::loopback();
    std::make_shared<listener>(ioc, tcp::endpoint(loopback, port), nullptr)->run();
    if (tls_port > 0) {
      tls.emplace(ssl::context::tls_server);
      tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                       ssl::context::single_dh_use);
      tls->use_certificate_chain_file(o.value_of("tls-cert", "/certs/server.crt"));
      tls->use_private_key_file(o.value_of("tls-key", "/certs/server.key"), ssl::context::pem);
      SSL_CTX_set_alpn_select_cb(tls->native_handle(), select_alpn, nullptr);
      std::make_shared<listener>(ioc, tcp::endpoint(loopback, tls_port), &*tls)->run();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "arena-beast: listen on 127.0.0.1:%u/%u: %s\n", port, tls_port, e.what());
    return 1;
  }

  asio::signal_set signals(ioc, SIGINT, SIGTERM);
  signals.async_wait([&ioc](error_code, int) { ioc.stop(); });

  std::vector<std::thread> threads;
  for (int i = 1; i < o.threads; ++i) threads.emplace_back([&ioc] { ioc.run(); });
  ioc.run();
  for (auto& t : threads) t.join();
  return 0;
}
