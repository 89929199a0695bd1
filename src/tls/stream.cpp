// tls::stream: OpenSSL's state machine driven by the ring. Every OpenSSL call runs on
// the task's current thread and its errors are read before the task suspends (OpenSSL's
// error queue is per thread; the task may resume elsewhere). The loop is always the same:
// call OpenSSL; send what it wrote; on WANT_READ receive more ciphertext; repeat.
#include <saturn/tls/stream.hpp>

#include "tls/context_impl.hpp"
#include "tls/openssl_error.hpp"
#include "tls/stream_state.hpp"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace saturn::tls {

namespace {

using detail::stream_state;

/// Records worth of plaintext encrypted before the output is sent (bounds the memory a
/// large write holds).
constexpr std::size_t k_flush_at = 64 * 1024;
/// writev gathers small buffers into records of this size.
constexpr std::size_t k_record = 16 * 1024;

bool is_ip_literal(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return ::inet_pton(AF_INET, host.c_str(), buf) == 1 || ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

result<std::unique_ptr<stream_state>> make_state(const context& ctx, net::stream_socket sock) {
  if (ctx.impl() == nullptr)
    return error{std::make_error_code(std::errc::invalid_argument), "tls stream: empty context"};
  auto st = std::make_unique<stream_state>();
  st->ctx = ctx.impl();
  st->sock = std::move(sock);
  ERR_clear_error();
  st->ssl = SSL_new(st->ctx->ctxs.front());
  if (st->ssl == nullptr)
    return detail::last_openssl_error("tls stream", std::errc::not_enough_memory);
  BIO* bio = BIO_new(detail::ring_bio_method());
  if (bio == nullptr)
    return detail::last_openssl_error("tls stream", std::errc::not_enough_memory);
  BIO_set_data(bio, &st->io);
  SSL_set_bio(st->ssl, bio, bio);  // one reference for both directions; freed with the SSL
  st->app.ctx = st->ctx.get();
  SSL_set_app_data(st->ssl, &st->app);
  return st;
}

/// The error that ended an OpenSSL call whose SSL_get_error was `e`.
error failure(stream_state& st, int e, const char* op) {
  if (e == SSL_ERROR_SSL && !st.established && !st.ctx->server) {
    const long v = SSL_get_verify_result(st.ssl);
    if (v != X509_V_OK) {
      ERR_clear_error();
      return error{std::error_code(static_cast<int>(v), verify_category()), "tls handshake (certificate verify)"};
    }
  }
  if (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
    // No OpenSSL reason: the transport ended under it.
    return error{make_error_code(st.established ? errc::truncated : errc::closed_in_handshake), op};
  }
  error err = detail::last_openssl_error(op);
  if (!st.established && is(err, errc::truncated))
    err.code = make_error_code(errc::closed_in_handshake);
  return err;
}

/// Receives more ciphertext: false at end of stream.
/// A receive that timed out or was cancelled took no byte (the ring's recv reports its
/// bytes when they beat the cancel): the stream stays usable for the next read.
bool receive_left_it_usable(const error& e) noexcept {
  return e == std::errc::timed_out || e == std::errc::operation_canceled;
}

/// Where the next receive goes: the input buffer (allocated at the first receive) with the
/// bytes not yet read moved to its front. Empty when the buffer is full (OpenSSL has a
/// full buffer to read first).
std::span<std::byte> receive_room(stream_state& st) {
  detail::io_buffers& io = st.io;
  if (!io.in) {
    io.in_cap = detail::io_buffers::k_in_idle;
    io.in.reset(new std::byte[io.in_cap]);  // not zeroed: only received bytes are read
  }
  if (io.in_pos > 0) {
    std::memmove(io.in.get(), io.in.get() + io.in_pos, io.in_len - io.in_pos);
    io.in_len -= io.in_pos;
    io.in_pos = 0;
  }
  return std::span<std::byte>(io.in.get() + io.in_len, io.in_cap - io.in_len);
}

/// Takes a receive of `got` bytes into receive_room(): false at end of stream.
bool received(stream_state& st, std::size_t got, std::size_t room) {
  detail::io_buffers& io = st.io;
  if (got == 0) {
    io.eof = true;
    return false;
  }
  io.in_len += got;
  if (got == room && io.in_cap < detail::io_buffers::k_in_large) {
    // The receive filled the buffer: a record larger than the idle size, or a bulk
    // transfer (the peer sends faster than one buffer a receive). The next size up.
    const std::size_t cap = io.in_cap < detail::io_buffers::k_in_small ? detail::io_buffers::k_in_small
                                                                         : detail::io_buffers::k_in_large;
    std::unique_ptr<std::byte[]> big(new std::byte[cap]);
    std::memcpy(big.get(), io.in.get() + io.in_pos, io.in_len - io.in_pos);
    io.in_len -= io.in_pos;
    io.in_pos = 0;
    io.in = std::move(big);
    io.in_cap = cap;
  }
  return true;
}

/// Receives more ciphertext: false at end of stream. (read() does the same inline, without
/// this coroutine's frame.)
task<result<bool>> fill(stream_state& st) {
  const std::span<std::byte> room = receive_room(st);
  if (room.empty())
    co_return true;
  auto rv = st.sock.recv(room);
  auto got = co_await rv;
  if (!got)
    co_return got.err();
  co_return received(st, *got, room.size());
}

/// True when the input buffer starts with a whole TLS record (header and body), so that
/// SSL_read can decrypt it without asking for more. The buffer starts at a record boundary
/// whenever OpenSSL holds no partial record (it reads a header, then exactly its body).
bool whole_record_buffered(const detail::io_buffers& io) noexcept {
  const std::size_t avail = io.in_len - io.in_pos;
  if (avail < 5)
    return false;
  const auto* h = reinterpret_cast<const unsigned char*>(io.in.get() + io.in_pos);
  return avail >= 5 + ((std::size_t{h[3]} << 8) | h[4]);
}

/// The non-blocking part of send_pending: true when nothing is left to send (usually
/// all of it fits the socket buffer); `err` set on a failed send.
bool send_now(stream_state& st, error& err) {
  detail::io_buffers& io = st.io;
  if (io.out_pending() == 0)
    return true;
  const ssize_t n = ::send(st.sock.fd(), io.out.data() + io.out_pos, io.out_pending(), MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n > 0)
    io.out_pos += static_cast<std::size_t>(n);
  else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    err = error{std::error_code(errno, std::system_category()), "tls send"};
  if (io.out_pending() > 0 || err.code)
    return false;
  io.out.clear();
  io.out_pos = 0;
  return true;
}

/// Sends all pending output: a non-blocking send first (send_now), then the ring's send
/// for the rest.
task<result<void>> send_pending(stream_state& st) {
  error err{};
  if (send_now(st, err))
    co_return result<void>{};
  if (err.code)
    co_return err;
  detail::io_buffers& io = st.io;
  auto tx = st.sock.send(std::span<const std::byte>(reinterpret_cast<const std::byte*>(io.out.data()) + io.out_pos,
                                                    io.out_pending()));
  auto sent = co_await tx;
  if (!sent)
    co_return sent.err();
  io.out.clear();
  io.out_pos = 0;
  co_return result<void>{};
}

}  // namespace

stream::stream(std::unique_ptr<detail::stream_state> s) noexcept : m_s(std::move(s)) {}
stream::stream(stream&&) noexcept = default;
stream& stream::operator=(stream&&) noexcept = default;
stream::~stream() = default;

result<stream> stream::server(const context& ctx, net::stream_socket sock) {
  if (!ctx.is_server())
    return error{std::make_error_code(std::errc::invalid_argument), "tls stream::server: not a server context"};
  auto st = make_state(ctx, std::move(sock));
  if (!st)
    return st.err();
  SSL_set_accept_state((*st)->ssl);
  return stream(std::move(*st));
}

result<stream> stream::client(const context& ctx, net::stream_socket sock, std::string_view host) {
  if (ctx.is_server())
    return error{std::make_error_code(std::errc::invalid_argument), "tls stream::client: not a client context"};
  auto made = make_state(ctx, std::move(sock));
  if (!made)
    return made.err();
  stream_state& st = **made;
  SSL* ssl = st.ssl;
  std::string name(host);
  if (!name.empty()) {
    ERR_clear_error();
    bool ok = true;
    if (is_ip_literal(name)) {
      ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str()) == 1;
    } else {
      SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      ok = SSL_set_tlsext_host_name(ssl, name.c_str()) == 1 && SSL_set1_host(ssl, name.c_str()) == 1;
    }
    if (!ok)
      return detail::last_openssl_error("tls stream::client: server name", std::errc::invalid_argument);
  }
  if (st.ctx->resume && !name.empty()) {
    st.app.host = name;
    if (SSL_SESSION* s = st.ctx->take_session(name); s != nullptr) {
      SSL_set_session(ssl, s);
      SSL_SESSION_free(s);  // SSL_set_session took its own reference
    }
  }
  SSL_set_connect_state(ssl);
  return stream(std::move(*made));
}

