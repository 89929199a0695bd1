/// \file
/// `pg::config`: where and how to connect, parsed from a URL
/// (`postgres://user:pass@host:port/db?application_name=x`) or a key/value connection
/// string (`host=/run/postgresql port=5432 user=app dbname=app password=secret`). A host
/// that starts with '/' is a Unix socket directory (the socket is `<dir>/.s.PGSQL.<port>`),
/// as in libpq.
///
/// ```
/// auto cfg = saturn::pg::config::parse("postgres://app:secret@127.0.0.1:5432/app");
/// ```
///
/// Threading: a plain value type; parse never suspends.
#pragma once

#include <saturn/pg/error.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace saturn::pg {

/// TLS to the server, as libpq's `sslmode`. Over a Unix socket TLS is never used (as in
/// libpq: the socket is local).
enum class ssl_mode : std::uint8_t {
  disable,      ///< never
  allow,        ///< plain (libpq would retry with TLS if the server refused plain; saturn does not)
  prefer,       ///< TLS if the server offers it, else plain (the default, as in libpq); not verified
  require,      ///< TLS or fail; the certificate is not verified
  verify_ca,    ///< TLS, the chain verified against sslrootcert (or the system store)
  verify_full,  ///< verify_ca and the host name (or IP address) checked against the certificate
};

/// Connection parameters.
struct config {
  /// A host name or numeric address (TCP), or an absolute directory (Unix socket).
  std::string host = "127.0.0.1";
  std::uint16_t port = 5432;
  std::string user;
  std::string password;
  /// Empty: the user name (the server's default).
  std::string dbname;
  std::string application_name;
  /// Bounds the whole connect (socket, startup, authentication); 0: no limit.
  std::chrono::milliseconds connect_timeout{10000};
  /// TLS to the server (`sslmode=`).
  ssl_mode sslmode = ssl_mode::prefer;
  /// PEM file of the CAs that verify_ca / verify_full trust (`sslrootcert=`); empty or
  /// "system": the system store (/etc/ssl/certs).
  std::string sslrootcert;
  /// After a query is cancelled (a stopped task, an expired deadline): how long the
  /// CancelRequest and then the wait for the server to end the statement may take before
  /// the connection is given up as broken (a stalled server; the CancelRequest itself
  /// waits at most 2 s). 0: the wait for the statement's end is not limited.
  std::chrono::milliseconds cancel_timeout{10000};

  /// Parses a `postgres://` / `postgresql://` URL (percent-decoded user, password and
  /// database; `?host=/dir` selects a socket directory, like libpq) or a key=value string
  /// (values may be single-quoted, `\'` and `\\` escaped). Unknown keys are errors.
  /// `sslmode` takes libpq's six values, `sslrootcert` a file. Errors: errc::config naming
  /// what is wrong.
  static result<config> parse(std::string_view text);

  /// True if host names a Unix socket directory.
  bool is_unix() const noexcept { return !host.empty() && host.front() == '/'; }
  /// The Unix socket path for a directory host.
  std::string socket_path() const;
};

}  // namespace saturn::pg
