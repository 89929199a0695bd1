// The TLS error categories: saturn's own conditions, OpenSSL's reasons and X509's
// verification results, each with OpenSSL's own message text.
#include <saturn/tls/error.hpp>

#include "tls/openssl_error.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstdio>
#include <string>

namespace saturn::tls {

namespace {

class tls_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "tls"; }
  std::string message(int ev) const override {
    switch (static_cast<errc>(ev)) {
      case errc::truncated:
        return "peer closed the connection without close_notify (truncated)";
      case errc::closed_in_handshake:
        return "peer closed the connection during the handshake";
      case errc::too_large:
        return "record or message too large";
    }
    return "unknown TLS error";
  }
};

class openssl_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "openssl"; }
  std::string message(int ev) const override {
    const char* reason = ERR_reason_error_string(static_cast<unsigned long>(ev));
    if (reason != nullptr)
      return reason;
    char buf[48];
    std::snprintf(buf, sizeof buf, "OpenSSL error 0x%x", static_cast<unsigned>(ev));
    return buf;
  }
};

class verify_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "x509 verify"; }
  std::string message(int ev) const override { return X509_verify_cert_error_string(ev); }
};

}  // namespace

const std::error_category& tls_category() noexcept {
  static const tls_category_impl c;
  return c;
}
const std::error_category& openssl_category() noexcept {
  static const openssl_category_impl c;
  return c;
}
const std::error_category& verify_category() noexcept {
  static const verify_category_impl c;
  return c;
}

namespace detail {

error last_openssl_error(const char* operation, std::errc fallback) noexcept {
  // The last error queued is the most specific one (a received alert, the record layer's
  // complaint); the thread's queue is cleared for the next call.
  const unsigned long code = ERR_peek_last_error();
  ERR_clear_error();
  if (code == 0)
    return error{std::make_error_code(fallback), operation};
  if (ERR_SYSTEM_ERROR(code))
    return error{std::error_code(static_cast<int>(ERR_GET_REASON(code)), std::system_category()), operation};
  if (ERR_GET_LIB(code) == ERR_LIB_SSL && ERR_GET_REASON(code) == SSL_R_UNEXPECTED_EOF_WHILE_READING)
    return error{make_error_code(errc::truncated), operation};
  // Library and reason fit in 31 bits (ERR_SYSTEM_FLAG, bit 31, was handled above).
  return error{std::error_code(static_cast<int>(code & 0x7fffffffUL), openssl_category()), operation};
}

}  // namespace detail

}  // namespace saturn::tls
