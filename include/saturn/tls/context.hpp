/// \file
/// `tls::context`: the configuration every TLS stream of a server or a client shares —
/// certificates, protocol versions, cipher suites, ALPN, SNI, session resumption and
/// certificate verification — on OpenSSL 3.
///
/// What every context enforces (not options): TLS 1.2 and 1.3 only; AEAD cipher suites
/// with forward secrecy only (TLS 1.3's, and ECDHE with AES-GCM or ChaCha20-Poly1305 for
/// 1.2: no CBC, no RSA key exchange, no static DH); groups X25519, P-256, P-384; no
/// renegotiation, no compression, no 0-RTT.
///
///     auto ctx = saturn::tls::context::server({.certificates = {{"cert.pem", "key.pem"}},
///                                              .alpn = {"http/1.1"}});
///     if (!ctx) std::fprintf(stderr, "%s\n", ctx.err().message().c_str());
///     // "tls certificate chain cert.pem: No such file or directory"
///
/// Server: the first certificate is the default; each further one is chosen when the
/// client's SNI name matches one of its names (subject alternative names, wildcards as
/// X509_check_host allows). Resumption through session tickets (TLS 1.2 and 1.3; keys
/// made at start, shared by every stream of the context) and a server-side session cache
/// for TLS 1.2 session ids.
///
/// Client: verifies the server's chain against the system store (/etc/ssl/certs) or a CA
/// file, and the host name given to stream::client() (DNS name or IP address) against the
/// certificate; resumes sessions per host name through a small cache in the context.
///
/// kTLS: not used. This machine's kernel has no `tls` ULP, so kernel TLS could not be
/// tested; ktls_available() is the seam that will turn it on where the kernel has it.
///
/// Threading: a context is immutable once made and may be shared by streams on every
/// thread (OpenSSL's SSL_CTX is thread-safe for this use); copies share it. Streams keep
/// their context alive.
#pragma once

#include <saturn/result.hpp>

#include <memory>
#include <string>
#include <vector>

namespace saturn::tls {

/// A certificate chain and its private key, PEM files.
struct certificate {
  std::string chain_file;  ///< leaf first, then intermediates
  std::string key_file;    ///< its private key (unencrypted PEM)
};

/// The lowest protocol version a context negotiates.
enum class version { tls1_2, tls1_3 };

/// A server context's settings.
struct server_config {
  /// The first is the default; the others are chosen by SNI (see the file comment).
  std::vector<certificate> certificates{};
  /// ALPN protocols in the server's order of preference (e.g. {"h2", "http/1.1"}). A
  /// client that offers ALPN with none of these gets the no_application_protocol alert;
  /// a client that offers no ALPN is served with alpn() empty. Empty: no ALPN.
  std::vector<std::string> alpn{};
  version min_version = version::tls1_2;
  /// Stateless resumption through session tickets.
  bool session_tickets = true;
  /// Sessions kept for TLS 1.2 session-id resumption (0: no cache).
  unsigned session_cache = 20480;
};

/// A client context's settings.
struct client_config {
  /// Verify the server's certificate chain and host name (the default, and the only safe
  /// choice outside tests).
  bool verify = true;
  /// PEM file of trusted CAs; empty: the system store (/etc/ssl/certs).
  std::string ca_file{};
  /// ALPN protocols to offer, in order (empty: none).
  std::vector<std::string> alpn{};
  version min_version = version::tls1_2;
  /// Keep the last session per host name and offer it on the next connection.
  bool resume_sessions = true;
};

namespace detail {
struct context_impl;
}

/// See the file comment.
class context {
 public:
  /// A server context. Errors name the file and OpenSSL's reason ("tls private key
  /// key.pem: key values mismatch"). Any thread.
  static result<context> server(const server_config& cfg);
  /// A client context. Errors name the CA file and OpenSSL's reason. Any thread.
  static result<context> client(const client_config& cfg = {});

  /// True for a server context.
  bool is_server() const noexcept;
  /// The shared state (for tls::stream).
  const std::shared_ptr<detail::context_impl>& impl() const noexcept { return m_impl; }

 private:
  explicit context(std::shared_ptr<detail::context_impl> p) noexcept : m_impl(std::move(p)) {}
  std::shared_ptr<detail::context_impl> m_impl;
};

/// Whether this kernel offers kernel TLS (the `tls` ULP in
/// /proc/sys/net/ipv4/tcp_available_ulp). saturn does not use kTLS yet (see the file
/// comment); this is where it will be decided. Any thread.
bool ktls_available() noexcept;

}  // namespace saturn::tls
