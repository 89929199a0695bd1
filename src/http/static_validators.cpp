// static_files' pure parts: the request path's decoding and checks, ETag and
// Last-Modified, If-None-Match, and the Range field (RFC 9110 §8.8, §13.1, §14).
#include "http/static_detail.hpp"

#include "http/chars.hpp"

#include <cstdio>
#include <ctime>

namespace saturn::http::detail {

path_verdict decode_static_path(std::string_view raw, bool hidden, std::string& out) {
  out.clear();
  out.reserve(raw.size());
  std::string seg;
  auto end_segment = [&](bool slash) -> bool {
    if (seg.empty())
      return true;  // leading or repeated '/': dropped
    if (seg == "." || seg == ".." || (!hidden && seg.front() == '.'))
      return false;
    out += seg;
    if (slash)
      out.push_back('/');
    seg.clear();
    return true;
  };
  for (std::size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c == '%') {
      if (i + 2 >= raw.size() || !is(raw[i + 1], c_hex) || !is(raw[i + 2], c_hex))
        return path_verdict::bad_escape;
      c = static_cast<char>(hex_value(raw[i + 1]) * 16 + hex_value(raw[i + 2]));
      i += 2;
      // A decoded '/' separates segments like a literal one: "..%2fx" is "../x".
    }
    if (c == '\0')
      return path_verdict::not_found;
    if (c == '/') {
      if (!end_segment(true))
        return path_verdict::not_found;
    } else {
      seg.push_back(c);
    }
  }
  if (!end_segment(false))
    return path_verdict::not_found;
  return path_verdict::ok;
}

std::string make_etag(std::uint64_t size, std::int64_t mtime_ns) {
  char buf[64];
  int n = std::snprintf(buf, sizeof buf, "\"%llx-%llx\"", static_cast<unsigned long long>(size),
                        static_cast<unsigned long long>(mtime_ns));
  return std::string(buf, static_cast<std::size_t>(n));
}

namespace {
constexpr const char* k_days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr const char* k_months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) noexcept {
  out = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}
}  // namespace

std::string imf_fixdate(std::int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[40];
  int n = std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d GMT", k_days[tm.tm_wday], tm.tm_mday,
                        k_months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return std::string(buf, static_cast<std::size_t>(n));
}

std::optional<std::int64_t> parse_imf_fixdate(std::string_view s) noexcept {
  // "Sun, 06 Nov 1994 08:49:37 GMT": 29 bytes, fixed positions.
  if (s.size() != 29 || s.substr(3, 2) != ", " || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' || s[19] != ':' ||
      s[22] != ':' || s.substr(25) != " GMT")
    return std::nullopt;
  int month = -1;
  for (int m = 0; m < 12; ++m)
    if (s.substr(8, 3) == k_months[m])
      month = m;
  std::tm tm{};
  int year = 0;
  if (month < 0 || !digits(s, 5, 2, tm.tm_mday) || !digits(s, 12, 4, year) || !digits(s, 17, 2, tm.tm_hour) ||
      !digits(s, 20, 2, tm.tm_min) || !digits(s, 23, 2, tm.tm_sec))
    return std::nullopt;
  if (tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
    return std::nullopt;
  tm.tm_mon = month;
  tm.tm_year = year - 1900;
  return static_cast<std::int64_t>(::timegm(&tm));
}

bool none_match_hits(std::string_view value, std::string_view etag) noexcept {
  auto opaque = [](std::string_view t) {
    if (t.size() >= 2 && t[0] == 'W' && t[1] == '/')
      t.remove_prefix(2);
    return t;
  };
  const std::string_view mine = opaque(etag);
  std::size_t i = 0;
  while (i < value.size()) {
    char c = value[i];
    if (c == ' ' || c == '\t' || c == ',') {
      ++i;
      continue;
    }
    if (c == '*')
      return true;
    std::size_t start = i;
    if (c == 'W' && i + 1 < value.size() && value[i + 1] == '/')
      i += 2;
    if (i >= value.size() || value[i] != '"')
      return false;  // not an entity-tag list: no match
    std::size_t close = value.find('"', i + 1);
    if (close == std::string_view::npos)
      return false;
    if (opaque(value.substr(start, close + 1 - start)) == mine)
      return true;
    i = close + 1;
  }
  return false;
}

range_request parse_range(std::string_view v, std::uint64_t size) noexcept {
  range_request r;
  constexpr std::string_view unit = "bytes=";
  if (v.size() < unit.size())
    return r;
  for (std::size_t i = 0; i < unit.size(); ++i)
    if ((v[i] | (v[i] >= 'A' && v[i] <= 'Z' ? 0x20 : 0)) != unit[i])  // the unit is case-insensitive
      return r;
  v.remove_prefix(unit.size());
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t'))
    v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t'))
    v.remove_suffix(1);
  if (v.find(',') != std::string_view::npos)
    return r;  // several ranges: served whole
  std::size_t dash = v.find('-');
  if (dash == std::string_view::npos)
    return r;
  auto number = [](std::string_view s, std::uint64_t& out) {
    if (s.empty() || s.size() > 19)
      return false;
    out = 0;
    for (char c : s) {
      if (c < '0' || c > '9')
        return false;
      out = out * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return true;
  };
  std::string_view a = v.substr(0, dash), b = v.substr(dash + 1);
  std::uint64_t first = 0, last = 0;
  if (a.empty()) {  // suffix: the last n bytes
    if (!number(b, last))
      return r;
    if (last == 0 || size == 0) {
      r.kind = range_request::unsatisfiable;
      return r;
    }
    r.kind = range_request::single;
    r.range = {last >= size ? 0 : size - last, size - 1};
    return r;
  }
  if (!number(a, first))
    return r;
  if (b.empty()) {
    last = size == 0 ? 0 : size - 1;
  } else {
    if (!number(b, last) || last < first)
      return r;  // invalid: ignored
    if (size != 0 && last >= size)
      last = size - 1;
  }
  if (first >= size) {
    r.kind = range_request::unsatisfiable;
    return r;
  }
  r.kind = range_request::single;
  r.range = {first, last};
  return r;
}

}  // namespace saturn::http::detail