task<result<void>> stream::handshake(std::chrono::milliseconds timeout) {
  stream_state& st = *m_s;
  if (st.established)
    co_return result<void>{};
  if (st.failed)
    co_return error{std::make_error_code(std::errc::not_connected), "tls handshake"};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::chrono::milliseconds saved_timeout = st.sock.read_timeout();
  result<void> outcome;
  for (;;) {
    ERR_clear_error();
    const int r = SSL_do_handshake(st.ssl);
    const int e = r == 1 ? SSL_ERROR_NONE : SSL_get_error(st.ssl, r);
    error err{};
    const bool fatal = r != 1 && e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE;
    if (fatal)
      err = failure(st, e, "tls handshake");
    // What OpenSSL wrote goes out first: the next flight, or the alert that explains a
    // failure to the peer.
    auto tx = send_pending(st);
    auto sent = co_await std::move(tx);
    if (fatal) {
      outcome = err;
      break;
    }
    if (!sent) {
      outcome = sent.err();
      break;
    }
    if (r == 1) {
      st.established = true;
      // The handshake's flights (a certificate chain) need not stay allocated.
      std::string().swap(st.io.out);
      st.io.out_pos = 0;
      break;
    }
    if (e == SSL_ERROR_WANT_WRITE)
      continue;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      outcome = error{std::make_error_code(std::errc::timed_out), "tls handshake"};
      break;
    }
    st.sock.set_read_timeout(left);
    auto rx = fill(st);
    auto got = co_await std::move(rx);
    if (!got) {
      outcome = got.err() == std::errc::timed_out ? error{std::make_error_code(std::errc::timed_out), "tls handshake"}
                                                  : got.err();
      break;
    }
    if (!*got) {
      outcome = error{make_error_code(errc::closed_in_handshake), "tls handshake"};
      break;
    }
  }
  st.sock.set_read_timeout(saved_timeout);
  if (!outcome)
    st.failed = true;
  co_return outcome;
}

