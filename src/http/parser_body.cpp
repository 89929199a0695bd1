// request_parser: the body. Content-Length bodies are views; chunked bodies are decoded in
// place (each chunk's data moved down over the framing before it), so the decoded body is
// contiguous at [head, head + body_len) and the wire bytes after it are dead.
//
// chunked-body = *chunk last-chunk trailer-section CRLF        (RFC 9112 §7.1)
// chunk        = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
// chunk-ext    = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] ), ext-val = token / quoted-string
#include <saturn/http/parser.hpp>

#include "http/chars.hpp"

#include <cstring>

namespace saturn::http {

using detail::c_field;
using detail::c_hex;
using detail::c_qdtext;
using detail::c_tchar;
using detail::c_vchar;
using detail::is;

parse_status request_parser::parse_body(char* data, std::size_t len) noexcept {
  if (m_phase == phase::body_length) {
    if (m_content_length > m_limits.max_body)
      return fail(413, "request body too large");
    if (len - m_head_len < m_content_length)
      return parse_status::incomplete;
    m_body_len = static_cast<std::size_t>(m_content_length);
    m_pos = m_head_len + m_body_len;
    finish(data);
    return parse_status::complete;
  }
  // The chunk framing a request may carry beyond its data: bounded so that a stream of
  // tiny chunks cannot hold an unbounded buffer (the framing stays in it until the end).
  const std::size_t max_wire = m_head_len + 2 * m_limits.max_body + 16 * 1024;
  for (;;) {
    switch (m_phase) {
      case phase::chunk_size: {
        parse_status s = parse_chunk_line(data, len);
        if (s != parse_status::complete)
          return s;
        break;
      }
      case phase::chunk_data: {
        std::size_t avail = len - m_pos;
        if (avail == 0)
          return parse_status::incomplete;
        std::size_t n = avail < m_chunk_left ? avail : static_cast<std::size_t>(m_chunk_left);
        // lifetime: source and destination are both inside [0, len); memmove handles overlap.
        std::memmove(data + m_head_len + m_body_len, data + m_pos, n);
        m_body_len += n;
        m_pos += n;
        m_chunk_left -= n;
        if (m_chunk_left == 0)
          m_phase = phase::chunk_crlf;
        break;
      }
      case phase::chunk_crlf:
        if (len - m_pos < 2)
          return parse_status::incomplete;
        if (data[m_pos] != '\r' || data[m_pos + 1] != '\n')
          return fail(400, "chunk data not followed by CRLF");
        m_pos += 2;
        m_phase = phase::chunk_size;
        break;
      case phase::trailers: {
        parse_status s = parse_trailer(data, len);
        if (s != parse_status::complete)
          return s;
        if (m_phase == phase::done) {
          finish(data);
          return parse_status::complete;
        }
        break;
      }
      default:
        return parse_status::error;
    }
    if (m_pos > max_wire)
      return fail(413, "chunked request too large on the wire");
  }
}

namespace {

/// Finds a CRLF-terminated line at data[pos, len): its length without CRLF, or -1 if no
/// '\n' yet, or -2 if the '\n' is not preceded by '\r'.
long chunk_line(const char* data, std::size_t pos, std::size_t len, std::size_t max) {
  std::size_t limit = len - pos < max + 2 ? len - pos : max + 2;
  const void* nl = std::memchr(data + pos, '\n', limit);
  if (!nl)
    return len - pos >= max + 2 ? -3 : -1;
  std::size_t n = static_cast<std::size_t>(static_cast<const char*>(nl) - (data + pos));
  if (n == 0 || data[pos + n - 1] != '\r')
    return -2;
  return static_cast<long>(n - 1);
}

inline std::size_t skip_bws(const char* p, std::size_t i, std::size_t n) {
  while (i < n && (p[i] == ' ' || p[i] == '\t'))
    ++i;
  return i;
}

/// Validates `*( BWS ";" BWS name [ BWS "=" BWS value ] )` over p[i, n). BWS only ever
/// precedes ';' or '=' or follows them: whitespace that ends the line ("5 ", "5;a ") is not
/// in the grammar and is refused (RFC 9112 §7.1).
bool valid_extensions(const char* p, std::size_t i, std::size_t n) {
  for (;;) {
    std::size_t ws_end = skip_bws(p, i, n);
    if (ws_end == n)
      return ws_end == i;
    i = ws_end;
    if (p[i] != ';')
      return false;
    i = skip_bws(p, i + 1, n);
    std::size_t t = i;
    while (i < n && is(p[i], c_tchar))
      ++i;
    if (i == t)
      return false;
    std::size_t j = skip_bws(p, i, n);
    if (j < n && p[j] == '=') {
      i = skip_bws(p, j + 1, n);
      if (i < n && p[i] == '"') {
        for (++i;; ++i) {
          if (i >= n)
            return false;
          if (p[i] == '"')
            break;
          if (p[i] == '\\') {
            if (++i >= n || !(p[i] == '\t' || is(p[i], c_vchar) || static_cast<unsigned char>(p[i]) >= 0x80 || p[i] == ' '))
              return false;
          } else if (!is(p[i], c_qdtext)) {
            return false;
          }
        }
        ++i;
      } else {
        t = i;
        while (i < n && is(p[i], c_tchar))
          ++i;
        if (i == t)
          return false;
      }
    }
  }
}

}  // namespace

parse_status request_parser::parse_chunk_line(const char* data, std::size_t len) noexcept {
  long r = chunk_line(data, m_pos, len, m_limits.max_chunk_line);
  if (r == -1)
    return parse_status::incomplete;
  if (r == -2)
    return fail(400, "chunk size line not ended by CRLF");
  if (r == -3)
    return fail(400, "chunk size line too long");
  const char* p = data + m_pos;
  std::size_t n = static_cast<std::size_t>(r);
  std::size_t i = 0;
  std::uint64_t size = 0;
  while (i < n && is(p[i], c_hex)) {
    if (size >> 60)
      return fail(400, "chunk size overflows");
    size = size * 16 + detail::hex_value(p[i]);
    ++i;
  }
  // A size ends at the line's end, or where an extension begins (optional whitespace,
  // then ';'); anything else (`5x`, `0x5`, `-1`) is a bad size, not a bad extension.
  if (i == 0 || (i < n && p[i] != ';' && p[i] != ' ' && p[i] != '\t'))
    return fail(400, "invalid chunk size");
  if (!valid_extensions(p, i, n))
    return fail(400, "invalid chunk extension");
  if (size > body_limit() - (m_body_dropped + m_body_len))
    return fail(413, "request body too large");
  m_pos += n + 2;
  m_chunk_left = size;
  m_phase = size == 0 ? phase::trailers : phase::chunk_data;
  return parse_status::complete;
}

parse_status request_parser::parse_trailer(const char* data, std::size_t len) noexcept {
  std::size_t room = m_limits.max_head > m_trailer_bytes ? m_limits.max_head - m_trailer_bytes : 0;
  long r = chunk_line(data, m_pos, len, room);
  if (r == -1)
    return parse_status::incomplete;
  if (r == -2)
    return fail(400, "trailer line not ended by CRLF");
  if (r == -3)
    return fail(431, "trailer section too large");
  const char* p = data + m_pos;
  std::size_t n = static_cast<std::size_t>(r);
  m_pos += n + 2;
  m_trailer_bytes += n + 2;
  if (n == 0) {
    m_phase = phase::done;
    return parse_status::complete;
  }
  // A trailer field is validated like a header field and then discarded.
  std::size_t i = 0;
  while (i < n && is(p[i], c_tchar))
    ++i;
  if (i == 0 || i >= n || p[i] != ':')
    return fail(400, "malformed trailer field");
  for (++i; i < n; ++i)
    if (!is(p[i], c_field))
      return fail(400, "invalid character in a trailer field");
  return parse_status::complete;
}

}  // namespace saturn::http
