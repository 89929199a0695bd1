// The byte stream under a grpc::channel's connection: TCP (h2c by prior knowledge), or TLS
// over TCP with h2 chosen by ALPN. The connection task (channel.cpp) is written once over
// either, in the shape of the server's HTTP/2 connection (src/http/h2_connection.cpp):
//
//   receive task:    wait() — plain: recv into the buffer; TLS: wait until ciphertext is
//                    there (tls::stream::wait_readable), touching nothing OpenSSL owns;
//   connection task: take() — plain: the bytes wait() received; TLS: decrypt into the
//                    buffer — and send(), close().
//
// So OpenSSL's state has one user at a time, as tls::stream requires.
#pragma once

#include <saturn/grpc/channel.hpp>
#include <saturn/net/tcp_stream.hpp>
#include <saturn/result.hpp>
#include <saturn/task/task.hpp>
#include <saturn/tls/stream.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace saturn::grpc::detail {

/// See the file comment. Move-only; one connection task owns it.
class client_transport {
 public:
  /// What open() gives: the transport, or why there is none.
  struct opened;

  /// Connects to `target` within opts.connect_timeout and, with opts.tls, runs the TLS
  /// handshake (within its handshake_timeout) and checks that the server chose h2. The
  /// failure says which step failed and why. Suspends.
  static task<opened> open(const std::string& target, const channel_options& opts);

  /// The receive task's wait: the byte count received into `buf` (plain), or 1 when
  /// ciphertext is waiting (TLS); 0 at the end of the stream or on an error. Suspends.
  task<std::size_t> wait(std::span<std::byte> buf);
  /// The connection task's take, after wait() returned `n` > 0: the plaintext bytes now
  /// at the front of `buf`; 0 at the end of the stream. Suspends over TLS only.
  task<result<std::size_t>> take(std::span<std::byte> buf, std::size_t n);
  /// Sends all of `bytes` (encrypted over TLS). Suspends.
  task<result<void>> send(std::span<const std::byte> bytes);
  /// Closes the socket (no close_notify). Suspends.
  task<void> close();
  /// True over TLS (the :scheme is https).
  bool secure() const noexcept { return m_tls.has_value(); }

 private:
  std::optional<net::tcp_stream> m_tcp;
  std::optional<tls::stream> m_tls;
};

struct client_transport::opened {
  std::optional<client_transport> io;
  std::string why;  // set when io is empty
};

/// The host part of "host:port" ("[::1]:443" → "::1"): the TLS server name by default.
std::string host_of(const std::string& target);

}  // namespace saturn::grpc::detail