task<result<std::size_t>> stream::read(std::span<std::byte> buf) {
  stream_state& st = *m_s;
  if (!st.established || st.failed)
    co_return error{std::make_error_code(std::errc::not_connected), "tls read"};
  if (buf.empty())
    co_return error{std::make_error_code(std::errc::invalid_argument), "tls read: empty buffer"};
  // The previous read stopped for want of ciphertext (need_input: OpenSSL holds nothing
  // and no whole record is here) and nothing came or must leave since: receive first
  // instead of an SSL_read that could only ask for more. Never after OpenSSL saw
  // close_notify or an error: need_input is set only when it asked for more.
  bool receive_first = st.need_input && !st.io.eof && st.io.out_pending() == 0 && !whole_record_buffered(st.io);
  st.need_input = false;
  for (;;) {
    if (!receive_first) {
      ERR_clear_error();
      std::size_t got = 0;
      const int r = SSL_read_ex(st.ssl, buf.data(), buf.size(), &got);
      const int e = r == 1 ? SSL_ERROR_NONE : SSL_get_error(st.ssl, r);
      if (e == SSL_ERROR_NONE || e == SSL_ERROR_ZERO_RETURN || e == SSL_ERROR_WANT_READ ||
          e == SSL_ERROR_WANT_WRITE) {
        // Records OpenSSL wrote while reading (a KeyUpdate's answer, tickets) leave now.
        if (st.io.out_pending() > 0) {
          auto tx = send_pending(st);
          auto sent = co_await std::move(tx);
          if (!sent) {
            st.failed = true;
            co_return sent.err();
          }
        }
      }
      if (e == SSL_ERROR_NONE) {
        // More whole records already received: decrypt them into the rest of `buf` without
        // suspending (one caller's read then takes several records, and its write sends
        // them on together). A partial record stays for the next read, which receives its
        // rest first.
        std::size_t total = got;
        while (total < buf.size()) {
          if (SSL_has_pending(st.ssl) == 0 && !whole_record_buffered(st.io)) {
            st.need_input = true;
            break;
          }
          std::size_t more = 0;
          if (SSL_read_ex(st.ssl, buf.data() + total, buf.size() - total, &more) != 1) {
            // WANT_READ, or close_notify / an error that the next read reports.
            st.need_input = SSL_get_error(st.ssl, 0) == SSL_ERROR_WANT_READ;
            ERR_clear_error();
            break;
          }
          total += more;
        }
        co_return total;
      }
      if (e == SSL_ERROR_ZERO_RETURN)
        co_return std::size_t{0};  // close_notify
      if (e == SSL_ERROR_WANT_WRITE)
        continue;
      if (e != SSL_ERROR_WANT_READ) {
        st.failed = true;
        co_return failure(st, e, "tls read");
      }
    }
    receive_first = false;
    // fill(), inline: no coroutine frame per receive.
    const std::span<std::byte> room = receive_room(st);
    if (room.empty())
      continue;  // OpenSSL has a full buffer to read first
    auto rv = st.sock.recv(room);
    auto got = co_await rv;
    if (!got) {
      if (!receive_left_it_usable(got.err()))
        st.failed = true;
      co_return got.err();
    }
    (void)received(st, *got, room.size());
    // At end of stream the next SSL_read reports what it means: close_notify already
    // read gives 0, anything else truncation.
  }
}

