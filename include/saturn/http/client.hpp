/// \file
/// `http::client`: an HTTP/1.1 client with a keep-alive connection pool per origin, over
/// TCP or TLS, on the ring.
///
/// ```
/// saturn::http::client c;                                   // one per program, or per service
/// auto r = co_await c.get("http://127.0.0.1:8080/json");
/// if (!r) co_return;                                        // r.err().message() says what failed
/// std::string_view type = r->header("content-type");
/// // r->status, r->body (decoded from gzip or br when the server sent it so)
///
/// saturn::http::client_request up;                          // a POST with a streamed answer
/// up.method = "POST";
/// up.url = "http://127.0.0.1:8080/upload";
/// up.body = "payload";
/// auto s = co_await c.send(std::move(up));
/// if (!s) co_return;
/// std::vector<std::byte> buf(64 * 1024);
/// for (;;) {
///   auto n = co_await s->read(buf);                         // the body piece by piece
///   if (!n || *n == 0) break;
/// }
/// ```
///
/// The pool: connections are kept per origin (scheme, host, port), at most
/// max_connections_per_host open at once per origin (more requests wait for one to come
/// free, in arrival order). A connection goes back to the pool only when its response was
/// read to the end and neither side said `Connection: close`; an idle one older than
/// idle_timeout is closed instead of used. A pooled connection the server has closed
/// meanwhile (its half-close or reset shows on the first read) is retried once on a new
/// connection if no byte of the answer came — always for GET, HEAD, PUT, DELETE, OPTIONS
/// (idempotent, RFC 9110 §9.2.2), never for a POST.
///
/// Requests carry Host, Content-Length (or chunked Transfer-Encoding for a streamed
/// body_source), `Accept-Encoding: gzip, br` when decompress is on (the answer is then
/// decoded whatever its size, bounded by max_body), and the caller's fields. Answers are
/// parsed by http::response_parser (strict; see response_parser.hpp), 1xx interim
/// answers skipped. Host names go through net::connect: numeric addresses directly,
/// names by net::resolve (c-ares on the ring, /etc/hosts first), each address tried in
/// turn with connect_timeout per attempt.
///
/// Threading: a client may be used by any number of tasks at once, on any workers (its
/// pool is under mutexes held for a few instructions, never across a suspension; a
/// request URL seen before on the same thread is not parsed again: each thread keeps
/// the last few URLs it sent to, parsed, with their origin's pool). Every
/// await is cancellable through the task's stop token: the connection in use is then
/// closed, never reused. The client must outlive the tasks that use it and every
/// response_stream it returned.
#pragma once

#include <saturn/http/compression.hpp>
#include <saturn/http/response_parser.hpp>
#include <saturn/net/resolve.hpp>
#include <saturn/result.hpp>
#include <saturn/task/task.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace saturn::tls {
class context;
}

namespace saturn::http {

/// An absolute http:// or https:// URL, split.
struct url {
  bool https = false;
  std::string host;        ///< as written, brackets of an IPv6 literal removed
  std::uint16_t port = 0;  ///< the explicit port, else 80 / 443
  std::string target;      ///< path and query ("/" when empty); the fragment dropped
  /// The Host field's value: host, bracketed if IPv6, with ":port" unless the default.
  std::string authority() const;
};

/// Parses `text`. Errors (invalid_argument, with the reason): another scheme, no host,
/// a bad port, userinfo, bytes outside RFC 3986. Threading: any thread.
result<url> parse_url(std::string_view text);

/// Client settings.
struct client_options {
  std::size_t max_connections_per_host = 8;
  /// Per address tried (a name may resolve to several).
  std::chrono::milliseconds connect_timeout{5000};
  /// How names are resolved (family, DNS servers, timeout, tries).
  net::resolve_options resolve{};
  /// From sending the request to the end of the response head; a streamed body's reads
  /// each get this much too.
  std::chrono::milliseconds timeout{30000};
  /// A pooled connection unused for this long is closed rather than reused.
  std::chrono::milliseconds idle_timeout{30000};
  /// Largest body request() and read_all() accept, decoded (413-like: an error, the
  /// connection closed).
  std::size_t max_body = std::size_t{64} << 20;
  /// Ask for and decode gzip and br.
  bool decompress = true;
  /// Follow 301/302/303/307/308 up to this many times (303, and 301/302 after a POST,
  /// become a GET without body, as browsers do); 0: answers are returned as they are.
  int max_redirects = 0;
  /// TLS for https (verification, CA file, ALPN); nullptr: a verifying context on the
  /// system's CA store, made on first use.
  const tls::context* tls = nullptr;
  std::string user_agent = "saturn-http-client";
};

/// One request.
struct client_request {
  std::string method = "GET";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  /// A streamed body instead of `body`: called with a buffer until it returns 0 (the
  /// end) or an error; sent chunked. Such a request is never retried.
  std::function<task<result<std::size_t>>(std::span<std::byte>)> body_source;
};

/// A whole response.
struct client_response {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  /// The first field named `name` (case-insensitive), or empty.
  std::string_view header(std::string_view name) const noexcept;
};

class client;
namespace detail {
struct client_pool;
struct client_conn;
struct origin_pool;
struct target;

/// A request's hold on a pool slot of its origin and, once connected, on a connection
/// (internal: kept inline in the request's frame and in response_stream). Destroying or
/// reset() gives the connection back to the pool (when `reusable` and fully read) or
/// closes it, then frees the slot. Move-only; one task at a time.
class conn_lease {
 public:
  // Out of line, like every member: client_conn is complete only in the client's source.
  conn_lease() noexcept;
  explicit conn_lease(origin_pool* o) noexcept;
  conn_lease(conn_lease&& o) noexcept;
  conn_lease& operator=(conn_lease&& o) noexcept;
  ~conn_lease();
  void reset() noexcept;
  /// Holds a slot (not reset, not moved from).
  explicit operator bool() const noexcept { return origin != nullptr; }

