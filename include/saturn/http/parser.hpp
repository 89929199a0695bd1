/// \file
/// The incremental, zero-copy HTTP/1.1 request parser (RFC 9112).
///
/// Protocol: the connection keeps the bytes of the current request contiguous, starting at
/// `data[0]`, and calls `parse(data, len)` each time more bytes arrived (it may move the
/// bytes between calls, e.g. to compact its buffer: the parser keeps offsets only, never
/// pointers). `parse` says `incomplete` (read more), `complete` (request() is ready and
/// consumed() bytes belong to it: the next pipelined request starts at data[consumed()]),
/// or `error` (answer error_status() and close: the framing can no longer be trusted).
/// After `complete`, call reset() before parsing the next request.
///
/// Chunked bodies are decoded in place: the decoded bytes are moved down over the chunk
/// framing inside [0, len), so the request's body().view() is contiguous without a copy.
/// The caller must therefore not change bytes already passed to parse (appending is fine).
///
/// Streamed bodies (route_options::stream_body): parse_head() stops once the head is in
/// (the request's fields are set, its body is not); the caller routes it, and either goes
/// on with parse() (a buffered body) or calls start_streaming() and then, per piece,
/// parse_body_piece() → body_piece() → drop_body_piece(), which keeps the head in place and
/// moves the undecoded bytes down behind it, so memory stays bounded by what one read
/// brings.
///
/// Strictness (request smuggling closed): a header section (request line included) over
/// limits.max_head bytes → 431; more than max_header_fields fields → 431; body over
/// limits.max_body → 413; malformed request line or field, whitespace before a colon,
/// obs-fold, bare CR, a Content-Length that is not all digits, overflows, or differs among
/// its values, Content-Length together with Transfer-Encoding, a Transfer-Encoding that is
/// not exactly `chunked` (or chunked applied twice, or in HTTP/1.0), an invalid chunk size,
/// extension or CRLF (whitespace after a chunk size only before a ';'), a missing/duplicate
/// Host in HTTP/1.1, an invalid Host value (not uri-host [":" port]), or a request-target
/// outside its form's grammar (origin-form bytes other than pchar, '/', '?' and valid %XX —
/// so '#' or "%zz" —, '*' with a method other than OPTIONS, authority-form other than
/// host:port for CONNECT, absolute-form with userinfo or no host) → 400. Codings other than
/// chunked → 501; HTTP major version other than 1 → 505. A bare LF ends a line of the
/// header section (RFC 9112 §2.2 allows it); chunk framing requires CRLF.
///
/// Threading: one parser per connection, used by one thread at a time.
#pragma once

#include <saturn/http/request.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace saturn::http {

/// Size limits of one request.
struct parser_limits {
  std::size_t max_head = 8192;         ///< request line + header fields + blank line
  std::size_t max_body = 1 << 20;      ///< decoded body bytes
  std::size_t max_chunk_line = 1024;   ///< one chunk-size line with its extensions
};

/// What parse() found.
enum class parse_status : std::uint8_t { incomplete, complete, error };

/// See the file comment for the protocol.
class request_parser {
 public:
  explicit request_parser(parser_limits limits = {}) noexcept : m_limits(limits) {}
  // The request points into this parser (its header fields): neither copied nor moved.
  request_parser(const request_parser&) = delete;
  request_parser& operator=(const request_parser&) = delete;

