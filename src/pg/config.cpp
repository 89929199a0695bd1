// pg::config parsing: URLs and key=value strings, following libpq's conventions.
#include <saturn/pg/config.hpp>

#include "pg/text.hpp"

#include <charconv>
#include <utility>
#include <string>

namespace saturn::pg {
namespace {

error config_error(std::string what) {
  error e;
  e.kind = errc::config;
  e.message = std::move(what);
  return e;
}

bool hexval(char c, int& v) {
  if (c >= '0' && c <= '9')
    v = c - '0';
  else if (c >= 'a' && c <= 'f')
    v = c - 'a' + 10;
  else if (c >= 'A' && c <= 'F')
    v = c - 'A' + 10;
  else
    return false;
  return true;
}

result<std::string> percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      int hi = 0;
      int lo = 0;
      if (i + 2 >= s.size() || !hexval(s[i + 1], hi) || !hexval(s[i + 2], lo))
        return config_error(std::string("bad percent-escape in \"").append(s).append("\""));
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

result<void> set_key(config& c, std::string_view key, std::string value) {
  if (key == "host" || key == "hostaddr") {
    c.host = std::move(value);
  } else if (key == "port") {
    unsigned p = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), p);
    if (ec != std::errc{} || ptr != value.data() + value.size() || p == 0 || p > 65535)
      return config_error(detail::cat({"bad port \"", value, "\""}));
    c.port = static_cast<std::uint16_t>(p);
  } else if (key == "user") {
    c.user = std::move(value);
  } else if (key == "password") {
    c.password = std::move(value);
  } else if (key == "dbname") {
    c.dbname = std::move(value);
  } else if (key == "application_name") {
    c.application_name = std::move(value);
  } else if (key == "connect_timeout") {
    unsigned s = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), s);
    if (ec != std::errc{} || ptr != value.data() + value.size())
      return config_error(detail::cat({"bad connect_timeout \"", value, "\""}));
    c.connect_timeout = std::chrono::seconds(s);
  } else if (key == "sslmode") {
    static constexpr std::pair<std::string_view, ssl_mode> modes[] = {
        {"disable", ssl_mode::disable},  {"allow", ssl_mode::allow},         {"prefer", ssl_mode::prefer},
        {"require", ssl_mode::require},  {"verify-ca", ssl_mode::verify_ca}, {"verify-full", ssl_mode::verify_full}};
    bool known = false;
    for (const auto& [name, mode] : modes)
      if (value == name) {
        c.sslmode = mode;
        known = true;
      }
    if (!known)
      return config_error(detail::cat({"bad sslmode \"", value,
                                       "\" (disable, allow, prefer, require, verify-ca or verify-full)"}));
  } else if (key == "sslrootcert") {
    c.sslrootcert = std::move(value);
  } else {
    return config_error(std::string("unknown connection parameter \"").append(key).append("\""));
  }
  return {};
}

result<config> parse_url(std::string_view s) {
  config c;
  const std::size_t scheme_end = s.find("://");
  s.remove_prefix(scheme_end + 3);
  std::string_view query;
  if (auto q = s.find('?'); q != std::string_view::npos) {
    query = s.substr(q + 1);
    s = s.substr(0, q);
  }
  std::string_view path;
  if (auto p = s.find('/'); p != std::string_view::npos) {
    path = s.substr(p + 1);
    s = s.substr(0, p);
  }
  if (auto at = s.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = s.substr(0, at);
    s = s.substr(at + 1);
    std::string_view pass;
    bool has_pass = false;
    if (auto colon = userinfo.find(':'); colon != std::string_view::npos) {
      pass = userinfo.substr(colon + 1);
      userinfo = userinfo.substr(0, colon);
      has_pass = true;
    }
    auto u = percent_decode(userinfo);
    if (!u)
      return u.err();
    c.user = std::move(*u);
    if (has_pass) {
      auto pw = percent_decode(pass);
      if (!pw)
        return pw.err();
      c.password = std::move(*pw);
    }
  }
  // host[:port], [v6][:port]
  std::string_view host = s;
  std::string_view port;
  if (!host.empty() && host.front() == '[') {
    auto close = host.find(']');
    if (close == std::string_view::npos)
      return config_error("unclosed '[' in the URL's host");
    if (close + 1 < host.size() && host[close + 1] == ':')
      port = host.substr(close + 2);
    host = host.substr(1, close - 1);
  } else if (auto colon = host.rfind(':'); colon != std::string_view::npos) {
    port = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  if (!host.empty()) {
    auto h = percent_decode(host);
    if (!h)
      return h.err();
    c.host = std::move(*h);
  }
  if (!port.empty()) {
    if (auto r = set_key(c, "port", std::string(port)); !r)
      return r.err();
  }
  if (!path.empty()) {
    auto d = percent_decode(path);
    if (!d)
      return d.err();
    c.dbname = std::move(*d);
  }
  while (!query.empty()) {
    std::string_view kv = query.substr(0, query.find('&'));
    query.remove_prefix(std::min(query.size(), kv.size() + 1));
    auto eq = kv.find('=');
    if (eq == std::string_view::npos)
      return config_error(std::string("URL parameter without '=': \"").append(kv).append("\""));
    auto v = percent_decode(kv.substr(eq + 1));
    if (!v)
      return v.err();
    if (auto r = set_key(c, kv.substr(0, eq), std::move(*v)); !r)
      return r.err();
  }
  return c;
}

result<config> parse_keywords(std::string_view s) {
  config c;
  std::size_t i = 0;
  auto skip_ws = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n'))
      ++i;
  };
  for (;;) {
    skip_ws();
    if (i >= s.size())
      break;
    std::size_t k = i;
    while (i < s.size() && s[i] != '=' && s[i] != ' ')
      ++i;
    std::string_view key = s.substr(k, i - k);
    skip_ws();
    if (i >= s.size() || s[i] != '=')
      return config_error(std::string("missing '=' after \"").append(key).append("\""));
    ++i;
    skip_ws();
    std::string value;
    if (i < s.size() && s[i] == '\'') {
      ++i;
      bool closed = false;
      while (i < s.size()) {
        if (s[i] == '\\' && i + 1 < s.size()) {
          value.push_back(s[i + 1]);
          i += 2;
        } else if (s[i] == '\'') {
          ++i;
          closed = true;
          break;
        } else {
          value.push_back(s[i++]);
        }
      }
      if (!closed)
        return config_error(std::string("unterminated quoted value for \"").append(key).append("\""));
    } else {
      while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < s.size())
          ++i;
        value.push_back(s[i++]);
      }
    }
    if (auto r = set_key(c, key, std::move(value)); !r)
      return r.err();
  }
  return c;
}

}  // namespace

result<config> config::parse(std::string_view text) {
  if (text.starts_with("postgres://") || text.starts_with("postgresql://"))
    return parse_url(text);
  return parse_keywords(text);
}

std::string config::socket_path() const {
  std::string p = host;
  p.append("/.s.PGSQL.").append(std::to_string(port));
  return p;
}

}  // namespace saturn::pg
