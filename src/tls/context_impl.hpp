// What a tls::context shares with its streams: the OpenSSL contexts (one per server
// certificate, the first the default; one for a client), the ALPN list in wire form and
// a client's session cache.
#pragma once

#include <saturn/tls/context.hpp>

#include <openssl/ssl.h>

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace saturn::tls::detail {

struct context_impl {
  context_impl() = default;
  context_impl(const context_impl&) = delete;
  context_impl& operator=(const context_impl&) = delete;
  ~context_impl();

  bool server = false;
  std::vector<SSL_CTX*> ctxs;  // server: one per certificate, [0] the default; client: one
  std::string alpn_wire;       // server: its protocols, each length-prefixed (RFC 7301)
  bool resume = false;         // client: sessions cached per host

  /// Client: the cached session for `host` with a reference for the caller, or null.
  SSL_SESSION* take_session(const std::string& host);
  /// Client: keeps `s` (whose reference it takes) as the session for `host`.
  void keep_session(const std::string& host, SSL_SESSION* s);

 private:
  static constexpr std::size_t k_max_sessions = 1024;
  std::mutex m_mu;
  std::unordered_map<std::string, SSL_SESSION*> m_sessions;  // guarded by m_mu
};

/// The BIO method through which OpenSSL reads and writes a stream's buffers
/// (ring_bio.cpp).
const BIO_METHOD* ring_bio_method();

/// The app data of every SSL a stream makes: what the context's callbacks need.
struct ssl_app {
  context_impl* ctx;
  std::string host;  // client: the name sessions are cached under
};

}  // namespace saturn::tls::detail