task<result<void>> stream::wait_readable() {
  stream_state& st = *m_s;
  if (!st.established || st.failed)
    co_return error{std::make_error_code(std::errc::not_connected), "tls read"};
  if (SSL_pending(st.ssl) > 0 || st.io.in_len > st.io.in_pos || st.io.eof)
    co_return result<void>{};
  if (st.io.in && st.io.in_cap > detail::io_buffers::k_in_idle) {
    // Going idle: wait with the small buffer (a large one came from a bulk transfer).
    st.io.in.reset();
    st.io.in_cap = st.io.in_pos = st.io.in_len = 0;
  }
  auto rx = fill(st);
  auto got = co_await std::move(rx);
  if (!got) {
    if (!receive_left_it_usable(got.err()))
      st.failed = true;
    co_return got.err();
  }
  co_return result<void>{};  // bytes, or end of stream: read() says which
}

result<void> stream::encrypt(std::span<const std::byte> buf) {
  stream_state& st = *m_s;
  if (!st.established || st.failed)
    return error{std::make_error_code(std::errc::not_connected), "tls write"};
  std::size_t off = 0;
  while (off < buf.size()) {
    ERR_clear_error();
    std::size_t wrote = 0;
    const int r = SSL_write_ex(st.ssl, buf.data() + off, buf.size() - off, &wrote);
    if (r != 1) {
      st.failed = true;
      return failure(st, SSL_get_error(st.ssl, r), "tls write");
    }
    off += wrote;
  }
  return {};
}

task<result<std::size_t>> stream::write(std::span<const std::byte> buf) {
  std::size_t done = 0;
  while (done < buf.size()) {
    const std::size_t n = std::min(buf.size() - done, k_flush_at);
    if (auto ok = encrypt(buf.subspan(done, n)); !ok)
      co_return ok.err();
    done += n;
    error err{};
    if (send_now(*m_s, err))
      continue;  // the usual case: the socket took it all, no coroutine frame
    if (err.code) {
      m_s->failed = true;
      co_return err;
    }
    auto tx = send_pending(*m_s);
    auto sent = co_await std::move(tx);
    if (!sent) {
      m_s->failed = true;
      co_return sent.err();
    }
  }
  co_return done;
}

