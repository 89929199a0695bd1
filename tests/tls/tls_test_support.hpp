// Test certificates made with OpenSSL's API in a temporary folder, once per process: a CA,
// server certificates it signed (ECDSA P-256 and RSA-2048 for localhost / 127.0.0.1, one
// for other.test, an expired one) and a self-signed one — and helpers that run a TLS
// server end and a client end of one connection in the same runtime.
#pragma once

#include <saturn/net.hpp>
#include <saturn/task/join_handle.hpp>
#include <saturn/task/runtime.hpp>
#include <saturn/tls.hpp>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace tls_test {

using saturn::task;
namespace net = saturn::net;
namespace tls = saturn::tls;

/// The folder of test certificates (see the file comment). Names: ca, localhost,
/// localhost-rsa, other, expired, self-signed; each `<name>.pem` with `<name>.key`.
class pki {
 public:
  static const pki& get() {
    static const pki p;
    return p;
  }
  std::string pem(const std::string& name) const { return m_dir + "/" + name + ".pem"; }
  std::string key(const std::string& name) const { return m_dir + "/" + name + ".key"; }
  tls::certificate cert(const std::string& name) const { return {pem(name), key(name)}; }
  const std::string& dir() const { return m_dir; }

 private:
  pki() {
    char tmpl[] = "/tmp/saturn-tls-test-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr)
      throw std::runtime_error("mkdtemp");
    m_dir = tmpl;
    EVP_PKEY* ca_key = EVP_EC_gen("P-256");
    X509* ca = make("saturn test CA", "", nullptr, ca_key, ca_key, -3600, 86400 * 30, true);
    save("ca", ca, ca_key);
    issue("localhost", "DNS:localhost,IP:127.0.0.1", ca, ca_key, EVP_EC_gen("P-256"), -3600, 86400);
    issue("localhost-rsa", "DNS:localhost,IP:127.0.0.1", ca, ca_key, EVP_RSA_gen(2048), -3600, 86400);
    issue("other", "DNS:other.test", ca, ca_key, EVP_EC_gen("P-256"), -3600, 86400);
    issue("expired", "DNS:localhost,IP:127.0.0.1", ca, ca_key, EVP_EC_gen("P-256"), -86400 * 10, -86400);
    EVP_PKEY* self_key = EVP_EC_gen("P-256");
    X509* self = make("localhost", "DNS:localhost,IP:127.0.0.1", nullptr, self_key, self_key, -3600, 86400, false);
    save("self-signed", self, self_key);
    X509_free(self);
    EVP_PKEY_free(self_key);
    X509_free(ca);
    EVP_PKEY_free(ca_key);
  }
  ~pki() {
    std::string cmd = "rm -rf '" + m_dir + "'";
    (void)std::system(cmd.c_str());
  }

  void issue(const char* name, const char* sans, X509* ca, EVP_PKEY* ca_key, EVP_PKEY* key, long from, long to) {
    X509* x = make(name, sans, ca, ca_key, key, from, to, false);
    save(name, x, key);
    X509_free(x);
    EVP_PKEY_free(key);
  }

  static void ext(X509* x, X509V3_CTX* ctx, int nid, const char* value) {
    X509_EXTENSION* e = X509V3_EXT_conf_nid(nullptr, ctx, nid, value);
    if (e == nullptr)
      throw std::runtime_error("X509V3_EXT_conf_nid");
    X509_add_ext(x, e, -1);
    X509_EXTENSION_free(e);
  }

  X509* make(const char* cn, const char* sans, X509* issuer, EVP_PKEY* issuer_key, EVP_PKEY* key, long from, long to,
             bool is_ca) {
    X509* x = X509_new();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), ++m_serial);
    X509_gmtime_adj(X509_getm_notBefore(x), from);
    X509_gmtime_adj(X509_getm_notAfter(x), to);
    X509_set_pubkey(x, key);
    X509_NAME* n = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn), -1, -1, 0);
    X509_set_issuer_name(x, issuer != nullptr ? X509_get_subject_name(issuer) : n);
    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, issuer != nullptr ? issuer : x, x, nullptr, nullptr, 0);
    ext(x, &ctx, NID_basic_constraints, is_ca ? "critical,CA:TRUE" : "CA:FALSE");
    ext(x, &ctx, NID_key_usage, is_ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature,keyEncipherment");
    ext(x, &ctx, NID_subject_key_identifier, "hash");
    if (!is_ca)
      ext(x, &ctx, NID_ext_key_usage, "serverAuth");
    if (sans[0] != '\0')
      ext(x, &ctx, NID_subject_alt_name, sans);
    X509_sign(x, issuer_key, EVP_sha256());
    return x;
  }

  void save(const std::string& name, X509* x, EVP_PKEY* key) const {
    FILE* f = std::fopen(pem(name).c_str(), "w");
    PEM_write_X509(f, x);
    std::fclose(f);
    f = std::fopen(this->key(name).c_str(), "w");
    PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
    std::fclose(f);
  }

  std::string m_dir;
  long m_serial = 0;
};

/// A server context with the `localhost` certificate (and ALPN `alpn`).
inline tls::context server_ctx(std::vector<std::string> alpn = {}, const char* cert = "localhost") {
  auto c = tls::context::server({.certificates = {pki::get().cert(cert)}, .alpn = std::move(alpn)});
  if (!c)
    throw std::runtime_error(c.err().message());
  return std::move(*c);
}

/// A client context trusting the test CA.
inline tls::context client_ctx(std::vector<std::string> alpn = {}) {
  auto c = tls::context::client({.ca_file = pki::get().pem("ca"), .alpn = std::move(alpn)});
  if (!c)
    throw std::runtime_error(c.err().message());
  return std::move(*c);
}

/// Runs `a` and `b` concurrently (each in its own task) and waits for both.
inline task<void> both(task<void> a, task<void> b) {
  auto h = saturn::spawn(std::move(a));
  co_await std::move(b);
  co_await std::move(h);
}

/// The outcome of one end's handshake.
struct end_result {
  bool done = false;
  saturn::result<void> handshake{};
  std::string alpn, version;
  bool resumed = false;
};

}  // namespace tls_test
