// A tls::stream's state: the socket, the SSL, and the two buffers OpenSSL's BIO reads and
// writes (ring_bio.cpp). Heap-allocated so the BIO's pointer stays valid when the stream
// moves.
#pragma once

#include <saturn/net/stream_socket.hpp>

#include "tls/context_impl.hpp"

#include <openssl/ssl.h>

#include <cstddef>
#include <memory>
#include <string>

namespace saturn::tls::detail {

/// Ciphertext on its way in and out. OpenSSL reads [in_pos, in_len) through the BIO; the
/// stream receives into [in_len, in_cap). OpenSSL appends records to `out`; the stream
/// sends [out_pos, out.size()).
struct io_buffers {
  /// What a connection waiting for its next small request holds: a ClientHello or a
  /// request of a few hundred bytes fits (an idle connection's memory is the target).
  static constexpr std::size_t k_in_idle = 2 * 1024;
  /// Room for a full TLS record (16 KiB of plaintext, 256 bytes of expansion, the header)
  /// and the start of the next: where a receive that filled the idle buffer moves.
  static constexpr std::size_t k_in_small = 18 * 1024;
  /// A bulk transfer (a receive that filled the buffer) moves to this size: four records
  /// per receive instead of one.
  static constexpr std::size_t k_in_large = 66 * 1024;
  std::unique_ptr<std::byte[]> in;  // allocated at the first receive
  std::size_t in_cap = 0;
  std::size_t in_pos = 0, in_len = 0;
  std::string out;
  std::size_t out_pos = 0;
  bool eof = false;  // the socket reached end of stream

  std::size_t out_pending() const noexcept { return out.size() - out_pos; }
};

struct stream_state {
  stream_state() = default;
  stream_state(const stream_state&) = delete;
  stream_state& operator=(const stream_state&) = delete;
  ~stream_state() {
    if (ssl == nullptr)
      return;
    // OpenSSL drops the session of a connection freed before it sent close_notify (the
    // TLS 1.0 rule). Since TLS 1.1 an unclosed connection may still be resumed (RFC 4346
    // §7.2.1), and most peers just close: keep the session unless the connection failed.
    if (established && !failed)
      SSL_set_shutdown(ssl, SSL_get_shutdown(ssl) | SSL_SENT_SHUTDOWN);
    SSL_free(ssl);  // and its BIO
  }

  std::shared_ptr<context_impl> ctx;
  net::stream_socket sock;
  SSL* ssl = nullptr;
  io_buffers io;
  ssl_app app{};
  bool established = false;
  bool failed = false;  // a fatal error: only close is left
  // read() stopped because OpenSSL needs more ciphertext (it holds no unread byte and no
  // whole record is buffered): the next read() receives before calling SSL_read.
  bool need_input = false;
};

}  // namespace saturn::tls::detail
