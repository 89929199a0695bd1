// The URI pieces the request parser checks (RFC 3986 grammar as profiled by RFC 9110 §4
// and RFC 9112 §3.2): origin-form bytes, the Host field value, and the authority-form and
// absolute-form targets. Each check is one pass over its bytes through the character
// table; nothing allocates.
//
// Rejected on purpose: userinfo ("u@host") in Host and absolute-form (RFC 9110 §4.2.4
// tells a recipient to treat it as an error), IPv6 zone identifiers ("%25eth0", RFC 6874
// is not part of HTTP's grammar), bytes outside the grammar (no lenient '|', '{', '"'...).
#pragma once

#include "http/chars.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace saturn::http::detail {

/// Scans bytes of class `cls` and pct-encoded triplets in p[i, n); returns where the scan
/// stopped: n, or the first byte that is neither (a '%' without two hex digits after it
/// included).
inline std::size_t scan_pct(const char* p, std::size_t i, std::size_t n, std::uint8_t cls) noexcept {
  for (;;) {
    while (i < n && is(p[i], cls))
      ++i;
    if (i + 2 < n && p[i] == '%' && is(p[i + 1], c_hex) && is(p[i + 2], c_hex)) {
      i += 3;
      continue;
    }
    return i;
  }
}

/// Scans origin-form bytes (pchar / "/" / "?" / pct-encoded) of p[i, n): see scan_pct.
inline std::size_t scan_origin(const char* p, std::size_t i, std::size_t n) noexcept {
  return scan_pct(p, i, n, c_origin);
}

/// IPv4address: four dec-octets ("0".."255", no leading zero) separated by '.'.
inline bool valid_ipv4(std::string_view s) noexcept {
  std::size_t i = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (i >= s.size() || s[i] != '.')
        return false;
      ++i;
    }
    std::size_t b = i;
    unsigned v = 0;
    while (i < s.size() && i - b < 3 && s[i] >= '0' && s[i] <= '9')
      v = v * 10 + static_cast<unsigned>(s[i++] - '0');
    if (i == b || v > 255 || (s[b] == '0' && i - b > 1))
      return false;
  }
  return i == s.size();
}

/// IPv6address: groups of 1-4 hex digits separated by ':', at most one "::" (standing for
/// at least one zero group), eight groups in all, the last two possibly an IPv4address.
inline bool valid_ipv6(std::string_view s) noexcept {
  std::size_t i = 0, n = s.size();
  int groups = 0;
  bool gap = false;
  if (n >= 2 && s[0] == ':' && s[1] == ':') {
    gap = true;
    i = 2;
  } else if (n == 0 || s[0] == ':') {
    return false;
  }
  while (i < n) {
    std::size_t j = i;
    while (j < n && j - i < 5 && is(s[j], c_hex))
      ++j;
    if (j < n && s[j] == '.') {  // a trailing IPv4address: two groups
      if (!valid_ipv4(s.substr(i)))
        return false;
      groups += 2;
      break;
    }
    if (j == i || j - i > 4)
      return false;
    ++groups;
    if (j == n)
      break;
    if (s[j] != ':' || j + 1 == n)
      return false;
    i = j + 1;
    if (s[i] == ':') {
      if (gap)
        return false;
      gap = true;
      ++i;
    }
  }
  return gap ? groups <= 7 : groups == 8;
}

/// The inside of an IP-literal's brackets: IPv6address / IPvFuture
/// ("v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )).
inline bool valid_ip_literal(std::string_view s) noexcept {
  if (s.empty() || (s[0] != 'v' && s[0] != 'V'))
    return valid_ipv6(s);
  std::size_t i = 1;
  while (i < s.size() && is(s[i], c_hex))
    ++i;
  if (i == 1 || i + 1 >= s.size() || s[i] != '.')
    return false;
  for (++i; i < s.size(); ++i)
    if (!is(s[i], c_regname) && s[i] != ':')
      return false;
  return true;
}

/// uri-host [ ":" port ] (RFC 9112 §3.2, RFC 3986 §3.2.2-3.2.3): an IP-literal in brackets,
/// or a reg-name (unreserved / pct-encoded / sub-delims; IPv4address is one), then an
/// optional ':' and port = *DIGIT. The empty value is valid (a target with no authority).
inline bool valid_host(std::string_view v) noexcept {
  std::size_t i = 0, n = v.size();
  if (n > 0 && v[0] == '[') {
    std::size_t close = v.find(']');
    if (close == std::string_view::npos || !valid_ip_literal(v.substr(1, close - 1)))
      return false;
    i = close + 1;
  } else {
    i = scan_pct(v.data(), 0, n, c_regname);
  }
  if (i == n)
    return true;
  if (v[i] != ':')
    return false;
  for (++i; i < n; ++i)
    if (v[i] < '0' || v[i] > '9')
      return false;
  return true;
}

/// True if the valid host `v` carries a ":" port.
inline bool host_has_port(std::string_view v) noexcept {
  std::size_t from = !v.empty() && v[0] == '[' ? v.find(']') : 0;
  return v.find(':', from) != std::string_view::npos;
}

/// authority-form (CONNECT): uri-host ":" port (RFC 9112 §3.2.3).
inline bool valid_authority_form(std::string_view t) noexcept { return valid_host(t) && host_has_port(t); }

/// absolute-form: scheme "://" host [ ":" port ] path-abempty [ "?" query ] (RFC 9112
/// §3.2.2 with an authority, as the http and https schemes require): a non-empty host, no
/// userinfo, and the path and query bytes of origin-form.
inline bool valid_absolute_form(std::string_view t) noexcept {
  // scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
  auto alpha = [](char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; };
  if (t.empty() || !alpha(t[0]))
    return false;
  std::size_t i = 1;
  while (i < t.size() && (alpha(t[i]) || (t[i] >= '0' && t[i] <= '9') || t[i] == '+' || t[i] == '-' || t[i] == '.'))
    ++i;
  if (t.substr(i, 3) != "://")
    return false;
  std::size_t a = i + 3;
  std::size_t end = t.find_first_of("/?", a);
  std::string_view authority = t.substr(a, end == std::string_view::npos ? std::string_view::npos : end - a);
  if (authority.empty() || authority[0] == ':' || !valid_host(authority))
    return false;
  if (end == std::string_view::npos)
    return true;
  return scan_origin(t.data(), end, t.size()) == t.size();
}

}  // namespace saturn::http::detail
