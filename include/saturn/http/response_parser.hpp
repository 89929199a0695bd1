/// \file
/// The HTTP/1.1 response parser of http::client (RFC 9112): `response_parser` reads a
/// response head and says how its body is framed; `body_decoder` then takes the body off
/// the wire piece by piece (Content-Length, chunked, or until the connection closes).
///
/// ```
/// saturn::http::response_parser p;
/// std::string wire = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
/// if (p.parse(wire.data(), wire.size(), false) == saturn::http::parse_status::complete) {
///   saturn::http::body_decoder body(p.head());
///   auto step = body.feed(wire.data() + p.consumed(), wire.size() - p.consumed());
///   // step.data == "hi", step.done
/// }
/// ```
///
/// Framing, RFC 9112 §6.3, in its order: the answer to a HEAD, any 1xx, 204 and 304 have
/// no body; else a Transfer-Encoding whose last coding is `chunked` is chunked (one that
/// is not ends at the close); else a Content-Length gives the length (a value that is not
/// digits, or a list of differing values, is an error: the framing cannot be trusted);
/// else the body runs until the server closes. A Transfer-Encoding beside a
/// Content-Length wins, and the connection is not reused afterwards.
///
/// Strictness: a status line other than `HTTP/1.x SP 3DIGIT [SP reason]`, a field line
/// without a colon or with whitespace before it, a field name that is not a token, a bare
/// CR or bare LF (lines end in CRLF: §2.2 allows a bare LF, llhttp does not, and a
/// client must not frame differently from its peers), or a head over limits.max_head
/// bytes or limits.max_fields fields is an error. An obs-fold (a line starting with SP or
/// HTAB) is replaced by one SP, as §5.2 tells a user agent to.
///
/// Threading: plain values; one per connection, used by one task at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <saturn/http/parser.hpp>

namespace saturn::http {

/// How a response's body is delimited.
enum class body_framing : std::uint8_t { none, length, chunked, until_close };

/// A parsed response head. Owns its bytes.
struct response_head {
  int status = 0;
  std::uint8_t version_minor = 1;  ///< HTTP/1.x
  std::string reason;
  /// The fields in order, names as sent.
  std::vector<std::pair<std::string, std::string>> fields;
  body_framing framing = body_framing::none;
  std::uint64_t content_length = 0;  ///< with framing == length
  /// The connection may carry another request after this response's body.
  bool keep_alive = true;

  /// The first field named `name` (ASCII case-insensitive), or an empty view.
  std::string_view get(std::string_view name) const noexcept;
  /// True if a field named `name` is present.
  bool has(std::string_view name) const noexcept;
};

/// Limits of one response head and its chunk lines.
struct response_limits {
  std::size_t max_head = 64 * 1024;
  std::size_t max_fields = 200;
  std::size_t max_chunk_line = 4096;
};

/// Parses one response head. See the file comment.
class response_parser {
 public:
  explicit response_parser(response_limits limits = {}) noexcept : m_limits(limits) {}

  /// Parses the head starting at data[0] (`len` bytes available; call again with more
  /// when incomplete — the bytes may have moved, appended ones included). `head_request`:
  /// the request was a HEAD (its answer has no body, whatever it declares). complete:
  /// head() is set and the head took consumed() bytes; a 1xx (interim) head is complete
  /// too — its status says so: skip it and parse the next head after reset().
  parse_status parse(const char* data, std::size_t len, bool head_request);
  const response_head& head() const noexcept { return m_head; }
  response_head& head() noexcept { return m_head; }
  std::size_t consumed() const noexcept { return m_consumed; }
  /// Why parse() said error (a static string).
  std::string_view error_reason() const noexcept { return m_reason; }
  void reset() noexcept;

 private:
  parse_status fail(const char* why) noexcept;
  parse_status parse_lines(const char* data, std::size_t end, bool head_request);
  parse_status decide_framing(bool head_request);

  response_limits m_limits;
  response_head m_head;
  std::size_t m_scan = 0;
  std::size_t m_consumed = 0;
  const char* m_reason = "";
};

/// Takes one body off the wire. See the file comment.
class body_decoder {
 public:
  /// What one feed() did.
  struct step {
    std::size_t consumed = 0;  ///< input bytes used (framing included)
    std::string_view data{};   ///< body bytes, a view into the input
    bool done = false;         ///< the body has ended (consumed stops at its last byte)
    const char* error = nullptr;  ///< bad framing (a static reason): drop the connection
  };

  explicit body_decoder(const response_head& head, response_limits limits = {}) noexcept
      : m_framing(head.framing), m_left(head.content_length), m_limits(limits) {
    m_state = m_framing == body_framing::chunked ? state::size_line : state::data;
  }

  /// Consumes framing and at most one run of body bytes from data[0, len). Call again
  /// with the rest while consumed < len and not done.
  step feed(const char* data, std::size_t len) noexcept;
  /// The connection ended: fine for until_close (done) and a finished body; for the
  /// others the body was cut short (error "truncated").
  step end_of_stream() const noexcept;
  bool done() const noexcept { return m_state == state::done; }

 private:
  enum class state : std::uint8_t { data, size_line, chunk_data, chunk_crlf, trailers, done };
  body_framing m_framing;
  std::uint64_t m_left;
  response_limits m_limits;
  state m_state;
};

}  // namespace saturn::http
