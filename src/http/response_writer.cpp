// Serializing responses. The status line of common codes and the Date field are
// precomputed; a response is a handful of appends into the connection's buffer.
#include <saturn/http/response.hpp>

#include <saturn/http/request.hpp>
#include <saturn/loop/clock.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace saturn::http {

std::string_view reason_phrase(int status) noexcept {
  switch (status) {
    case 100: return "Continue";
    case 101: return "Switching Protocols";
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

namespace {

struct date_cache {
  std::time_t second = -1;
  char text[30] = {};  // 29 characters + NUL
};
thread_local date_cache t_date;

void format_imf_fixdate(std::time_t t, char* out) {
  static constexpr const char* days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                           "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  auto two = [](char* p, int v) {
    p[0] = static_cast<char>('0' + v / 10);
    p[1] = static_cast<char>('0' + v % 10);
  };
  const char* d = days[tm.tm_wday];
  const char* m = months[tm.tm_mon];
  int y = tm.tm_year + 1900;
  char* p = out;
  *p++ = d[0], *p++ = d[1], *p++ = d[2], *p++ = ',', *p++ = ' ';
  two(p, tm.tm_mday), p += 2, *p++ = ' ';
  *p++ = m[0], *p++ = m[1], *p++ = m[2], *p++ = ' ';
  two(p, y / 100), two(p + 2, y % 100), p += 4, *p++ = ' ';
  two(p, tm.tm_hour), p += 2, *p++ = ':';
  two(p, tm.tm_min), p += 2, *p++ = ':';
  two(p, tm.tm_sec), p += 2;
  *p++ = ' ', *p++ = 'G', *p++ = 'M', *p++ = 'T';
  *p = '\0';
}

/// Decimal digits of v written backwards ending at `end`; returns the first digit.
inline char* format_decimal(std::size_t v, char* end) {
  char* p = end;
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  return p;
}

/// A cursor over bytes reserved at the end of the output (sizes are computed first, so
/// the serialization is plain copies with no capacity checks).
struct cursor {
  char* p;
  void put(std::string_view s) noexcept {
    if (s.empty())
      return;  // an empty view may have a null data(), which memcpy must not get
    std::memcpy(p, s.data(), s.size());
    p += s.size();
  }
  template <std::size_t N>
  void lit(const char (&s)[N]) noexcept {
    std::memcpy(p, s, N - 1);
    p += N - 1;
  }
};

}  // namespace

std::string_view http_date() noexcept {
  ::timespec ts{};
  // CLOCK_REALTIME_COARSE: a vDSO read of a few ns; its tick (≤ 4 ms) is fine for seconds.
  ::clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  // Under a simulation the date is virtual too: 2026-01-01T00:00:00Z plus the virtual
  // clock. A real date made HTTP/2 answers differ between runs of one seed (HPACK's
  // Huffman code gives the date's digits different lengths).
  if (const std::int64_t v = saturn::clock::virtual_ns(); v != 0)
    ts.tv_sec = 1'767'225'600 + static_cast<::time_t>(v / 1'000'000'000);
  if (ts.tv_sec != t_date.second) {
    t_date.second = ts.tv_sec;
    format_imf_fixdate(ts.tv_sec, t_date.text);
  }
  return {t_date.text, 29};
}

namespace {
/// RFC 9110 §5.6.2 tchar.
bool is_tchar(unsigned char c) noexcept {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
    return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}
}  // namespace

namespace {

/// A field as add_header / add_trailer store it: the name checked, CR LF NUL of the value
/// replaced by spaces.
void add_field(std::vector<std::pair<text_value, text_value>>& to, text_value name, text_value value,
               const char* who) {
  std::string_view n = name.view();
  if (n.empty() || !std::all_of(n.begin(), n.end(), [](char c) { return is_tchar(static_cast<unsigned char>(c)); }))
    throw std::invalid_argument(std::string(who) + ": field name \"" + std::string(n) +
                                "\" is not a token (RFC 9110 section 5.1)");
  std::string_view v = value.view();
  if (v.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos) {
    std::string clean(v);
    for (char& c : clean)
      if (c == '\r' || c == '\n' || c == '\0')
        c = ' ';
    value = text_value(std::move(clean));
  }
  to.emplace_back(std::move(name), std::move(value));
}

}  // namespace

void response::add_header(text_value name, text_value value) {
  add_field(m_headers, std::move(name), std::move(value), "http::response::add_header");
}

void response::add_trailer(text_value name, text_value value) {
  add_field(m_trailers, std::move(name), std::move(value), "http::response::add_trailer");
}

void response::set_header(text_value name, text_value value) {
  remove_header(name.view());
  add_header(std::move(name), std::move(value));
}

