// request_parser: the header section (request line, fields, framing decisions). The body
// (Content-Length and chunked, decoded in place) is in parser_body.cpp.
#include <saturn/http/parser.hpp>

#include "http/chars.hpp"
#include "http/uri.hpp"

#include <cstring>

namespace saturn::http {

using detail::c_field;
using detail::c_tchar;
using detail::c_vchar;
using detail::is;

void request_parser::reset() noexcept {
  parser_limits limits = m_limits;
  m_phase = phase::head;
  m_version_minor = 1;
  m_keep_alive = true;
  m_chunked = false;
  m_has_length = false;
  m_expect_continue = false;
  m_head = false;
  m_streaming = false;
  m_stream_max = 0;
  m_body_dropped = 0;
  m_host_count = 0;
  m_error_status = 0;
  m_error_reason = "";
  m_start = m_scan = m_head_len = m_pos = 0;
  m_content_length = m_chunk_left = 0;
  m_body_len = m_trailer_bytes = 0;
  m_field_count = 0;
  m_line_count = 0;
  m_limits = limits;
}

parse_status request_parser::fail(int status, const char* reason) noexcept {
  m_phase = phase::failed;
  m_error_status = status;
  m_error_reason = reason;
  return parse_status::error;
}

parse_status request_parser::parse(char* data, std::size_t len) noexcept {
  if (m_phase == phase::failed)
    return parse_status::error;
  if (m_phase == phase::done)
    return parse_status::complete;
  if (m_phase == phase::head) {
    parse_status s = find_head_end(data, len);
    if (s != parse_status::complete)
      return s;
    s = parse_header_section(data);
    if (s != parse_status::complete)
      return s;
  }
  return parse_body(data, len);
}

parse_status request_parser::parse_head(char* data, std::size_t len) noexcept {
  if (m_phase == phase::failed)
    return parse_status::error;
  if (m_phase != phase::head)
    return parse_status::complete;
  parse_status s = find_head_end(data, len);
  if (s != parse_status::complete)
    return s;
  s = parse_header_section(data);
  if (s == parse_status::complete)
    finish_head(data);
  return s;
}

parse_status request_parser::parse_body_piece(char* data, std::size_t len) noexcept {
  if (m_phase == phase::failed)
    return parse_status::error;
  if (m_phase == phase::done)
    return parse_status::complete;
  if (m_phase == phase::body_length) {
    if (m_content_length > m_stream_max)
      return fail(413, "request body too large");
    std::uint64_t left = m_content_length - m_body_dropped - m_body_len;
    std::size_t avail = len - m_pos;
    std::size_t n = avail < left ? avail : static_cast<std::size_t>(left);
    m_body_len += n;
    m_pos += n;
    if (m_body_dropped + m_body_len < m_content_length)
      return parse_status::incomplete;
    m_phase = phase::done;
    return parse_status::complete;
  }
  return parse_body(data, len);
}

std::size_t request_parser::drop_body_piece(char* data, std::size_t len) noexcept {
  // lifetime: both ranges are inside [0, len); memmove handles the overlap.
  std::memmove(data + m_head_len, data + m_pos, len - m_pos);
  std::size_t new_len = m_head_len + (len - m_pos);
  m_body_dropped += m_body_len;
  m_body_len = 0;
  m_pos = m_head_len;
  return new_len;
}

// Finds the blank line that ends the header section; skips empty lines before the request
// line (RFC 9112 §2.2: a server SHOULD ignore at least one).
parse_status request_parser::find_head_end(const char* data, std::size_t len) noexcept {
  if (m_scan == 0) {
    while (m_start < len && (data[m_start] == '\n' || data[m_start] == '\r')) {
      if (data[m_start] == '\r' && (m_start + 1 >= len || data[m_start + 1] != '\n')) {
        if (m_start + 1 >= len)
          return parse_status::incomplete;
        return fail(400, "bare CR before the request line");
      }
      m_start += data[m_start] == '\r' ? 2 : 1;
      if (m_start > m_limits.max_head)
        return fail(400, "too many empty lines before the request line");
    }
    if (m_start >= len)
      return parse_status::incomplete;
    m_scan = m_start;
  }
  std::size_t limit = len < m_start + m_limits.max_head ? len : m_start + m_limits.max_head;
  // Each line end found is recorded, so parse_header_section splits lines without searching again.
  // A newline is recorded only once the scan moves past it (a resumed scan may see it twice).
  while (m_scan < limit) {
    const void* nl = std::memchr(data + m_scan, '\n', limit - m_scan);
    if (!nl)
      break;
    std::size_t i = static_cast<std::size_t>(static_cast<const char*>(nl) - data);
    if (i + 1 >= len) {
      m_scan = i;
      return parse_status::incomplete;
    }
    std::size_t end = 0;
    if (data[i + 1] == '\n') {
      end = i + 2;
    } else if (data[i + 1] == '\r') {
      if (i + 2 >= len) {
        m_scan = i;
        return parse_status::incomplete;
      }
      if (data[i + 2] != '\n')
        return fail_unparsed(data, len, 400, "bare CR in the header section");  // RFC 9112 §2.2
      end = i + 3;
    }
    if (m_line_count == max_header_fields + 1)
      return fail_unparsed(data, len, 431, "too many header fields");
    m_line_ends[m_line_count++] = static_cast<std::uint32_t>(i);
    if (end != 0) {
      m_head_len = end;
      break;
    }
    m_scan = i + 1;
  }
  if (m_head_len == 0) {
    if (len >= m_start + m_limits.max_head)
      return fail_head_too_large(data, len);
    m_scan = limit;
    return parse_status::incomplete;
  }
  if (m_head_len - m_start > m_limits.max_head)
    return fail_head_too_large(data, len);
  return parse_status::complete;
}

// Past max_head: 431 for the header fields, unless the request line itself is what does
// not fit (no line end yet): RFC 9112 §3 asks for 414 when the request-target is too
// long, and 501 when the method is longer than any this server implements.
parse_status request_parser::fail_head_too_large(const char* data, std::size_t len) noexcept {
  if (m_line_count == 0) {
    const std::size_t end = len < m_start + m_limits.max_head ? len : m_start + m_limits.max_head;
    if (std::memchr(data + m_start, ' ', end - m_start) == nullptr)
      return fail_unparsed(data, len, 501, "method too long");
    return fail_unparsed(data, len, 414, "request-target too long");
  }
  return fail_unparsed(data, len, 431, "request header section too large");
}

// An error found before the request line was parsed (the header section is too large):
// the method is still known from the first bytes, so a HEAD gets its answer without a
// body like any other answer to HEAD.
parse_status request_parser::fail_unparsed(const char* data, std::size_t len, int status, const char* reason) noexcept {
  m_head = len - m_start >= 5 && std::memcmp(data + m_start, "HEAD ", 5) == 0;
  return fail(status, reason);
}

parse_status request_parser::parse_header_section(const char* data) noexcept {
  std::size_t begin = m_start;
  for (std::size_t k = 0; k < m_line_count; ++k) {
    std::size_t nl = m_line_ends[k];
    std::size_t n = nl - begin;
    if (n > 0 && data[nl - 1] == '\r')
      --n;  // CRLF; a bare LF ends a line as well (RFC 9112 §2.2)
    const char* p = data + begin;
    parse_status s;
    if (k == 0) {
      s = parse_request_line(p, n);
    } else {
      if (p[0] == ' ' || p[0] == '\t')
        return fail(400, "obs-fold or whitespace before a field name");
      s = parse_field(data, begin, n);
    }
    if (s != parse_status::complete)
      return s;
    begin = nl + 1;
  }
  return check_framing(data);
}

// request-line = method SP request-target SP HTTP-version (RFC 9112 §3). The target of
// the common case, origin-form, is checked in the same pass that finds its end; the other
// forms are rare and checked apart (uri.hpp).
parse_status request_parser::parse_request_line(const char* line, std::size_t n) noexcept {
  std::size_t i = 0;
  while (i < n && is(line[i], c_tchar))
    ++i;
  if (i == 0 || i >= n || line[i] != ' ')
    return fail(400, "malformed request line (method)");
  std::size_t line_off = m_start;
  m_method = {static_cast<std::uint32_t>(line_off), static_cast<std::uint32_t>(i)};
  const std::string_view method(line, i);
  m_head = method == "HEAD";  // from here on an error answer to it carries no body
  std::size_t t = ++i;
  if (i < n && line[i] == '/') {
    i = detail::scan_origin(line, i, n);
  } else {
    while (i < n && is(line[i], c_vchar))
      ++i;
  }
  if (i == t || i >= n || line[i] != ' ')
    return fail(400, i > t && i < n ? "invalid character in the request target" : "malformed request line (target)");
  m_target = {static_cast<std::uint32_t>(line_off + t), static_cast<std::uint32_t>(i - t)};
  ++i;
  if (n - i != 8 || std::memcmp(line + i, "HTTP/", 5) != 0 || line[i + 5] < '0' || line[i + 5] > '9' ||
      line[i + 6] != '.' || line[i + 7] < '0' || line[i + 7] > '9')
    return fail(400, "malformed request line (version)");
  if (line[i + 5] != '1')
    return fail(505, "HTTP version not supported");
  m_version_minor = line[i + 7] == '0' ? 0 : 1;
  m_keep_alive = m_version_minor == 1;
  const std::string_view target(line + t, m_target.len);
  if (target[0] != '/') {
    // asterisk-form only for OPTIONS, authority-form only for CONNECT, else absolute-form.
    bool ok = target == "*"          ? method == "OPTIONS"
              : method == "CONNECT" ? detail::valid_authority_form(target)
                                    : detail::valid_absolute_form(target);
    if (!ok)
      return fail(400, "malformed request target");
  }
  return parse_status::complete;
}

parse_status request_parser::parse_field(const char* data, std::size_t begin, std::size_t n) noexcept {
  const char* p = data + begin;
  std::size_t i = 0;
  while (i < n && is(p[i], c_tchar))
    ++i;
  if (i == 0 || i >= n || p[i] != ':')
    return fail(400, i < n && (p[i] == ' ' || p[i] == '\t') ? "whitespace before a colon" : "malformed header field");
  std::size_t name_len = i++;
  while (i < n && (p[i] == ' ' || p[i] == '\t'))
    ++i;
  std::size_t v = i, vend = i;
  for (; i < n; ++i) {
    if (!is(p[i], c_field))
      return fail(400, "invalid character in a header field value");
    if (p[i] != ' ' && p[i] != '\t')
      vend = i + 1;
  }
  if (m_field_count == max_header_fields)
    return fail(431, "too many header fields");
  m_fields[m_field_count++] = {{static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(name_len)},
                               {static_cast<std::uint32_t>(begin + v), static_cast<std::uint32_t>(vend - v)}};
  return parse_status::complete;
}

namespace {

/// Calls f(token) for each comma-separated element of a list value, OWS trimmed; empty
/// elements are skipped (RFC 9110 §5.6.1).
template <class F>
bool for_each_element(std::string_view v, F&& f) {
  while (!v.empty()) {
    std::size_t c = v.find(',');
    std::string_view e = v.substr(0, c);
    while (!e.empty() && (e.front() == ' ' || e.front() == '\t'))
      e.remove_prefix(1);
    while (!e.empty() && (e.back() == ' ' || e.back() == '\t'))
      e.remove_suffix(1);
    if (!e.empty() && !f(e))
      return false;
    if (c == std::string_view::npos)
      break;
    v.remove_prefix(c + 1);
  }
  return true;
}

}  // namespace

// Content-Length, Transfer-Encoding, Connection and Host (RFC 9112 §6.1–6.3, §3.2, §9.3).
parse_status request_parser::check_framing(const char* data) noexcept {
  std::uint64_t length = 0;
  bool has_length = false, te = false, chunked_last = false, chunked_seen_twice = false, chunked_with_parameters = false;
  bool other_coding = false, bad_length = false, bad_host = false, expect_continue = false;
  int chunked_count = 0;
  for (std::size_t f = 0; f < m_field_count; ++f) {
    std::string_view name(data + m_fields[f].name.off, m_fields[f].name.len);
    std::string_view value(data + m_fields[f].value.off, m_fields[f].value.len);
    if (iequals(name, "content-length")) {
      bool any = false;
      bool ok = for_each_element(value, [&](std::string_view e) {
        std::uint64_t x = 0;
        for (char c : e) {
          if (c < '0' || c > '9')
            return false;
          if (x > (~std::uint64_t{0} - 9) / 10)
            return false;
          x = x * 10 + static_cast<std::uint64_t>(c - '0');
        }
        if (has_length && x != length)
          return false;
        has_length = any = true;
        length = x;
        return true;
      });
      if (!ok || !any)
        bad_length = true;
    } else if (iequals(name, "transfer-encoding")) {
      te = true;
      for_each_element(value, [&](std::string_view e) {
        std::string_view coding = e.substr(0, e.find(';'));
        while (!coding.empty() && (coding.back() == ' ' || coding.back() == '\t'))
          coding.remove_suffix(1);
        if (iequals(coding, "chunked")) {
          if (++chunked_count > 1)
            chunked_seen_twice = true;
          if (coding.size() != e.size())
            chunked_with_parameters = true;  // RFC 9112 §7: it defines none; SHOULD be an error
          chunked_last = true;
        } else {
          chunked_last = false;
          other_coding = true;
        }
        return true;
      });
    } else if (iequals(name, "connection")) {
      for_each_element(value, [&](std::string_view e) {
        if (iequals(e, "close"))
          m_keep_alive = false;
        else if (iequals(e, "keep-alive") && m_version_minor == 0)
          m_keep_alive = true;
        return true;
      });
    } else if (iequals(name, "host")) {
      ++m_host_count;
      if (!detail::valid_host(value))
        bad_host = true;
    } else if (iequals(name, "expect")) {
      expect_continue = iequals(value, "100-continue");
    }
  }
  // Connection: close wins over keep-alive whatever the order.
  for (std::size_t f = 0; f < m_field_count && m_keep_alive; ++f) {
    std::string_view name(data + m_fields[f].name.off, m_fields[f].name.len);
    if (iequals(name, "connection"))
      for_each_element(std::string_view(data + m_fields[f].value.off, m_fields[f].value.len), [&](std::string_view e) {
        if (iequals(e, "close"))
          m_keep_alive = false;
        return true;
      });
  }
  if (bad_length)
    return fail(400, "invalid Content-Length");
  if (te && has_length)
    return fail(400, "both Content-Length and Transfer-Encoding");
  if (te && m_version_minor == 0)
    return fail(400, "Transfer-Encoding in an HTTP/1.0 request");
  if (te && !chunked_last)
    return fail(400, "Transfer-Encoding does not end in chunked");
  if (chunked_seen_twice)
    return fail(400, "chunked applied more than once");
  if (chunked_with_parameters)
    return fail(400, "the chunked transfer coding takes no parameters");
  if (te && other_coding)
    return fail(501, "transfer coding not implemented");
  if (m_version_minor == 1 && m_host_count != 1)
    return fail(400, m_host_count == 0 ? "missing Host" : "more than one Host");
  if (m_host_count > 1)
    return fail(400, "more than one Host");
  if (bad_host)
    return fail(400, "invalid Host");
  m_has_length = has_length;
  m_content_length = length;
  m_expect_continue = expect_continue && m_version_minor == 1 && (te || length > 0);
  m_chunked = te;
  m_pos = m_head_len;
  m_phase = te ? phase::chunk_size : phase::body_length;
  return parse_status::complete;
}

void request_parser::finish(const char* data) noexcept {
  m_phase = phase::done;
  finish_head(data);
  if (!m_streaming)
    m_req.m_body.reset_buffered(std::string_view(data + m_head_len, m_body_len),
                                m_has_length ? std::optional<std::uint64_t>(m_content_length) : std::nullopt);
}

// The request's views of the head (every field but the body), from the offsets.
void request_parser::finish_head(const char* data) noexcept {
  request& r = m_req;
  r.method = std::string_view(data + m_method.off, m_method.len);
  r.target = std::string_view(data + m_target.off, m_target.len);
  // origin-form and asterisk-form are path [ "?" query ] already; absolute-form's path
  // starts after its authority (empty means "/", RFC 9112 §3.2.1); authority-form (CONNECT)
  // is left whole as the path.
  std::string_view rest = r.target;
  if (rest.front() != '/' && rest != "*") {
    std::size_t scheme = rest.find("://");
    if (scheme != std::string_view::npos) {
      std::size_t end = rest.find_first_of("/?", scheme + 3);
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    }
  }
  std::size_t q = rest.find('?');
  r.path = rest.substr(0, q);
  if (r.path.empty())
    r.path = "/";
  r.raw_query = q == std::string_view::npos ? std::string_view() : rest.substr(q + 1);
  r.version_minor = m_version_minor;
  r.keep_alive = m_keep_alive;
  r.chunked = m_chunked;
  r.m_count = m_field_count;
  for (std::size_t f = 0; f < m_field_count; ++f)
    m_header_views[f] = {std::string_view(data + m_fields[f].name.off, m_fields[f].name.len),
                         std::string_view(data + m_fields[f].value.off, m_fields[f].value.len)};
  r.m_headers = m_header_views;
}

}  // namespace saturn::http