  /// Parses the request starting at data[0]; `len` bytes are available. Never reads
  /// beyond data[len - 1]; may rewrite bytes inside it (chunked bodies).
  parse_status parse(char* data, std::size_t len) noexcept;
  /// Parses the head only: complete once the header section is in (get() then has every
  /// field, not the body; no body limit checked yet). After it: parse() for a buffered
  /// body, or start_streaming() for a streamed one.
  parse_status parse_head(char* data, std::size_t len) noexcept;
  /// Re-points the request's views at `data` after the caller moved the buffer (the head
  /// must be unchanged at data[0, ...)).
  void refresh_views(const char* data) noexcept { finish_head(data); }
  /// The body is streamed from here on, at most `max_body` decoded bytes (413 past it).
  void start_streaming(std::uint64_t max_body) noexcept {
    m_streaming = true;
    m_stream_max = max_body;
  }
  /// Streaming: decodes the body bytes available in data[0, len) into body_piece();
  /// complete once the whole body is decoded (consumed() is then the request's wire size),
  /// incomplete when more bytes are needed, error (error_status() 400 / 413) on bad framing.
  parse_status parse_body_piece(char* data, std::size_t len) noexcept;
  /// Streaming: the body bytes decoded and not yet dropped (a view into `data`).
  std::string_view body_piece(const char* data) const noexcept { return {data + m_head_len, m_body_len}; }
  /// Streaming: forgets body_piece() and moves the undecoded bytes [.., len) down to the
  /// end of the head; returns the new length of the caller's bytes.
  std::size_t drop_body_piece(char* data, std::size_t len) noexcept;
  /// The declared Content-Length (0 with none and not chunked), once the head is in.
  std::uint64_t content_length() const noexcept { return m_content_length; }
  /// True once the head is in if the body's length is declared (Content-Length).
  bool has_content_length() const noexcept { return m_has_length; }
  /// The head's size in bytes (blank line included), once the head is in.
  std::size_t head_size() const noexcept { return m_head_len; }
  /// The request, valid after parse() returned complete (views into that call's `data`).
  const request& get() const noexcept { return m_req; }
  request& get() noexcept { return m_req; }
  /// Bytes the completed request occupied on the wire (its framing included).
  std::size_t consumed() const noexcept { return m_pos; }
  /// Status to answer after an error (400, 413, 431, 501, 505).
  int error_status() const noexcept { return m_error_status; }
  /// Why the request was refused (a short static string, for logs and the error body).
  std::string_view error_reason() const noexcept { return m_error_reason; }
  /// True when the request's method is known to be HEAD (its request line was parsed that
  /// far, or over-long input begins with "HEAD "), after an error too: the answer to a
  /// HEAD carries no body, error answers included (RFC 9110 §9.3.2).
  bool head_request() const noexcept { return m_head; }
  /// True once the header section has been parsed (the body may still be incomplete).
  bool head_complete() const noexcept { return m_phase > phase::head; }
  /// True once the head is parsed if the request carries `Expect: 100-continue` (HTTP/1.1)
  /// and its body has not been received yet: the server should send 100 Continue.
  bool expects_continue() const noexcept { return m_expect_continue; }
  /// Records that the 100 Continue was sent (expects_continue() is false afterwards).
  void continue_sent() noexcept { m_expect_continue = false; }
  /// Forgets the request; the next parse() starts a new one.
  void reset() noexcept;

 private:
  enum class phase : std::uint8_t { head, body_length, chunk_size, chunk_data, chunk_crlf, trailers, done, failed };

  parse_status fail(int status, const char* reason) noexcept;
  parse_status fail_unparsed(const char* data, std::size_t len, int status, const char* reason) noexcept;
  /// Past max_head: 431, or 414 / 501 while the request line itself does not fit.
  parse_status fail_head_too_large(const char* data, std::size_t len) noexcept;
  parse_status find_head_end(const char* data, std::size_t len) noexcept;
  parse_status parse_header_section(const char* data) noexcept;
  parse_status parse_request_line(const char* line, std::size_t n) noexcept;
  parse_status parse_field(const char* data, std::size_t begin, std::size_t n) noexcept;
  parse_status check_framing(const char* data) noexcept;
  parse_status parse_body(char* data, std::size_t len) noexcept;
  parse_status parse_chunk_line(const char* data, std::size_t len) noexcept;
  parse_status parse_trailer(const char* data, std::size_t len) noexcept;
  void finish(const char* data) noexcept;
  void finish_head(const char* data) noexcept;
  std::uint64_t body_limit() const noexcept { return m_streaming ? m_stream_max : m_limits.max_body; }

  struct span32 {
    std::uint32_t off = 0, len = 0;
  };
  struct field_offsets {
    span32 name, value;
  };

  parser_limits m_limits;
  phase m_phase = phase::head;
  std::uint8_t m_version_minor = 1;
  bool m_keep_alive = true;
  bool m_chunked = false;
  bool m_has_length = false;
  bool m_expect_continue = false;
  bool m_head = false;
  bool m_streaming = false;       // start_streaming(): the body goes out piece by piece
  std::uint64_t m_stream_max = 0;
  std::uint64_t m_body_dropped = 0;  // streaming: decoded bytes already dropped
  std::uint32_t m_host_count = 0;
  int m_error_status = 0;
  const char* m_error_reason = "";
  std::size_t m_start = 0;       // after leading empty lines
  std::size_t m_scan = 0;        // head: where the search for the blank line resumes
  std::size_t m_head_len = 0;    // bytes of the header section, blank line included
  std::size_t m_pos = 0;         // body: wire offset parsed so far; consumed() when done
  std::uint64_t m_content_length = 0;
  std::uint64_t m_chunk_left = 0;
  std::size_t m_body_len = 0;    // decoded body bytes at [m_head_len, m_head_len + m_body_len)
  std::size_t m_trailer_bytes = 0;
  span32 m_method, m_target;
  field_offsets m_fields[max_header_fields];
  std::size_t m_field_count = 0;
  std::uint32_t m_line_ends[max_header_fields + 1];  // '\n' of the request line and each field line
  std::size_t m_line_count = 0;
  header_field m_header_views[max_header_fields];  // m_req's header fields
  request m_req;
};

}  // namespace saturn::http
