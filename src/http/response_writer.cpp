// Serializing responses. The status line of common codes and the Date field are
// precomputed; a response is a handful of appends into the connection's buffer.
#include <saturn/http/response.hpp>

#include <ctime>

namespace saturn::http {

std::string_view reason_phrase(int status) noexcept {
  switch (status) {
    case 100: return "Continue";
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

inline void append_decimal(std::string& out, std::size_t v) {
  char tmp[24];
  char* e = tmp + sizeof tmp;
  char* p = e;
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  out.append(p, static_cast<std::size_t>(e - p));
}

}  // namespace

std::string_view http_date() noexcept {
  ::timespec ts{};
  // CLOCK_REALTIME_COARSE: a vDSO read of a few ns; its tick (≤ 4 ms) is fine for seconds.
  ::clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  if (ts.tv_sec != t_date.second) {
    t_date.second = ts.tv_sec;
    format_imf_fixdate(ts.tv_sec, t_date.text);
  }
  return {t_date.text, 29};
}

void write_response(std::string& out, const response& r, const write_options& opts, std::string_view server) {
  std::string_view body = r.body();
  if (r.status == 200) {
    out.append("HTTP/1.1 200 OK\r\nServer: ");
  } else {
    out.append("HTTP/1.1 ");
    append_decimal(out, static_cast<std::size_t>(r.status));
    out.push_back(' ');
    out.append(reason_phrase(r.status));
    out.append("\r\nServer: ");
  }
  out.append(server);
  out.append("\r\nDate: ");
  out.append(http_date());
  if (!r.content_type.empty()) {
    out.append("\r\nContent-Type: ");
    out.append(r.content_type);
  }
  out.append("\r\nContent-Length: ");
  append_decimal(out, body.size());
  if (!opts.keep_alive || r.close)
    out.append("\r\nConnection: close");
  else if (opts.version_minor == 0)
    out.append("\r\nConnection: keep-alive");
  for (auto& [name, value] : r.headers()) {
    out.append("\r\n");
    out.append(name);
    out.append(": ");
    out.append(value);
  }
  out.append("\r\n\r\n");
  if (!opts.head)
    out.append(body);
}

void write_error(std::string& out, int status, std::string_view reason, std::string_view server) {
  std::string body(reason);
  body.push_back('\n');
  response r(status, "text/plain", std::move(body));
  write_response(out, r, write_options{.keep_alive = false}, server);
}

}  // namespace saturn::http
