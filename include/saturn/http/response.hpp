/// \file
/// An HTTP response as a handler returns it, and the writer that serializes responses
/// into a connection's output buffer (status line, Server, Date cached per second,
/// Content-Type, Content-Length, Connection when needed, extra fields, body).
#pragma once

#include <saturn/http/text_value.hpp>
#include <saturn/result.hpp>
#include <saturn/task/task.hpp>

#include <algorithm>
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

namespace saturn::net {
class tcp_stream;
}  // namespace saturn::net
namespace saturn::tls {
class stream;
}  // namespace saturn::tls

namespace saturn::http {

/// What takes over an HTTP/1.1 connection after a 101 (Switching Protocols) answer: the
/// connection's stream and the bytes that arrived after the upgrade request (already
/// read from the socket, not yet consumed). It runs as the connection's task under the
/// server's stop token; the connection closes when it returns.
using upgrade_handler = std::function<task<void>(net::tcp_stream&, std::span<const std::byte> leftover)>;
/// The same over an HTTPS connection: the TLS stream (handshake done) instead of the
/// socket, and the plaintext bytes that came after the request.
using tls_upgrade_handler = std::function<task<void>(tls::stream&, std::span<const std::byte> leftover)>;

/// Where a streamed response's body goes (response::stream): the connection. write()
/// appends bytes to the connection's output (framed as a chunk when the length is not
/// declared) and sends once a batch of them is pending; flush() sends what is pending now
/// (for a client that must see a piece at once: a progress line, an event). Each may
/// suspend while the socket has no room; an error means the client is gone (stop
/// producing). Threading: the producer's task only, one call at a time, until the
/// producer returns.
class body_writer {
 public:
  /// Appends `bytes` to the body: they are copied before write() returns (so `bytes` may
  /// die then, even before the returned task is awaited); the task sends them if a batch
  /// is pending. Past a declared length: errc::message_size, and the connection closes
  /// after.
  task<result<void>> write(std::string_view bytes) {
    return send(append(bytes), false);
  }
  /// Sends every pending byte now.
  task<result<void>> flush() { return send(result<void>{}, true); }
  /// Adds a trailer field, sent after the body (with the response's own trailers): over
  /// HTTP/2 a trailing HEADERS frame (gRPC's grpc-status goes here), over HTTP/1.1 the
  /// trailer section of a chunked body (none without chunking: dropped). Call before the
  /// producer returns. The same rules as response::add_header.
  void trailer(text_value name, text_value value) { add_trailer(std::move(name), std::move(value)); }

 protected:
  ~body_writer() = default;
  /// Stores a trailer field (trailer()).
  virtual void add_trailer(text_value name, text_value value) = 0;
  /// Frames and copies `bytes` into the output (synchronously).
  virtual result<void> append(std::string_view bytes) = 0;
  /// `prior` failed: returns it. Otherwise sends what is pending — always with `all`, else
  /// only once a batch has built up.
  virtual task<result<void>> send(result<void> prior, bool all) = 0;
};

/// Produces a streamed body by writing it to `w`; returns when the body is complete. An
/// error, or fewer bytes than a declared length, ends the connection instead of
/// completing the response (the client sees a truncated body, never a wrong one). It runs
/// after the head is sent, under the server's stop token (a stop cancels its awaits).
using body_producer = std::function<task<result<void>>(body_writer& w)>;

/// A response. Owns everything it says: its Content-Type and header fields are literals or
/// owned copies (text_value), and its body is owned unless built by with_static_body.
/// Threading: a plain value; built by a handler, serialized by its connection.
///
///     co_return response::text("hello\n");                 // 200 text/plain
///     co_return response::json(200, rendered);               // 200 application/json
///     response r(404, "text/plain", "no such item\n");
///     r.add_header("Cache-Control", "no-store");
class response {
 public:
  int status = 200;
  text_value content_type = "text/plain";  ///< empty: no Content-Type field
  bool close = false;  ///< close the connection after this response

  response() = default;
  /// A response with `status`, `type` and an owned `body` (moved in: no copy).
  response(int st, text_value type, std::string body)
      : status(st), content_type(std::move(type)), m_owned(std::move(body)) {}

