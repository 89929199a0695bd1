/// \file
/// How TLS failures come back: as saturn::error values whose code says what happened and
/// whose operation names the step ("tls handshake", "tls read", ...), like every other
/// saturn error.
///
///   * `tls::errc` — saturn's own conditions: a peer that closed without close_notify
///     (truncation, never reported as a clean end of stream), a handshake that ended early.
///   * OpenSSL's reasons (`openssl_category()`): the error's message is OpenSSL's reason
///     string — "wrong version number" for garbage instead of a ClientHello, "tlsv1 alert
///     unknown ca" when the peer sent that alert, "record overflow", ...
///   * certificate verification (`verify_category()`): X509's verdict — "certificate has
///     expired", "self-signed certificate", "hostname mismatch".
///
/// A handshake that timed out is std::errc::timed_out ("tls handshake: Connection timed
/// out"), a cancelled one std::errc::operation_canceled, a socket failure the socket's errno.
///
/// Threading: the categories are immutable singletons, usable from any thread.
#pragma once

#include <saturn/result.hpp>

#include <system_error>

namespace saturn::tls {

/// saturn's own TLS conditions.
enum class errc {
  /// The peer closed the connection without sending close_notify: the data may have been
  /// cut short by an attacker or a crash (RFC 8446 §6.1).
  truncated = 1,
  /// The peer closed the connection before the handshake completed.
  closed_in_handshake,
  /// A record or message beyond what this endpoint accepts.
  too_large,
};

/// The category of tls::errc.
const std::error_category& tls_category() noexcept;
/// OpenSSL's error reasons: a code's value is OpenSSL's packed library + reason
/// (ERR_GET_LIB / ERR_GET_REASON), its message the reason string.
const std::error_category& openssl_category() noexcept;
/// X509 certificate verification results (X509_V_ERR_*), messages from OpenSSL.
const std::error_category& verify_category() noexcept;

/// A tls::errc as an error_code.
inline std::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), tls_category()}; }

/// True if `e` is this TLS condition.
inline bool is(const error& e, errc c) noexcept { return e.code == make_error_code(c); }

}  // namespace saturn::tls

template <>
struct std::is_error_code_enum<saturn::tls::errc> : std::true_type {};
