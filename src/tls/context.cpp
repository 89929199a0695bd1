// tls::context: OpenSSL contexts configured with saturn's fixed policy (TLS 1.2+, AEAD
// and forward secrecy only, no renegotiation), certificates, SNI, ALPN, tickets and the
// client's verification and session cache.
#include <saturn/tls/context.hpp>

#include "tls/context_impl.hpp"
#include "tls/openssl_error.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

namespace saturn::tls {

namespace detail {

context_impl::~context_impl() {
  for (SSL_CTX* c : ctxs)
    SSL_CTX_free(c);
  for (auto& [host, s] : m_sessions)
    SSL_SESSION_free(s);
}

SSL_SESSION* context_impl::take_session(const std::string& host) {
  std::lock_guard lock(m_mu);
  auto it = m_sessions.find(host);
  if (it == m_sessions.end())
    return nullptr;
  SSL_SESSION_up_ref(it->second);
  return it->second;
}

void context_impl::keep_session(const std::string& host, SSL_SESSION* s) {
  std::lock_guard lock(m_mu);
  auto [it, added] = m_sessions.try_emplace(host, s);
  if (!added) {
    SSL_SESSION_free(it->second);
    it->second = s;
    return;
  }
  if (m_sessions.size() > k_max_sessions) {
    // Bounded: drop some other host's session (any; the cache only saves handshakes).
    for (auto victim = m_sessions.begin(); victim != m_sessions.end(); ++victim) {
      if (victim->first != host) {
        SSL_SESSION_free(victim->second);
        m_sessions.erase(victim);
        break;
      }
    }
  }
}

}  // namespace detail

namespace {

// TLS 1.2: ECDHE key exchange with AEAD ciphers only, ECDSA first (its handshakes are
// cheaper), AES-128 first.
constexpr const char* k_ciphers_12 =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
constexpr const char* k_suites_13 = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";
constexpr const char* k_groups = "X25519:P-256:P-384";
constexpr unsigned char k_session_id_ctx[] = "saturn";

/// A stable C string for an error's operation. Only configuration errors (a context made
/// at start-up) take this path, so the set stays small.
const char* intern(std::string s) {
  static std::mutex mu;
  static std::set<std::string> strings;
  std::lock_guard lock(mu);
  return strings.insert(std::move(s)).first->c_str();
}

error config_error(const std::string& what, std::errc fallback = std::errc::invalid_argument) {
  return detail::last_openssl_error(intern(what), fallback);
}

/// errno's error for `file` when it cannot be read (OpenSSL's own message for a missing
/// file is vaguer).
result<void> readable(const std::string& what, const std::string& file) {
  if (file.empty())
    return error{std::make_error_code(std::errc::invalid_argument), intern(what + ": no file given")};
  if (::access(file.c_str(), R_OK) != 0)
    return error{std::error_code(errno, std::system_category()), intern(what + " " + file)};
  return {};
}

result<SSL_CTX*> make_ctx(const SSL_METHOD* method, version min, bool server) {
  ERR_clear_error();
  SSL_CTX* c = SSL_CTX_new(method);
  if (c == nullptr)
    return config_error("tls context", std::errc::not_enough_memory);
  SSL_CTX_set_min_proto_version(c, min == version::tls1_3 ? TLS1_3_VERSION : TLS1_2_VERSION);
  std::uint64_t opts = SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION;
  if (server)
    opts |= SSL_OP_CIPHER_SERVER_PREFERENCE;
  SSL_CTX_set_options(c, opts);
  // Idle connections give their record buffers back (as nginx does).
  SSL_CTX_set_mode(c, SSL_MODE_RELEASE_BUFFERS);
  if (SSL_CTX_set_cipher_list(c, k_ciphers_12) != 1 || SSL_CTX_set_ciphersuites(c, k_suites_13) != 1 ||
      SSL_CTX_set1_groups_list(c, k_groups) != 1) {
    SSL_CTX_free(c);
    return config_error("tls cipher configuration");
  }
  return c;
}

int on_alpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in, unsigned inlen,
            void* arg) {
  const auto* impl = static_cast<const detail::context_impl*>(arg);
  unsigned char* chosen = nullptr;
  const auto* ours = reinterpret_cast<const unsigned char*>(impl->alpn_wire.data());
  if (SSL_select_next_proto(&chosen, outlen, ours, static_cast<unsigned>(impl->alpn_wire.size()), in, inlen) !=
      OPENSSL_NPN_NEGOTIATED)
    return SSL_TLSEXT_ERR_ALERT_FATAL;  // no_application_protocol (RFC 7301 §3.2)
  *out = chosen;
  return SSL_TLSEXT_ERR_OK;
}

int on_servername(SSL* ssl, int*, void* arg) {
  const auto* impl = static_cast<const detail::context_impl*>(arg);
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  if (name == nullptr || impl->ctxs.size() < 2)
    return SSL_TLSEXT_ERR_OK;
  for (SSL_CTX* c : impl->ctxs) {
    X509* leaf = SSL_CTX_get0_certificate(c);
    if (leaf != nullptr && X509_check_host(leaf, name, 0, 0, nullptr) == 1) {
      if (c != impl->ctxs.front())
        SSL_set_SSL_CTX(ssl, c);
      break;
    }
  }
  return SSL_TLSEXT_ERR_OK;  // no match: the default certificate
}

int on_new_session(SSL* ssl, SSL_SESSION* s) {
  auto* app = static_cast<detail::ssl_app*>(SSL_get_app_data(ssl));
  if (app == nullptr || app->host.empty())
    return 0;
  app->ctx->keep_session(app->host, s);
  return 1;  // the cache took the reference
}

result<std::string> alpn_wire(const std::vector<std::string>& protos) {
  std::string w;
  for (const auto& p : protos) {
    if (p.empty() || p.size() > 255)
      return error{std::make_error_code(std::errc::invalid_argument),
                   intern("tls ALPN protocol \"" + p + "\": must be 1 to 255 bytes")};
    w.push_back(static_cast<char>(p.size()));
    w += p;
  }
  return w;
}

}  // namespace

