/// \file
/// `tls::stream`: TLS over a connected stream socket (tcp_stream or unix_stream), used
/// from tasks exactly like the socket: handshake, read, write / writev, shutdown
/// (close_notify), close.
///
///     auto s = saturn::tls::stream::client(ctx, std::move(*tcp), "example.com");
///     if (!s) co_return s.err();
///     auto hs = co_await s->handshake(std::chrono::seconds(5));
///     if (!hs) co_return hs.err();  // "tls handshake (certificate verify): certificate has expired"
///     auto sent = co_await s->write(bytes);
///     auto n = co_await s->read(buf);  // 0: the peer's close_notify
///
/// All I/O goes through saturn's ring: OpenSSL never sees the socket. It reads and writes
/// through a BIO over two buffers of the stream (src/tls/ring_bio.cpp), and the stream
/// moves their bytes with the socket's recv and send. What a record costs in copies:
///   * received: the kernel copies the record into the stream's input buffer (recv); the
///     BIO copies it into OpenSSL's record buffer; OpenSSL decrypts it in place and copies
///     the plaintext into the caller's buffer — two user-space copies and a decryption.
///   * sent: OpenSSL encrypts the caller's bytes into its write buffer and the BIO copies
///     the record into the stream's output buffer, from which the kernel copies it (send) —
///     one user-space copy and an encryption.
/// kTLS would remove the user-space copies; see context.hpp for why it is not used.
///
/// End of stream: read() returns 0 only after the peer's close_notify. A peer that closes
/// the connection without it ends the read with tls::errc::truncated.
///
/// Threading: one task uses a stream at a time — a read and a write must not run
/// concurrently (OpenSSL's connection state is not a concurrent object). Awaits may run
/// on any worker. Every await is cancellable through the task's stop token (it ends with
/// operation_canceled; the stream is then unusable except for close). Errors are values
/// (see error.hpp).
#pragma once

#include <saturn/task/io.hpp>
#include <saturn/net/stream_socket.hpp>
#include <saturn/result.hpp>
#include <saturn/task/task.hpp>
#include <saturn/tls/context.hpp>
#include <saturn/tls/error.hpp>

#include <sys/uio.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string_view>

namespace saturn::tls {

namespace detail {
struct stream_state;
}

/// See the file comment. Move-only; the destructor closes the socket (no close_notify:
/// call shutdown() first for a clean end).
class stream {
 public:
  /// The server end of `sock` (a connection just accepted): handshake() next. Fails only
  /// when OpenSSL cannot allocate. Any thread.
  static result<stream> server(const context& ctx, net::stream_socket sock);
  /// The client end of `sock` for the server `host` (a DNS name, sent as SNI and checked
  /// against the certificate, or an IP address, checked against its IP names): handshake()
  /// next. Offers the context's cached session for `host`. Any thread.
  static result<stream> client(const context& ctx, net::stream_socket sock, std::string_view host);

  stream(stream&&) noexcept;
  stream& operator=(stream&&) noexcept;
  ~stream();

  /// Runs the handshake to its end within `timeout` (measured for the whole handshake, so a
  /// peer that sends a byte at a time cannot stretch it): std::errc::timed_out when it
  /// passes. Errors say what failed: an alert ("tlsv1 alert unknown ca"), garbage ("wrong
  /// version number"), verification ("certificate has expired"), a close
  /// (errc::closed_in_handshake). Suspends.
  task<result<void>> handshake(std::chrono::milliseconds timeout = std::chrono::seconds(10));

  /// Up to `buf.size()` bytes of plaintext, at least one; 0 after the peer's close_notify;
  /// errc::truncated when the connection ended without it. Suspends only when no decrypted
  /// byte is waiting. With a read timeout on the socket, a read that gets nothing within it
  /// ends with std::errc::timed_out and the stream stays usable; so does a read whose task
  /// is stopped while it waits (std::errc::operation_canceled).
  task<result<std::size_t>> read(std::span<std::byte> buf);
  /// Waits until read() has something to work on — ciphertext received, plaintext already
  /// decrypted, or the end of the stream — without a plaintext buffer: a server holding
  /// many idle connections takes its read buffer only once bytes are there. Waiting, the
  /// stream holds only a small receive buffer. With a read timeout on the socket, ends with
  /// std::errc::timed_out when nothing came within it (the stream stays usable). Suspends
  /// unless something is there already.
  task<result<void>> wait_readable();
  /// Encrypts and sends every byte of `buf` (records of up to 16 KiB); the byte count.
  /// Returns once the records are handed to the kernel. Suspends.
  task<result<std::size_t>> write(std::span<const std::byte> buf);
  /// As write() for the buffers of `iov`, gathered into full records (small buffers do not
  /// each cost a record). The buffers must stay alive until it returns.
  task<result<std::size_t>> writev(std::span<const ::iovec> iov);
  /// Sends close_notify (the peer's read then ends cleanly). Reading stays possible until
  /// the peer's own close_notify. Suspends.
  task<result<void>> shutdown();
  /// Closes the socket through the ring (no close_notify); the stream is empty afterwards.
  saturn::detail::close_awaiter close() noexcept;

  /// The negotiated ALPN protocol ("http/1.1", "h2"), empty when none.
  std::string_view alpn() const noexcept;
  /// The negotiated version ("TLSv1.3").
  std::string_view version() const noexcept;
  /// The negotiated cipher suite ("TLS_AES_128_GCM_SHA256").
  std::string_view cipher() const noexcept;
  /// The SNI name the client sent (server side; empty when none).
  std::string_view server_name() const noexcept;
  /// Whether the handshake resumed an earlier session.
  bool resumed() const noexcept;
  /// True once the handshake has completed.
  bool established() const noexcept;

  /// The socket under the stream (its fd, read timeout, peer address). Do not read from or
  /// write to it directly: that corrupts the TLS stream.
  net::stream_socket& socket() noexcept;

  // --- For servers that schedule their own sends (the HTTP server's direct send, its
  // send timeout): encrypt, then send pending_output() on the socket and consume it.

  /// Encrypts `buf` into pending_output(). Any error leaves the stream unusable.
  result<void> encrypt(std::span<const std::byte> buf);
  /// The records waiting to be sent (encrypt()'s, and the handshake's or a key update's).
  std::span<const std::byte> pending_output() const noexcept;
  /// Drops the first `n` bytes of pending_output() (they were sent).
  void consume_output(std::size_t n) noexcept;
  /// Sends all of pending_output() (a direct send first, then the ring). Suspends.
  task<result<void>> flush();

 private:
  explicit stream(std::unique_ptr<detail::stream_state> s) noexcept;
  std::unique_ptr<detail::stream_state> m_s;
};

}  // namespace saturn::tls