void response::remove_header(std::string_view name) noexcept {
  std::erase_if(m_headers, [name](const auto& f) { return iequals(f.first.view(), name); });
}

std::string_view response::header(std::string_view name) const noexcept {
  for (auto& [n, v] : m_headers)
    if (iequals(n.view(), name))
      return v.view();
  return {};
}

namespace {
// RFC 9110 §6.4.1, §8.6: 1xx, 204 and 304 have no content, and 1xx / 204 no
// Content-Length; a 304 omits it too (it would have to be the selected
// representation's length, which a handler answering 304 need not know).
bool has_no_content(int status) noexcept { return (status >= 100 && status < 200) || status == 204 || status == 304; }
}  // namespace

stream_framing framing_of(const response& r, const write_options& opts) noexcept {
  if (!r.streamed() || has_no_content(r.status))
    return stream_framing::none;
  stream_framing f = r.stream_length() ? stream_framing::length
                     : opts.version_minor == 0 ? stream_framing::close
                                               : stream_framing::chunked;
  return opts.head ? stream_framing::none : f;
}

void write_response(std::string& out, const response& r, const write_options& opts, std::string_view server) {
  const bool no_content = has_no_content(r.status);
  std::string_view body = no_content || r.streamed() ? std::string_view{} : r.body();
  char status_digits[24], length_digits[24];
  char* status_end = status_digits + sizeof status_digits;
  char* length_end = length_digits + sizeof length_digits;
  std::string_view status_text;
  if (r.status != 200) {
    char* b = format_decimal(static_cast<std::size_t>(r.status), status_end);
    status_text = std::string_view(b, static_cast<std::size_t>(status_end - b));
  }
  // A streamed body: its declared length, or chunked, or (HTTP/1.0) delimited by the close.
  const bool streamed_unsized = r.streamed() && !r.stream_length() && !no_content;
  const std::uint64_t content_length = r.streamed() && r.stream_length() ? *r.stream_length() : body.size();
  char* length_begin = format_decimal(static_cast<std::size_t>(content_length), length_end);
  std::string_view length(length_begin, static_cast<std::size_t>(length_end - length_begin));
  std::string_view length_field = "\r\nContent-Length: ";
  if (streamed_unsized) {
    length = {};
    length_field = opts.version_minor == 0 ? std::string_view() : std::string_view("\r\nTransfer-Encoding: chunked");
  }
  std::string_view reason = reason_phrase(r.status);
  std::string_view connection;
  if (!opts.keep_alive || r.close || (streamed_unsized && opts.version_minor == 0))
    connection = "\r\nConnection: close";
  else if (opts.version_minor == 0)
    connection = "\r\nConnection: keep-alive";

  std::size_t n = (r.status == 200 ? 17 : 9 + status_text.size() + 1 + reason.size() + 2) + 8 + server.size() + 8 + 29 +
                  (r.content_type.empty() ? 0 : 16 + r.content_type.size()) + (no_content ? 0 : length_field.size() + length.size()) + connection.size() + 4 +
                  (opts.head ? 0 : body.size());
  for (auto& [name, value] : r.headers())
    n += 2 + name.size() + 2 + value.size();
  // The head is formatted in place; the body is appended after it, so its bytes are
  // copied once and never zero-filled first (resize would memset them).
  const std::size_t body_bytes = opts.head ? 0 : body.size();
  std::size_t old = out.size();
  out.reserve(old + n);
  out.resize(old + n - body_bytes);
  cursor c{out.data() + old};
  if (r.status == 200) {
    c.lit("HTTP/1.1 200 OK\r\n");
  } else {
    c.lit("HTTP/1.1 ");
    c.put(status_text);
    c.lit(" ");
    c.put(reason);
    c.lit("\r\n");
  }
  c.lit("Server: ");
  c.put(server);
  c.lit("\r\nDate: ");
  c.put(http_date());
  if (!r.content_type.empty()) {
    c.lit("\r\nContent-Type: ");
    c.put(r.content_type.view());
  }
  if (!no_content) {
    c.put(length_field);
    c.put(length);
  }
  c.put(connection);
  for (auto& [name, value] : r.headers()) {
    c.lit("\r\n");
    c.put(name);
    c.lit(": ");
    c.put(value);
  }
  c.lit("\r\n\r\n");
  // The sizes above and the copies here must agree; a mismatch is a bug in this function.
  if (c.p != out.data() + out.size())
    std::abort();
  if (body_bytes != 0)
    out.append(body);
}

void write_error(std::string& out, int status, std::string_view reason, std::string_view server, bool head) {
  std::string body(reason);
  body.push_back('\n');
  response r(status, "text/plain", std::move(body));
  write_response(out, r, write_options{.keep_alive = false, .head = head}, server);
}

}  // namespace saturn::http