  origin_pool* origin = nullptr;
  std::unique_ptr<client_conn> conn;
  bool reusable = false;
};
}  // namespace detail

/// A response whose body is read piece by piece. Move-only. Destroying it before the end
/// of the body closes the connection (it is not reused); after the end, it returns to the
/// pool. Threading: one task at a time.
class response_stream {
 public:
  response_stream(response_stream&&) noexcept;
  response_stream& operator=(response_stream&&) noexcept;
  ~response_stream();

  int status() const noexcept { return m_head.status; }
  const response_head& head() const noexcept { return m_head; }
  /// The next body bytes (decoded when the server used gzip or br and decompress is on)
  /// into `buf`: their count, 0 once the body has ended. Errors: the connection failed or
  /// closed inside the body ("http client: truncated..."), bad framing, a decoding error,
  /// a timeout, or more than max_body bytes.
  task<result<std::size_t>> read(std::span<std::byte> buf);
  /// Everything left, up to `limit` bytes (an error past it).
  task<result<std::string>> read_all(std::size_t limit);
  /// True once the body has been read to its end.
  bool finished() const noexcept { return m_finished; }

 private:
  friend class client;
  response_stream(detail::conn_lease lease, response_head head) noexcept;
  /// Fills m_pending with decoded bytes, or sets m_finished.
  task<result<void>> fill();

  /// The body's framing and coding state.
  struct decoder {
    explicit decoder(const response_head& h) noexcept : body(h) {}
    body_decoder body;
    std::optional<stream_decoder> coded;  // gzip / br
    std::size_t total = 0;                // decoded bytes handed out or pending
    std::size_t max_body = 0;
    std::chrono::milliseconds timeout{};
    const std::string* origin = nullptr;  // the origin's name for errors (owned by the pool)
  };

  detail::conn_lease m_lease;
  response_head m_head;
  decoder m_dec;  // after m_head: made from it
  std::string m_pending;  // decoded, not yet handed out
  std::size_t m_pending_off = 0;
  bool m_finished = false;
};

/// See the file comment.
class client {
 public:
  explicit client(client_options opts = {});
  ~client();
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  /// Sends `req` and reads the whole answer (up to max_body). Errors say what failed:
  /// "http client: connect 127.0.0.1:9: Connection refused", "... timed out", a parse
  /// error of the answer, a body over max_body.
  task<result<client_response>> request(client_request req);
  /// request() of a GET.
  task<result<client_response>> get(std::string_view url);
  /// Sends `req` and returns once the answer's head is in; the body is read from the
  /// stream.
  task<result<response_stream>> send(client_request req);

  /// Connections opened so far, and idle ones in the pool now (for tests and metrics).
  std::size_t connections_opened() const noexcept;
  std::size_t idle_connections() const noexcept;

 private:
  task<result<response_stream>> send_once(const client_request& req, const detail::target& t, bool& retryable);
  std::unique_ptr<detail::client_pool> m_pool;
};

}  // namespace saturn::http
