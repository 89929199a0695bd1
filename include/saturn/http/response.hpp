/// \file
/// An HTTP response as a handler returns it, and the writer that serializes responses
/// into a connection's output buffer (status line, Server, Date cached per second,
/// Content-Type, Content-Length, Connection when needed, extra fields, body).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace saturn::http {

/// A response. Threading: a plain value; built by a handler, serialized by its connection.
class response {
 public:
  int status = 200;
  std::string_view content_type = "text/plain";  ///< must outlive the response (a literal)
  bool close = false;  ///< close the connection after this response

  response() = default;
  /// A response with `status` and a body that is copied (small bodies need no allocation).
  response(int st, std::string_view type, std::string body) : status(st), content_type(type), m_owned(std::move(body)) {}

  /// A response whose body is static data (a literal): nothing is copied. `body` must
  /// outlive the response's serialization.
  static response with_static_body(int st, std::string_view type, std::string_view body) {
    response r;
    r.status = st;
    r.content_type = type;
    r.m_static = body;
    r.m_is_static = true;
    return r;
  }
  /// Replaces the body with a copy of `b`.
  void set_body(std::string b) {
    m_owned = std::move(b);
    m_is_static = false;
  }
  /// The body bytes.
  std::string_view body() const noexcept { return m_is_static ? m_static : std::string_view(m_owned); }
  /// Adds a header field (name and value are copied; do not add Content-Length, Date or Server).
  void add_header(std::string name, std::string value) { m_headers.emplace_back(std::move(name), std::move(value)); }
  /// Extra header fields, in order added.
  const std::vector<std::pair<std::string, std::string>>& headers() const noexcept { return m_headers; }

 private:
  std::string m_owned;
  std::string_view m_static;
  bool m_is_static = false;
  std::vector<std::pair<std::string, std::string>> m_headers;
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

/// Appends `r` to `out` as HTTP/1.1 bytes. `server` is the Server field's value.
/// Threading: any thread (uses the calling thread's Date cache).
void write_response(std::string& out, const response& r, const write_options& opts, std::string_view server);

/// Appends a minimal error response (`status`, a text/plain body naming `reason`) with
/// `Connection: close`. `head`: the request was a HEAD, so the same head is sent without
/// the body (RFC 9110 §9.3.2). Threading: any thread.
void write_error(std::string& out, int status, std::string_view reason, std::string_view server, bool head = false);

}  // namespace saturn::http