result<context> context::server(const server_config& cfg) {
  if (cfg.certificates.empty())
    return error{std::make_error_code(std::errc::invalid_argument),
                 "tls server context: no certificate (server_config::certificates is empty)"};
  auto impl = std::make_shared<detail::context_impl>();
  impl->server = true;
  auto wire = alpn_wire(cfg.alpn);
  if (!wire)
    return wire.err();
  impl->alpn_wire = std::move(*wire);
  for (const certificate& cert : cfg.certificates) {
    auto made = make_ctx(TLS_server_method(), cfg.min_version, true);
    if (!made)
      return made.err();
    SSL_CTX* c = *made;
    impl->ctxs.push_back(c);  // freed by impl from here on
    if (auto ok = readable("tls certificate chain", cert.chain_file); !ok)
      return ok.err();
    if (auto ok = readable("tls private key", cert.key_file); !ok)
      return ok.err();
    ERR_clear_error();
    if (SSL_CTX_use_certificate_chain_file(c, cert.chain_file.c_str()) != 1)
      return config_error("tls certificate chain " + cert.chain_file);
    if (SSL_CTX_use_PrivateKey_file(c, cert.key_file.c_str(), SSL_FILETYPE_PEM) != 1)
      return config_error("tls private key " + cert.key_file);
    if (SSL_CTX_check_private_key(c) != 1)
      return config_error("tls private key " + cert.key_file + " for " + cert.chain_file);
    SSL_CTX_set_session_id_context(c, k_session_id_ctx, sizeof k_session_id_ctx - 1);
    if (cfg.session_cache > 0) {
      SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_SERVER);
      SSL_CTX_sess_set_cache_size(c, static_cast<long>(cfg.session_cache));
    } else {
      SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
    }
    if (!cfg.session_tickets)
      SSL_CTX_set_options(c, SSL_OP_NO_TICKET);
    SSL_CTX_set_num_tickets(c, cfg.session_tickets ? 1 : 0);
    if (!impl->alpn_wire.empty())
      SSL_CTX_set_alpn_select_cb(c, on_alpn, impl.get());
    SSL_CTX_set_tlsext_servername_callback(c, on_servername);
    SSL_CTX_set_tlsext_servername_arg(c, impl.get());
  }
  if (impl->ctxs.size() > 1) {
    // Tickets are sealed with the first context's keys, whichever certificate SNI chose:
    // give every context the same keys so a ticket opens wherever the next handshake lands.
    unsigned char keys[80];
    if (SSL_CTX_get_tlsext_ticket_keys(impl->ctxs.front(), keys, sizeof keys) == 1)
      for (std::size_t i = 1; i < impl->ctxs.size(); ++i)
        SSL_CTX_set_tlsext_ticket_keys(impl->ctxs[i], keys, sizeof keys);
  }
  return context(std::move(impl));
}

result<context> context::client(const client_config& cfg) {
  auto impl = std::make_shared<detail::context_impl>();
  auto made = make_ctx(TLS_client_method(), cfg.min_version, false);
  if (!made)
    return made.err();
  SSL_CTX* c = *made;
  impl->ctxs.push_back(c);
  if (cfg.verify) {
    ERR_clear_error();
    if (!cfg.ca_file.empty()) {
      if (auto ok = readable("tls CA file", cfg.ca_file); !ok)
        return ok.err();
      if (SSL_CTX_load_verify_locations(c, cfg.ca_file.c_str(), nullptr) != 1)
        return config_error("tls CA file " + cfg.ca_file);
    } else {
      // Debian's store: one bundle, and the hashed folder for anything added beside it.
      const char* bundle = "/etc/ssl/certs/ca-certificates.crt";
      const bool have_bundle = ::access(bundle, R_OK) == 0;
      if (SSL_CTX_load_verify_locations(c, have_bundle ? bundle : nullptr, "/etc/ssl/certs") != 1)
        return config_error("tls system CA store /etc/ssl/certs");
    }
    SSL_CTX_set_verify(c, SSL_VERIFY_PEER, nullptr);
  } else {
    SSL_CTX_set_verify(c, SSL_VERIFY_NONE, nullptr);
  }
  auto wire = alpn_wire(cfg.alpn);
  if (!wire)
    return wire.err();
  if (!wire->empty() &&
      SSL_CTX_set_alpn_protos(c, reinterpret_cast<const unsigned char*>(wire->data()),
                              static_cast<unsigned>(wire->size())) != 0)
    return config_error("tls ALPN list");
  impl->resume = cfg.resume_sessions;
  if (cfg.resume_sessions) {
    SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(c, on_new_session);
  } else {
    SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
  }
  return context(std::move(impl));
}

bool context::is_server() const noexcept { return m_impl != nullptr && m_impl->server; }

bool ktls_available() noexcept {
  std::ifstream f("/proc/sys/net/ipv4/tcp_available_ulp");
  std::string word;
  while (f >> word)
    if (word == "tls")
      return true;
  return false;
}

}  // namespace saturn::tls