  /// 200 text/plain (UTF-8) with `body`.
  static response text(std::string body, int st = 200) {
    return response(st, "text/plain; charset=utf-8", std::move(body));
  }
  /// `st` application/json with `body` (already serialized JSON).
  static response json(int st, std::string body) { return response(st, "application/json", std::move(body)); }
  /// A status with no body and no Content-Type (204, 304, a bare 404...).
  static response empty(int st) {
    response r;
    r.status = st;
    r.content_type = text_value{};
    return r;
  }

  /// A response whose body is data of static storage duration (a literal, a constant
  /// table): nothing is copied. Anything else must be passed as a std::string to the
  /// constructor instead; a view of memory that dies before the send is a use after free.
  static response with_static_body(int st, text_value type, std::string_view body) {
    response r;
    r.status = st;
    r.content_type = std::move(type);
    r.m_static = body;
    r.m_is_static = true;
    return r;
  }
  /// A response whose body is `length` bytes of `*bytes` from `offset` (clamped to its
  /// size), shared rather than copied: the response keeps `bytes` alive, so a cache can
  /// hand the same bytes to many responses at once. `bytes` must not change while any
  /// response holds it. Any thread.
  static response with_shared_body(int st, text_value type, std::shared_ptr<const std::string> bytes,
                                   std::size_t offset = 0, std::size_t length = std::string::npos) {
    response r;
    r.status = st;
    r.content_type = std::move(type);
    if (bytes) {
      r.m_static = std::string_view(*bytes).substr(std::min(offset, bytes->size()), length);
      r.m_shared = std::move(bytes);
    }
    r.m_is_static = true;
    return r;
  }
  /// A response whose body is written by `producer` after the head is sent (a large file,
  /// a generated report, a feed), so it never needs to be in memory whole. With `length`
  /// the head says Content-Length and the producer must write exactly that many bytes;
  /// without it the body is sent chunked (HTTP/1.1) or delimited by closing the
  /// connection (HTTP/1.0). A HEAD request gets the head alone: the producer does not run.
  static response stream(int st, text_value type, body_producer producer,
                         std::optional<std::uint64_t> length = std::nullopt) {
    response r;
    r.status = st;
    r.content_type = std::move(type);
    r.m_producer = std::make_shared<body_producer>(std::move(producer));
    r.m_stream_length = length;
    return r;
  }
  /// True for a response made by stream().
  bool streamed() const noexcept { return m_producer != nullptr; }
  /// A streamed response's declared length, if any.
  std::optional<std::uint64_t> stream_length() const noexcept { return m_stream_length; }
  /// A streamed response's producer (null otherwise).
  const body_producer* producer() const noexcept { return m_producer.get(); }

  /// Replaces the body with `b` (owned); a streamed response becomes a plain one.
  void set_body(std::string b) {
    m_owned = std::move(b);
    m_is_static = false;
    m_shared.reset();
    m_producer.reset();
    m_stream_length.reset();
  }
  /// The body bytes.
  std::string_view body() const noexcept { return m_is_static ? m_static : std::string_view(m_owned); }
  /// Adds a header field; both are stored (literals viewed, anything else copied). `name`
  /// must be a token (RFC 9110 §5.1) else std::invalid_argument is thrown (a programming
  /// error). A CR, LF or NUL in `value` is replaced by a space, so data that reaches a
  /// header cannot split the response. The server writes Content-Length, Date and Server
  /// itself (and Connection when it closes): do not add those.
  void add_header(text_value name, text_value value);
  /// Makes this answer a protocol switch (RFC 9110 §15.2.2): the status becomes 101, and
  /// once the head is sent the server stops speaking HTTP on the connection and awaits
  /// `fn` with it (see upgrade_handler). The handler adds the Upgrade and Connection
  /// fields (websocket::accept does all of it). HTTP/1.1 only.
  void set_upgrade(upgrade_handler fn) {
    status = 101;
    content_type = text_value{};
    m_upgrade = std::move(fn);
  }
  /// As set_upgrade(fn), with `over_tls` taking over when the connection is HTTPS. An
  /// answer with no TLS handler becomes 501 on an HTTPS connection.
  void set_upgrade(upgrade_handler fn, tls_upgrade_handler over_tls) {
    set_upgrade(std::move(fn));
    m_upgrade_tls = std::move(over_tls);
  }
  /// The protocol switch set by set_upgrade, or an empty function.
  upgrade_handler& upgrade() noexcept { return m_upgrade; }
  /// The protocol switch over TLS set by set_upgrade, or an empty function.
  tls_upgrade_handler& upgrade_tls() noexcept { return m_upgrade_tls; }

