// response_parser and body_decoder (include/saturn/http/response_parser.hpp).
#include <saturn/http/response_parser.hpp>

#include <algorithm>
#include <cstring>

#include "http/chars.hpp"

namespace saturn::http {

namespace {

std::string_view trim_ows(std::string_view v) noexcept {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t'))
    v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t'))
    v.remove_suffix(1);
  return v;
}

bool is_tchar(char c) noexcept { return (detail::char_table[static_cast<unsigned char>(c)] & detail::c_tchar) != 0; }

/// Calls f(token) for each comma-separated element of a list field (empty ones skipped).
template <class F>
void for_each_token(std::string_view v, F f) {
  while (!v.empty()) {
    const std::size_t comma = v.find(',');
    std::string_view t = trim_ows(v.substr(0, comma));
    if (!t.empty())
      f(t);
    if (comma == std::string_view::npos)
      break;
    v.remove_prefix(comma + 1);
  }
}

/// Content-Length's value: digits, or a list of equal values ("7, 7", §6.3 item 5). An
/// empty value or an empty list element is refused (llhttp does too).
bool parse_length(std::string_view v, std::uint64_t& out, bool& seen) noexcept {
  for (;;) {
    const std::size_t comma = v.find(',');
    const std::string_view t = trim_ows(v.substr(0, comma));
    if (t.empty())
      return false;
    std::uint64_t n = 0;
    for (char c : t) {
      if (c < '0' || c > '9' || n > (UINT64_MAX - 9) / 10)
        return false;
      n = n * 10 + static_cast<unsigned>(c - '0');
    }
    if (seen && n != out)
      return false;
    out = n;
    seen = true;
    if (comma == std::string_view::npos)
      return true;
    v.remove_prefix(comma + 1);
  }
}

/// chunk-ext = *( ";" ext-name [ "=" ext-val ] ), ext-val = token / quoted-string
/// (RFC 9112 §7.1.1), without the BWS the grammar allows: llhttp refuses whitespace in a
/// chunk line, and the client must not frame differently from it. `v` starts at ';'.
bool valid_chunk_ext(std::string_view v) noexcept {
  std::size_t i = 0;
  auto token = [&] {
    const std::size_t start = i;
    while (i < v.size() && is_tchar(v[i]))
      ++i;
    return i > start;
  };
  while (i < v.size()) {
    if (v[i] != ';')
      return false;
    ++i;
    if (!token())
      return false;
    if (i < v.size() && v[i] == '=') {
      ++i;
      if (i < v.size() && v[i] == '"') {
        for (++i; i < v.size() && v[i] != '"'; ++i)
          if (v[i] == '\\')
            ++i;
        if (i >= v.size())
          return false;
        ++i;
      } else if (!token()) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

std::string_view response_head::get(std::string_view name) const noexcept {
  for (const auto& [n, v] : fields)
    if (iequals(n, name))
      return v;
  return {};
}

bool response_head::has(std::string_view name) const noexcept {
  for (const auto& f : fields)
    if (iequals(f.first, name))
      return true;
  return false;
}

void response_parser::reset() noexcept {
  m_head.status = 0;
  m_head.version_minor = 1;
  m_head.reason.clear();
  m_head.fields.clear();
  m_head.framing = body_framing::none;
  m_head.content_length = 0;
  m_head.keep_alive = true;
  m_scan = 0;
  m_consumed = 0;
  m_reason = "";
}

parse_status response_parser::fail(const char* why) noexcept {
  m_reason = why;
  return parse_status::error;
}

parse_status response_parser::parse(const char* data, std::size_t len, bool head_request) {
  // Find the blank line that ends the head: "\n\n" or "\n\r\n" (a bare LF ends a line).
  const std::size_t limit = std::min(len, m_limits.max_head);
  for (std::size_t i = m_scan; i < limit; ++i) {
    if (data[i] != '\n')
      continue;
    if (i + 1 < len && data[i + 1] == '\n')
      return parse_lines(data, i + 2, head_request);
    if (i + 2 < len && data[i + 1] == '\r' && data[i + 2] == '\n')
      return parse_lines(data, i + 3, head_request);
  }
  if (len >= m_limits.max_head)
    return fail("response head too large");
  // A terminator split across reads starts at most two bytes back.
  m_scan = len >= 2 ? len - 2 : 0;
  return parse_status::incomplete;
}

parse_status response_parser::parse_lines(const char* data, std::size_t end, bool head_request) {
  m_consumed = end;
  std::size_t pos = 0;
  bool first = true;
  while (pos < end) {
    std::size_t nl = pos;
    while (data[nl] != '\n')
      ++nl;
    // CRLF only: RFC 9112 §2.2 lets a recipient accept a bare LF, but llhttp (and so
    // Node) refuses it, and a client that frames differently from its peers is what
    // response-splitting attacks use.
    if (nl == pos || data[nl - 1] != '\r')
      return fail("a line of the response head ends in a bare LF (CRLF expected)");
    const std::size_t line_end = nl - 1;
    std::string_view line(data + pos, line_end - pos);
    pos = nl + 1;
    if (line.find('\r') != std::string_view::npos)
      return fail("bare CR in the response head");
    if (first) {
      first = false;
      // status-line = HTTP-version SP status-code SP [ reason-phrase ]
      // HTTP/1.0 and 1.1 only: no other 1.x exists, and llhttp refuses them too.
      if (line.size() < 12 || line.substr(0, 7) != "HTTP/1." || (line[7] != '0' && line[7] != '1') || line[8] != ' ')
        return fail("malformed status line");
      m_head.version_minor = static_cast<std::uint8_t>(line[7] - '0');
      int code = 0;
      for (std::size_t k = 9; k < 12; ++k) {
        if (line[k] < '0' || line[k] > '9')
          return fail("malformed status code");
        code = code * 10 + (line[k] - '0');
      }
      if (code < 100)
        return fail("malformed status code");
      if (line.size() > 12 && line[12] != ' ')
        return fail("malformed status line");
      m_head.status = code;
      m_head.reason.assign(line.size() > 13 ? line.substr(13) : std::string_view{});
      continue;
    }
    if (line.empty())
      break;  // the blank line
    if (line.front() == ' ' || line.front() == '\t') {
      // obs-fold: replaced by one SP (RFC 9112 §5.2, for a user agent).
      if (m_head.fields.empty())
        return fail("obs-fold before any field");
      std::string& v = m_head.fields.back().second;
      const std::string_view more = trim_ows(line);
      if (!more.empty()) {
        if (!v.empty())
          v += ' ';
        v += more;
      }
      continue;
    }
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0)
      return fail("field line without a name and colon");
    const std::string_view name = line.substr(0, colon);
    for (char c : name)
      if (!is_tchar(c))
        return fail("field name is not a token (or whitespace before the colon)");
    if (iequals(name, "content-length") && line.find('\t', colon) != std::string_view::npos)
      return fail("invalid Content-Length");  // HTAB is OWS, but llhttp refuses it here: so do we
    if (m_head.fields.size() >= m_limits.max_fields)
      return fail("too many header fields");
    m_head.fields.emplace_back(std::string(name), std::string(trim_ows(line.substr(colon + 1))));
  }
  return decide_framing(head_request);
}

parse_status response_parser::decide_framing(bool head_request) {
  bool close = false, keep = false, chunked_last = false, has_te = false, has_len = false;
  std::uint64_t length = 0;
  for (const auto& [n, v] : m_head.fields) {
    if (iequals(n, "connection")) {
      for_each_token(v, [&](std::string_view t) {
        close = close || iequals(t, "close");
        keep = keep || iequals(t, "keep-alive");
      });
    } else if (iequals(n, "transfer-encoding")) {
      has_te = true;
      // An empty element ("chunked,") is refused: peers disagree on what it means
      // (llhttp: not chunked), and framing ambiguity is what smuggling is made of.
      for (std::string_view rest = v;;) {
        const std::size_t comma = rest.find(',');
        const std::string_view t = trim_ows(rest.substr(0, comma));
        if (t.empty())
          return fail("an empty element in Transfer-Encoding");
        chunked_last = iequals(t, "chunked");
        if (comma == std::string_view::npos)
          break;
        rest.remove_prefix(comma + 1);
      }
    } else if (iequals(n, "content-length")) {
      if (!parse_length(v, length, has_len))
        return fail("invalid Content-Length");
    }
  }
  m_head.keep_alive = m_head.version_minor >= 1 ? !close : keep && !close;
  const int s = m_head.status;
  if (head_request || (s >= 100 && s < 200) || s == 204 || s == 304) {
    m_head.framing = body_framing::none;
  } else if (has_te) {
    m_head.framing = chunked_last ? body_framing::chunked : body_framing::until_close;
    if (has_len || !chunked_last || m_head.version_minor == 0)
      m_head.keep_alive = false;  // §6.3: do not trust the connection's framing afterwards
  } else if (has_len) {
    m_head.framing = body_framing::length;
    m_head.content_length = length;
  } else {
    m_head.framing = body_framing::until_close;
    m_head.keep_alive = false;
  }
  return parse_status::complete;
}

body_decoder::step body_decoder::feed(const char* data, std::size_t len) noexcept {
  step st;
  switch (m_framing) {
    case body_framing::none:
      m_state = state::done;
      st.done = true;
      return st;
    case body_framing::until_close:
      st.consumed = len;
      st.data = {data, len};
      return st;
    case body_framing::length: {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(m_left, len));
      m_left -= n;
      st.consumed = n;
      st.data = {data, n};
      if (m_left == 0) {
        m_state = state::done;
        st.done = true;
      }
      return st;
    }
    case body_framing::chunked:
      break;
  }
  std::size_t pos = 0;
  for (;;) {
    switch (m_state) {
      case state::size_line: {
        const void* nl = std::memchr(data + pos, '\n', len - pos);
        if (nl == nullptr) {
          if (len - pos > m_limits.max_chunk_line)
            st.error = "chunk size line too long";
          st.consumed = pos;
          return st;
        }
        const std::size_t end = static_cast<std::size_t>(static_cast<const char*>(nl) - data);
        if (end - pos > m_limits.max_chunk_line) {
          st.error = "chunk size line too long";
          return st;
        }
        if (end == pos || data[end - 1] != '\r') {
          st.error = "chunk size line without CRLF";
          return st;
        }
        std::uint64_t size = 0;
        std::size_t k = pos;
        for (; k < end - 1 && (detail::char_table[static_cast<unsigned char>(data[k])] & detail::c_hex) != 0; ++k) {
          if (size > (UINT64_MAX >> 4)) {
            st.error = "chunk size overflows";
            return st;
          }
          const char c = data[k];
          size = size * 16 + static_cast<unsigned>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
        }
        if (k == pos) {
          st.error = "invalid chunk size";
          return st;
        }
        // What may follow the digits: ";" extensions, nothing else.
        const std::size_t e = k;
        if (e < end - 1 && (data[e] != ';' || !valid_chunk_ext(std::string_view(data + e, end - 1 - e)))) {
          st.error = "invalid chunk size or extension";
          return st;
        }
        pos = end + 1;
        m_left = size;
        m_state = size == 0 ? state::trailers : state::chunk_data;
        break;
      }
      case state::chunk_data: {
        if (pos == len) {
          st.consumed = pos;
          return st;
        }
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(m_left, len - pos));
        st.data = {data + pos, n};
        pos += n;
        m_left -= n;
        if (m_left == 0)
          m_state = state::chunk_crlf;
        st.consumed = pos;
        return st;  // one run of data per call
      }
      case state::chunk_crlf: {
        if (len - pos < 2) {
          if (len - pos == 1 && data[pos] != '\r')
            st.error = "chunk data not followed by CRLF";
          st.consumed = pos;
          return st;
        }
        if (data[pos] != '\r' || data[pos + 1] != '\n') {
          st.error = "chunk data not followed by CRLF";
          return st;
        }
        pos += 2;
        m_state = state::size_line;
        break;
      }
      case state::trailers: {
        const void* nl = std::memchr(data + pos, '\n', len - pos);
        if (nl == nullptr) {
          if (len - pos > m_limits.max_chunk_line)
            st.error = "trailer line too long";
          st.consumed = pos;
          return st;
        }
        const std::size_t end = static_cast<std::size_t>(static_cast<const char*>(nl) - data);
        if (end == pos || data[end - 1] != '\r') {
          st.error = "trailer line without CRLF";
          return st;
        }
        const bool blank = end == pos + 1;
        if (!blank) {
          // A trailer field: name ":" value, like a header field; skipped (§6.5 lets a
          // recipient ignore them) once it is known to be one.
          std::size_t k = pos;
          while (k < end - 1 && is_tchar(data[k]))
            ++k;
          if (k == pos || data[k] != ':') {
            st.error = "malformed trailer field";
            return st;
          }
          for (std::size_t v = k; v < end - 1; ++v)
            if (data[v] == '\r') {
              st.error = "bare CR in a trailer field";
              return st;
            }
        }
        pos = end + 1;
        if (blank) {
          m_state = state::done;
          st.consumed = pos;
          st.done = true;
          return st;
        }
        break;
      }
      case state::data:
      case state::done:
        st.consumed = pos;
        st.done = m_state == state::done;
        return st;
    }
  }
}

body_decoder::step body_decoder::end_of_stream() const noexcept {
  step st;
  if (m_state == state::done || m_framing == body_framing::until_close || m_framing == body_framing::none)
    st.done = true;
  else
    st.error = "truncated: the connection closed inside the body";
  return st;
}

}  // namespace saturn::http