task<result<std::size_t>> stream::writev(std::span<const ::iovec> iov) {
  std::string gather;  // small buffers, joined into full records
  std::size_t total = 0;
  for (const ::iovec& v : iov) {
    std::span<const std::byte> piece(static_cast<const std::byte*>(v.iov_base), v.iov_len);
    while (!piece.empty()) {
      if (gather.empty() && piece.size() >= k_record) {
        // Whole records straight from the caller's buffer.
        const std::size_t n = piece.size() - piece.size() % k_record;
        if (auto ok = encrypt(piece.first(n)); !ok)
          co_return ok.err();
        piece = piece.subspan(n);
      } else {
        const std::size_t n = std::min(piece.size(), k_record - gather.size());
        gather.append(reinterpret_cast<const char*>(piece.data()), n);
        piece = piece.subspan(n);
        if (gather.size() == k_record) {
          if (auto ok = encrypt(std::as_bytes(std::span(gather))); !ok)
            co_return ok.err();
          gather.clear();
        }
      }
      if (m_s->io.out_pending() >= k_flush_at) {
        auto tx = send_pending(*m_s);
        auto sent = co_await std::move(tx);
        if (!sent) {
          m_s->failed = true;
          co_return sent.err();
        }
      }
    }
    total += v.iov_len;
  }
  if (!gather.empty())
    if (auto ok = encrypt(std::as_bytes(std::span(gather))); !ok)
      co_return ok.err();
  auto tx = send_pending(*m_s);
  auto sent = co_await std::move(tx);
  if (!sent) {
    m_s->failed = true;
    co_return sent.err();
  }
  co_return total;
}

task<result<void>> stream::shutdown() {
  stream_state& st = *m_s;
  if (!st.established || st.failed)
    co_return error{std::make_error_code(std::errc::not_connected), "tls shutdown"};
  ERR_clear_error();
  const int r = SSL_shutdown(st.ssl);  // 0: close_notify written, the peer's not yet seen
  if (r < 0) {
    error err = failure(st, SSL_get_error(st.ssl, r), "tls shutdown");
    st.failed = true;
    co_return err;
  }
  auto tx = send_pending(st);
  co_return co_await std::move(tx);
}

saturn::detail::close_awaiter stream::close() noexcept { return m_s->sock.close(); }

std::string_view stream::alpn() const noexcept {
  const unsigned char* p = nullptr;
  unsigned len = 0;
  SSL_get0_alpn_selected(m_s->ssl, &p, &len);
  return p == nullptr ? std::string_view() : std::string_view(reinterpret_cast<const char*>(p), len);
}
std::string_view stream::version() const noexcept { return SSL_get_version(m_s->ssl); }
std::string_view stream::cipher() const noexcept {
  const char* c = SSL_get_cipher_name(m_s->ssl);
  return c != nullptr ? std::string_view(c) : std::string_view();
}
std::string_view stream::server_name() const noexcept {
  const char* n = SSL_get_servername(m_s->ssl, TLSEXT_NAMETYPE_host_name);
  return n != nullptr ? std::string_view(n) : std::string_view();
}
bool stream::resumed() const noexcept { return SSL_session_reused(m_s->ssl) == 1; }
bool stream::established() const noexcept { return m_s->established; }
net::stream_socket& stream::socket() noexcept { return m_s->sock; }

std::span<const std::byte> stream::pending_output() const noexcept {
  return {reinterpret_cast<const std::byte*>(m_s->io.out.data()) + m_s->io.out_pos, m_s->io.out_pending()};
}
void stream::consume_output(std::size_t n) noexcept {
  detail::io_buffers& io = m_s->io;
  io.out_pos += std::min(n, io.out_pending());
  if (io.out_pos == io.out.size()) {
    io.out.clear();
    io.out_pos = 0;
  }
}
task<result<void>> stream::flush() {
  auto tx = send_pending(*m_s);
  auto sent = co_await std::move(tx);
  if (!sent)
    m_s->failed = true;
  co_return sent;
}

}  // namespace saturn::tls