  /// Replaces the value of every field named `name` (case-insensitive) by one field with
  /// `value`, or adds it; the same rules as add_header.
  void set_header(text_value name, text_value value);
  /// Removes every field named `name` (case-insensitive).
  void remove_header(std::string_view name) noexcept;
  /// The first added field named `name` (case-insensitive), or an empty view.
  std::string_view header(std::string_view name) const noexcept;
  /// Extra header fields, in order added.
  const std::vector<std::pair<text_value, text_value>>& headers() const noexcept { return m_headers; }
  /// Adds a trailer field, sent after the body: over HTTP/2 a trailing HEADERS frame (or,
  /// for a response with no body, in its only HEADERS frame: gRPC's Trailers-Only form);
  /// over HTTP/1.1 only after a chunked (streamed) body, else dropped. The same rules as
  /// add_header.
  void add_trailer(text_value name, text_value value);
  /// The trailer fields, in order added.
  const std::vector<std::pair<text_value, text_value>>& trailers() const noexcept { return m_trailers; }

 private:
  std::string m_owned;
  std::string_view m_static;                  // with_static_body, or a view into m_shared
  std::shared_ptr<const std::string> m_shared;  // with_shared_body: keeps m_static's bytes alive
  bool m_is_static = false;
  std::vector<std::pair<text_value, text_value>> m_headers;
  std::vector<std::pair<text_value, text_value>> m_trailers;
  upgrade_handler m_upgrade;
  tls_upgrade_handler m_upgrade_tls;
  std::shared_ptr<body_producer> m_producer;  // stream(): shared, so a response stays copyable
  std::optional<std::uint64_t> m_stream_length;
};

/// The reason phrase of `status` ("OK", "Not Found", ...), "Unknown" if none is known.
std::string_view reason_phrase(int status) noexcept;

/// The current time as an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), formatted once
/// per second per thread. Threading: any thread; the view is valid until the calling
/// thread's next call.
std::string_view http_date() noexcept;

/// How to frame one serialized response.
struct write_options {
  bool keep_alive = true;        ///< false: send `Connection: close`
  std::uint8_t version_minor = 1;  ///< of the request; HTTP/1.0 keep-alive gets `Connection: keep-alive`
  bool head = false;             ///< a HEAD request: Content-Length of the body, no body
};

/// How write_response framed a streamed response's body (response::stream).
enum class stream_framing : std::uint8_t {
  none,     ///< no body follows (HEAD, 1xx / 204 / 304, or not a streamed response)
  length,   ///< Content-Length: exactly stream_length() bytes follow
  chunked,  ///< Transfer-Encoding: chunked
  close,    ///< HTTP/1.0 without a length: the body ends when the connection closes
};

/// How `r`'s body is framed when written with `opts` (see stream_framing).
stream_framing framing_of(const response& r, const write_options& opts) noexcept;

/// Appends `r` to `out` as HTTP/1.1 bytes. `server` is the Server field's value. For a
/// streamed response only the head is appended, framed as framing_of says (the
/// connection then runs the producer).
/// Threading: any thread (uses the calling thread's Date cache).
void write_response(std::string& out, const response& r, const write_options& opts, std::string_view server);

/// Appends a minimal error response (`status`, a text/plain body naming `reason`) with
/// `Connection: close`. `head`: the request was a HEAD, so the same head is sent without
/// the body (RFC 9110 §9.3.2). Threading: any thread.
void write_error(std::string& out, int status, std::string_view reason, std::string_view server, bool head = false);

}  // namespace saturn::http
