// The two transports an HTTP/1.1 connection runs on (connection.cpp is written once over
// either): plain TCP, and TLS over TCP. Each gives the connection the same few steps —
// receive into a buffer, send a whole output batch (a direct send first, then the ring,
// marking the connection `sending` for the send timeout while it waits), half-close and
// close.
//
// TLS costs per batch: OpenSSL encrypts the whole batch into records (one copy into the
// stream's output buffer, tls/stream.hpp), then the records leave as plain bytes would.
#pragma once

#include <saturn/net/tcp_stream.hpp>
#include <saturn/task/task.hpp>
#include <saturn/tls/stream.hpp>

#include "http/connection_registry.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <span>
#include <string>

namespace saturn::http::detail {

/// A first non-blocking send(2) straight from the connection's task: on a socket with
/// room (the usual case) the whole batch leaves with no ring round trip and no task wake.
/// Returns the bytes sent, or -1 if the connection failed.
inline long direct_send(int fd, const std::byte* data, std::size_t size) noexcept {
  ssize_t n = ::send(fd, data, size, MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    return -1;
  return n > 0 ? static_cast<long>(n) : 0;
}

/// Sends bytes[done, size) through the ring, one send at a time: each that moves bytes
/// restarts the send timeout, so only a client that stops reading is closed by it. False
/// if the connection failed.
inline task<bool> send_rest(net::stream_socket& s, std::span<const std::byte> bytes, std::size_t done,
                            conn_entry& entry) {
  while (done < bytes.size()) {
    entry.set(conn_state::sending, coarse_now_ms());
    auto send = s.send_some(bytes.subspan(done));
    auto sent = co_await send;
    if (!sent || *sent == 0)
      co_return false;
    done += *sent;
  }
  co_return true;
}

/// Sends all of `bytes`: a direct send first (when `direct`), the ring for the rest. With
/// `keep`, the rest is copied into *keep before the task first waits, so `bytes` may be a
/// buffer the caller reuses then (a worker's scratch); *keep's buffer is freed afterwards
/// (a backlog's buffer is not kept).
inline task<bool> send_bytes(net::stream_socket& s, std::span<const std::byte> bytes, conn_entry& entry,
                             bool direct, std::string* keep = nullptr) {
  std::size_t done = 0;
  if (direct) {
    long n = direct_send(s.fd(), bytes.data(), bytes.size());
    if (n < 0)
      co_return false;
    done = static_cast<std::size_t>(n);
  }
  if (done == bytes.size())
    co_return true;
  if (keep == nullptr) {
    auto rest = send_rest(s, bytes, done, entry);
    co_return co_await std::move(rest);
  }
  keep->assign(reinterpret_cast<const char*>(bytes.data()) + done, bytes.size() - done);
  auto rest = send_rest(s, std::as_bytes(std::span(*keep)), 0, entry);
  const bool ok = co_await std::move(rest);
  std::string().swap(*keep);
  co_return ok;
}

/// Plain TCP.
struct plain_io {
  static constexpr bool tls = false;
  net::tcp_stream& s;

  int fd() const noexcept { return s.fd(); }
  net::tcp_stream& socket() noexcept { return s; }
  /// One recv into `room`: the byte count, 0 at end of stream.
  auto recv(std::span<std::byte> room) noexcept { return s.recv(room); }
  /// Sends all of `out`. False if the connection failed.
  task<bool> send(const std::string& out, conn_entry& entry, bool direct) {
    return send_bytes(s, std::as_bytes(std::span(out)), entry, direct);
  }
  /// Sends all of `batch`, which the caller may reuse once the task first waits: what is
  /// left then waits in `keep`.
  task<bool> send_scratch(const std::string& batch, std::string& keep, conn_entry& entry, bool direct) {
    return send_bytes(s, std::as_bytes(std::span(batch)), entry, direct, &keep);
  }
  /// Half-close (FIN) before draining.
  task<void> shutdown() {
    auto sh = s.shutdown(SHUT_WR);
    (void)co_await sh;
  }
  auto close() noexcept { return s.close(); }
};

/// TLS over TCP (the handshake already done).
struct tls_io {
  static constexpr bool tls = true;
  tls::stream& t;

  int fd() noexcept { return t.socket().fd(); }
  net::stream_socket& socket() noexcept { return t.socket(); }
  /// Up to room.size() bytes of plaintext; 0 at close_notify (any other end is an error).
  task<result<std::size_t>> recv(std::span<std::byte> room) { return t.read(room); }
  /// Encrypts `out` and sends the records.
  task<bool> send(const std::string& out, conn_entry& entry, bool direct) {
    if (!t.encrypt(std::as_bytes(std::span(out))))
      co_return false;
    auto sent = send_bytes(t.socket(), t.pending_output(), entry, direct);
    bool ok = co_await std::move(sent);
    t.consume_output(t.pending_output().size());
    co_return ok;
  }
  /// As plain_io's: `batch` is encrypted (copied) before the task first waits.
  task<bool> send_scratch(const std::string& batch, std::string&, conn_entry& entry, bool direct) {
    return send(batch, entry, direct);
  }
  /// close_notify, then FIN.
  task<void> shutdown() {
    auto notify = t.shutdown();
    (void)co_await std::move(notify);
    auto sh = t.socket().shutdown(SHUT_WR);
    (void)co_await sh;
  }
  auto close() noexcept { return t.close(); }
};

}  // namespace saturn::http::detail
