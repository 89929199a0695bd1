/// \file
/// `address`: an IPv4 or IPv6 socket address (or a Unix socket path), parsed from and
/// formatted to text. Parsing never throws and never crashes on bad input: it returns an
/// error naming "address::parse". Only numeric hosts (and "localhost") are accepted here;
/// for names, net::resolve (saturn/net/resolve.hpp) asks the hosts file and DNS without
/// blocking the worker.
///
/// Threading: a plain value type.
#pragma once

#include <saturn/result.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace saturn::net {

/// A socket address: AF_INET, AF_INET6, AF_UNIX or empty (AF_UNSPEC).
class address {
 public:
  /// The empty address (family() == AF_UNSPEC).
  address() noexcept;

  /// Parses "host:port": "127.0.0.1:8080", "[::1]:8080", "localhost:80". The port is
  /// required (0 = any). Errors (EINVAL) for a missing or bad port, a bad host, stray text.
  static result<address> parse(std::string_view host_port) noexcept;
  /// Parses a numeric host ("10.0.0.1", "::1", "[::1]", "localhost") with a port.
  static result<address> parse(std::string_view host, std::uint16_t port) noexcept;
  /// 127.0.0.1:port.
  static address loopback_v4(std::uint16_t port) noexcept;
  /// [::1]:port.
  static address loopback_v6(std::uint16_t port) noexcept;
  /// 0.0.0.0:port.
  static address any_v4(std::uint16_t port) noexcept;
  /// A Unix socket path (ENAMETOOLONG beyond sun_path; a leading '@' names the abstract namespace).
  static result<address> unix_path(std::string_view path) noexcept;
  /// Copies a sockaddr the kernel filled in (EAFNOSUPPORT for other families).
  static result<address> from_sockaddr(const ::sockaddr* sa, ::socklen_t len) noexcept;

  int family() const noexcept { return m_storage.ss_family; }
  bool is_v4() const noexcept { return family() == AF_INET; }
  bool is_v6() const noexcept { return family() == AF_INET6; }
  bool is_unix() const noexcept { return family() == AF_UNIX; }
  /// The port (host byte order); 0 for Unix and empty addresses.
  std::uint16_t port() const noexcept;
  /// A copy with another port (IP addresses only).
  address with_port(std::uint16_t port) const noexcept;
  /// "1.2.3.4:80", "[::1]:80", the path of a Unix address, "" when empty.
  std::string to_string() const;
  /// The host part alone: "1.2.3.4", "::1".
  std::string host() const;

  const ::sockaddr* data() const noexcept { return reinterpret_cast<const ::sockaddr*>(&m_storage); }
  ::sockaddr* data() noexcept { return reinterpret_cast<::sockaddr*>(&m_storage); }
  ::socklen_t size() const noexcept { return m_len; }

  friend bool operator==(const address& a, const address& b) noexcept;

 private:
  ::sockaddr_storage m_storage;
  ::socklen_t m_len = 0;
};

}  // namespace saturn::net
