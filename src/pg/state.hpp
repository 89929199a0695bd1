// The inside of a pg::connection: its socket, buffers, statement cache and the framing of
// the v3 protocol's messages (a type byte, a big-endian int32 length including itself,
// the body).
#pragma once

#include <saturn/net/stream_socket.hpp>
#include <saturn/pg/connection.hpp>
#include <saturn/tls/stream.hpp>

#include <deque>
#include <memory>
#include <string>
#include <unordered_map>

namespace saturn::pg::detail {

/// A prepared statement of this connection.
struct prepared {
  std::string name;
  std::shared_ptr<const std::vector<column>> cols;
};

/// One backend message as received: its type and body (valid until the next read).
struct message {
  char type = 0;
  const char* body = nullptr;
  std::size_t size = 0;
};

struct connection_state {
  config cfg;
  net::stream_socket sock;            // the socket, while no TLS is on it
  std::unique_ptr<tls::stream> tls;   // TLS to the server (it owns the socket then)
  /// The socket, under TLS or not (for its fd, read timeout and close).
  net::stream_socket& raw() noexcept { return tls ? tls->socket() : sock; }
  std::string rbuf;  // storage of received bytes; [rpos, rend) received, not yet parsed
  std::size_t rpos = 0;
  std::size_t rend = 0;
  std::string wbuf;  // the messages being written
  std::unordered_map<std::string, prepared> cache;  // by cache_key (connection.cpp)
  std::string key_scratch;  // the key being looked up (reused: no allocation per query)
  std::unordered_map<std::string, std::string> server_params;
  std::deque<notification> notifications;
  std::int32_t pid = 0;
  std::int32_t secret = 0;
  char tx_status = 'I';
  bool broken = false;
  bool busy = false;
  bool cancelling = false;  // a CancelRequest was sent for the running query
  bool rollback_pending = false;
  unsigned next_stmt = 0;

  // Framing (writes into wbuf).
  std::size_t begin(char type);
  void end(std::size_t at);
  void put16(std::int16_t v);
  void put32(std::int32_t v);
  void put_cstr(std::string_view s);

  /// Sends wbuf, shielded from cancellation (a half-sent message would desync the
  /// stream); clears it.
  task<result<void>> flush();
  /// The next whole message already in rbuf, without suspending (NoticeResponse,
  /// ParameterStatus and NotificationResponse handled as next() does); false when more
  /// bytes must be received (or the next length is bad: next() reports that).
  bool take_buffered(message& out);
  /// The next backend message; handles NoticeResponse, ParameterStatus and
  /// NotificationResponse itself. On a stop of the task while a query is in flight
  /// (`in_query`), sends CancelRequest once and keeps reading (shielded).
  task<result<message>> next(bool in_query);
  /// Reads to ReadyForQuery, keeping the first ErrorResponse in `first`.
  task<result<void>> drain(error* first);
  error fail(errc kind, std::string what, saturn::error io = {});
};

/// A big-endian int32 of the wire.
inline std::int32_t get32(const char* p) {
  return static_cast<std::int32_t>((std::uint32_t(std::uint8_t(p[0])) << 24) |
                                   (std::uint32_t(std::uint8_t(p[1])) << 16) |
                                   (std::uint32_t(std::uint8_t(p[2])) << 8) | std::uint32_t(std::uint8_t(p[3])));
}

/// Parses an ErrorResponse body.
error server_error(const message& m);

/// Over TCP, as cfg.sslmode asks: sends SSLRequest and, when the server answers 'S',
/// runs the TLS handshake (s->tls owns the socket afterwards); 'N' continues plain for
/// prefer and fails for require and stricter (src/pg/ssl.cpp).
task<result<void>> negotiate_tls(connection_state* s);

/// Sends the StartupMessage and answers the server's authentication requests until
/// ReadyForQuery (src/pg/startup.cpp).
task<result<void>> startup(connection_state* s);

/// Sends CancelRequest(pid, secret) to the server of `cfg` and waits until it closes the
/// socket (cancel.cpp). Errors are dropped: the caller's read decides what happened.
task<void> send_cancel(config cfg, std::int32_t pid, std::int32_t secret);

}  // namespace saturn::pg::detail
