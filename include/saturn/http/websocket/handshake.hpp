/// \file
/// The server side of the WebSocket opening handshake (RFC 6455 §4.2): whether a request
/// asks for a valid upgrade (and what to answer when it does not), and the
/// Sec-WebSocket-Accept value of the 101 answer.
///
/// Threading: pure functions; any thread.
#pragma once

#include <saturn/http/request.hpp>

#include <string>
#include <string_view>

namespace saturn::http::websocket {

/// The GUID appended to the client's key before hashing (RFC 6455 §1.3).
inline constexpr std::string_view handshake_guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// The outcome of check_upgrade.
struct upgrade_check {
  /// 0 when the request is a valid upgrade; otherwise the status to answer: 426 (with a
  /// `Sec-WebSocket-Version: 13` field) for a missing or unsupported version, else 400.
  int status = 0;
  /// Why the request is refused (a static string, for logs and the error body); empty on success.
  std::string_view reason;
  /// The Sec-WebSocket-Key value (a view into the request) on success.
  std::string_view key;
  explicit operator bool() const noexcept { return status == 0; }
};

/// Checks a request for a WebSocket upgrade, in this order: method GET, HTTP/1.1, an
/// `Upgrade` field listing the token `websocket`, a `Connection` field listing `upgrade`
/// (tokens case-insensitive, fields may be comma lists and may repeat), a
/// `Sec-WebSocket-Version` of 13 (else 426), and a `Sec-WebSocket-Key` that is the base64
/// of 16 bytes. Does not suspend.
upgrade_check check_upgrade(const request& req) noexcept;

/// base64(SHA-1(key + handshake_guid)): the Sec-WebSocket-Accept value for `key`
/// (28 characters). Example from RFC 6455 §1.3: "dGhlIHNhbXBsZSBub25jZQ==" gives
/// "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=".
std::string accept_key(std::string_view key);

/// The whole 101 answer for `key` as bytes to send: status line, `Upgrade: websocket`,
/// `Connection: Upgrade`, `Sec-WebSocket-Accept`, blank line (for servers that write the
/// answer themselves).
std::string handshake_response(std::string_view key);

/// The 426 answer check_upgrade asks for when the version is wrong: status line,
/// `Sec-WebSocket-Version: 13`, `Content-Length: 0`, blank line.
std::string_view version_rejection_response() noexcept;

}  // namespace saturn::http::websocket
