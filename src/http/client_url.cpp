// http::parse_url and url::authority (include/saturn/http/client.hpp).
#include <saturn/http/client.hpp>

#include <system_error>

#include "http/chars.hpp"

namespace saturn::http {

namespace {
error bad_url(const char* why) { return error{std::make_error_code(std::errc::invalid_argument), why}; }

bool starts_with_ci(std::string_view s, std::string_view p) noexcept {
  if (s.size() < p.size())
    return false;
  for (std::size_t i = 0; i < p.size(); ++i)
    if ((s[i] | 0x20) != p[i])
      return false;
  return true;
}
}  // namespace

std::string url::authority() const {
  // Appended piece by piece: g++ 12 warns (-Wrestrict, a false positive) on "[" + host + "]".
  std::string a;
  a.reserve(host.size() + 8);
  const bool v6 = host.find(':') != std::string::npos;
  if (v6)
    a.push_back('[');
  a.append(host);
  if (v6)
    a.push_back(']');
  if (port != (https ? 443 : 80)) {
    a.push_back(':');
    a.append(std::to_string(port));
  }
  return a;
}

result<url> parse_url(std::string_view text) {
  url u;
  if (starts_with_ci(text, "http://")) {
    text.remove_prefix(7);
  } else if (starts_with_ci(text, "https://")) {
    u.https = true;
    text.remove_prefix(8);
  } else {
    return bad_url("http client url: only http:// and https:// URLs are supported");
  }
  if (const auto hash = text.find('#'); hash != std::string_view::npos)
    text = text.substr(0, hash);
  const std::size_t path_at = text.find_first_of("/?");
  std::string_view auth = text.substr(0, path_at);
  std::string_view rest = path_at == std::string_view::npos ? std::string_view{} : text.substr(path_at);
  if (auth.find('@') != std::string_view::npos)
    return bad_url("http client url: userinfo (user@host) is not supported; send an Authorization field");
  std::string_view port_text;
  if (!auth.empty() && auth.front() == '[') {
    const auto close = auth.find(']');
    if (close == std::string_view::npos)
      return bad_url("http client url: unclosed [ in an IPv6 host");
    u.host.assign(auth.substr(1, close - 1));
    const std::string_view after = auth.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':')
        return bad_url("http client url: junk after the IPv6 host");
      port_text = after.substr(1);
    }
  } else {
    const auto colon = auth.rfind(':');
    u.host.assign(auth.substr(0, colon));
    if (colon != std::string_view::npos)
      port_text = auth.substr(colon + 1);
  }
  if (u.host.empty())
    return bad_url("http client url: no host");
  for (char c : u.host)
    if (!(detail::is(c, detail::c_regname) || c == ':' || c == '%'))
      return bad_url("http client url: a byte in the host that RFC 3986 does not allow");
  u.port = u.https ? 443 : 80;
  if (!port_text.empty()) {
    unsigned p = 0;
    for (char c : port_text) {
      if (c < '0' || c > '9' || p > 65535)
        return bad_url("http client url: the port is not a number from 1 to 65535");
      p = p * 10 + static_cast<unsigned>(c - '0');
    }
    if (p == 0 || p > 65535)
      return bad_url("http client url: the port is not a number from 1 to 65535");
    u.port = static_cast<std::uint16_t>(p);
  }
  for (char c : rest)
    if (!(detail::is(c, detail::c_origin) || c == '%'))
      return bad_url("http client url: a byte in the path or query that RFC 3986 does not allow (percent-encode it)");
  if (rest.empty() || rest.front() == '?')
    u.target.push_back('/');
  u.target.append(rest);
  return u;
}

}  // namespace saturn::http
