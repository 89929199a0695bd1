// address parsing and formatting: inet_pton / inet_ntop on a bounded copy (the input is a
// string_view, not NUL-terminated), a strict decimal port.
#include <saturn/net/address.hpp>

#include <arpa/inet.h>

#include <cstring>

namespace saturn::net {

namespace {
error bad(const char* op = "address::parse") noexcept {
  return error{std::make_error_code(std::errc::invalid_argument), op};
}

bool parse_port(std::string_view s, std::uint16_t& port) noexcept {
  if (s.empty() || s.size() > 5)
    return false;
  unsigned v = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v > 65535)
    return false;
  port = static_cast<std::uint16_t>(v);
  return true;
}
}  // namespace

address::address() noexcept {
  std::memset(&m_storage, 0, sizeof m_storage);
  m_storage.ss_family = AF_UNSPEC;
}

address address::loopback_v4(std::uint16_t port) noexcept {
  address a;
  auto* in = reinterpret_cast<::sockaddr_in*>(&a.m_storage);
  in->sin_family = AF_INET;
  in->sin_port = htons(port);
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.m_len = sizeof(::sockaddr_in);
  return a;
}

address address::any_v4(std::uint16_t port) noexcept {
  address a = loopback_v4(port);
  reinterpret_cast<::sockaddr_in*>(&a.m_storage)->sin_addr.s_addr = htonl(INADDR_ANY);
  return a;
}

address address::loopback_v6(std::uint16_t port) noexcept {
  address a;
  auto* in6 = reinterpret_cast<::sockaddr_in6*>(&a.m_storage);
  in6->sin6_family = AF_INET6;
  in6->sin6_port = htons(port);
  in6->sin6_addr = in6addr_loopback;
  a.m_len = sizeof(::sockaddr_in6);
  return a;
}

result<address> address::parse(std::string_view host, std::uint16_t port) noexcept {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (host.empty() || host.size() >= INET6_ADDRSTRLEN)
    return bad();
  if (host == "localhost")
    return loopback_v4(port);
  char buf[INET6_ADDRSTRLEN];
  std::memcpy(buf, host.data(), host.size());
  buf[host.size()] = '\0';
  address a;
  if (host.find(':') == std::string_view::npos) {
    auto* in = reinterpret_cast<::sockaddr_in*>(&a.m_storage);
    if (::inet_pton(AF_INET, buf, &in->sin_addr) != 1)
      return bad();
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    a.m_len = sizeof(::sockaddr_in);
  } else {
    auto* in6 = reinterpret_cast<::sockaddr_in6*>(&a.m_storage);
    if (::inet_pton(AF_INET6, buf, &in6->sin6_addr) != 1)
      return bad();
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    a.m_len = sizeof(::sockaddr_in6);
  }
  return a;
}

result<address> address::parse(std::string_view s) noexcept {
  std::string_view host;
  std::string_view port;
  if (!s.empty() && s.front() == '[') {
    const std::size_t close = s.find(']');
    if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':')
      return bad();
    host = s.substr(1, close - 1);
    port = s.substr(close + 2);
    if (host.find(':') == std::string_view::npos)
      return bad();  // brackets are for IPv6 only
  } else {
    const std::size_t colon = s.rfind(':');
    if (colon == std::string_view::npos)
      return bad();
    host = s.substr(0, colon);
    port = s.substr(colon + 1);
    if (host.find(':') != std::string_view::npos)
      return bad();  // an IPv6 host needs brackets: "[::1]:80"
  }
  std::uint16_t p = 0;
  if (!parse_port(port, p))
    return bad();
  return parse(host, p);
}

result<address> address::unix_path(std::string_view path) noexcept {
  address a;
  auto* un = reinterpret_cast<::sockaddr_un*>(&a.m_storage);
  if (path.empty())
    return bad("address::unix_path");
  if (path.size() >= sizeof(un->sun_path))
    return error{std::make_error_code(std::errc::filename_too_long), "address::unix_path"};
  un->sun_family = AF_UNIX;
  std::memcpy(un->sun_path, path.data(), path.size());
  if (path.front() == '@')
    un->sun_path[0] = '\0';  // abstract namespace: no file, no NUL terminator counted
  else
    un->sun_path[path.size()] = '\0';
  a.m_len = static_cast<::socklen_t>(offsetof(::sockaddr_un, sun_path) + path.size() + (path.front() == '@' ? 0 : 1));
  return a;
}

result<address> address::from_sockaddr(const ::sockaddr* sa, ::socklen_t len) noexcept {
  if (sa == nullptr || len < static_cast<::socklen_t>(sizeof(sa_family_t)) || len > sizeof(::sockaddr_storage))
    return bad("address::from_sockaddr");
  if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6 && sa->sa_family != AF_UNIX)
    return error{std::make_error_code(std::errc::address_family_not_supported), "address::from_sockaddr"};
  address a;
  std::memcpy(&a.m_storage, sa, len);
  a.m_len = len;
  return a;
}

std::uint16_t address::port() const noexcept {
  if (is_v4())
    return ntohs(reinterpret_cast<const ::sockaddr_in*>(&m_storage)->sin_port);
  if (is_v6())
    return ntohs(reinterpret_cast<const ::sockaddr_in6*>(&m_storage)->sin6_port);
  return 0;
}

address address::with_port(std::uint16_t port) const noexcept {
  address a = *this;
  if (is_v4())
    reinterpret_cast<::sockaddr_in*>(&a.m_storage)->sin_port = htons(port);
  else if (is_v6())
    reinterpret_cast<::sockaddr_in6*>(&a.m_storage)->sin6_port = htons(port);
  return a;
}

std::string address::host() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (is_v4())
    ::inet_ntop(AF_INET, &reinterpret_cast<const ::sockaddr_in*>(&m_storage)->sin_addr, buf, sizeof buf);
  else if (is_v6())
    ::inet_ntop(AF_INET6, &reinterpret_cast<const ::sockaddr_in6*>(&m_storage)->sin6_addr, buf, sizeof buf);
  else if (is_unix()) {
    const auto* un = reinterpret_cast<const ::sockaddr_un*>(&m_storage);
    const std::size_t n = m_len > offsetof(::sockaddr_un, sun_path) ? m_len - offsetof(::sockaddr_un, sun_path) : 0;
    if (n == 0)
      return {};
    if (un->sun_path[0] == '\0')
      return std::string(1, '@').append(un->sun_path + 1, n - 1);
    return std::string(un->sun_path, ::strnlen(un->sun_path, n));
  }
  return buf;
}

std::string address::to_string() const {
  std::string out;
  if (is_v6())
    out.push_back('[');
  out.append(host());
  if (is_v6())
    out.push_back(']');
  if (is_v4() || is_v6()) {
    out.push_back(':');
    out.append(std::to_string(port()));
  }
  return out;
}

bool operator==(const address& a, const address& b) noexcept {
  return a.m_len == b.m_len && std::memcmp(&a.m_storage, &b.m_storage, a.m_len) == 0;
}

}  // namespace saturn::net
