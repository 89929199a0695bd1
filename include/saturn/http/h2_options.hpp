/// \file
/// HTTP/2 (RFC 9113) settings of an http::server, and which protocols a cleartext
/// listener speaks.
///
/// The server speaks HTTP/2 on nghttp2 (its session fed with the bytes the ring received,
/// its output sent through the ring: nghttp2 never touches a socket), with the same router
/// and handlers as HTTP/1.1: a handler cannot tell the protocols apart except through
/// `request::version_major`. Over TLS, HTTP/2 is chosen by ALPN (list "h2" in the server
/// context's `alpn`); in cleartext, a client that knows the server speaks HTTP/2 starts
/// the connection with the HTTP/2 preface ("prior knowledge", RFC 9113 §3.3: `curl
/// --http2-prior-knowledge`, `h2load -p h2c`, gRPC clients). The HTTP/1.1 Upgrade to h2c
/// (removed from RFC 9113) is not offered.
///
///     saturn::http::server_options opts;
///     opts.h2.max_concurrent_streams = 250;
///     opts.plain = saturn::http::cleartext::h2c;  // this server's listeners speak HTTP/2 only
#pragma once

#include <chrono>
#include <cstdint>

namespace saturn::http {

/// What a cleartext (non-TLS) listener speaks.
enum class cleartext : std::uint8_t {
  /// HTTP/1.1, and HTTP/2 for a connection whose first bytes are the HTTP/2 preface. The
  /// preface cannot start an HTTP/1.1 request ("PRI * HTTP/2.0" is not a valid one), so
  /// the detection costs nothing and changes no HTTP/1.1 answer but that one.
  http1_and_h2c,
  /// HTTP/1.1 only: the preface is answered as the bad request it is in HTTP/1.1 (505).
  http1,
  /// HTTP/2 only (prior knowledge): a connection that does not start with the preface is
  /// answered `505 HTTP Version Not Supported` in HTTP/1.1, saying so, and closed.
  h2c,
};

/// The limits and windows of HTTP/2 connections. Every limit is one of nghttp2's
/// protections or the server's own, each answered as RFC 9113 says (a stream error with
/// RST_STREAM, or GOAWAY and a close for a connection that floods).
struct h2_options {
  /// SETTINGS_MAX_CONCURRENT_STREAMS: streams a client may have open at once; a stream
  /// past it is refused (RST_STREAM REFUSED_STREAM).
  std::uint32_t max_concurrent_streams = 100;
  /// SETTINGS_INITIAL_WINDOW_SIZE: request-body bytes a stream may send before its
  /// handler (streamed bodies) or the server (buffered ones) takes them. It is what a
  /// slow handler holds of a stream's body at most.
  std::uint32_t stream_window = 64 * 1024;
  /// The connection's receive window: body bytes of all streams together in flight.
  std::uint32_t connection_window = 1024 * 1024;
  /// SETTINGS_MAX_FRAME_SIZE the server accepts (16 KiB to 16 MiB - 1).
  std::uint32_t max_frame_size = 16 * 1024;
  /// Rapid reset (CVE-2023-44487): a client may reset this many streams in a burst, then
  /// `reset_rate` per second; past that the connection ends (GOAWAY ENHANCE_YOUR_CALM).
  std::uint32_t reset_burst = 1000;
  std::uint32_t reset_rate = 33;
  /// CONTINUATION frames one header block may span (CVE-2024-27316 style floods); past it
  /// the connection ends.
  std::uint32_t max_continuations = 8;
  /// PING, SETTINGS and PRIORITY frames, and empty DATA frames, a client may send per
  /// second; past it the connection ends (GOAWAY ENHANCE_YOUR_CALM). A real client sends a
  /// handful.
  std::uint32_t control_frames_per_second = 1000;
};

}  // namespace saturn::http
