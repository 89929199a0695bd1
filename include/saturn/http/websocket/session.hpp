/// \file
/// `session<Stream>`: one server-side WebSocket connection after the 101 answer. It reads
/// client frames into a message_reader, answers pings with pongs, echoes the peer's close,
/// closes with the RFC's code on a protocol error, and sends unmasked server frames.
///
/// Stream is anything with `recv(std::span<std::byte>)` and `send(std::span<const std::byte>)`
/// awaitables returning result<std::size_t> (net::tcp_stream, net::unix_stream), held by
/// value or, as `session<net::tcp_stream&>`, by reference. When it also has
/// `write_all(std::span<const iovec>)`, a frame's header and payload leave in one sendmsg.
///
/// Memory while idle: sizeof(session) (about 200 bytes with a tcp_stream) plus the receive
/// buffer of options.initial_buffer bytes (512 by default); a larger message grows the
/// buffer, which shrinks back once it is consumed. Nothing else is allocated per
/// connection, and no frame is sent that the peer did not ask for (no keep-alive pings).
///
/// Threading: one task uses a session at a time, both directions included (receive()
/// itself sends pongs and closes); awaits may resume on any worker, as the stream's do.
/// Every await is cancellable through the task's stop token: the stream's operation ends
/// with operation_canceled and that error is returned; a frame half sent leaves the
/// connection unusable (close the stream).
#pragma once

#include <saturn/http/websocket/frame.hpp>
#include <saturn/http/websocket/reader.hpp>
#include <saturn/result.hpp>
#include <saturn/task/task.hpp>

#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

namespace saturn::http::websocket {

/// See the file comment.
template <class Stream>
class session {
  using stream_type = std::remove_reference_t<Stream>;
  static constexpr bool k_gather = requires(stream_type& s, std::span<const ::iovec> v) { s.write_all(v); };

 public:
  /// Takes the upgraded stream and the bytes that arrived after the upgrade request
  /// (already read from the stream by the HTTP server: the first frames, possibly). Does
  /// not suspend; copies `leftover`.
  explicit session(Stream stream, std::span<const std::byte> leftover = {}, session_options opts = {})
      : m_stream(std::forward<Stream>(stream)), m_reader(opts) {
    m_reader.append(leftover);
  }

  /// The next whole message. Suspends until it arrived. Pings are answered and pongs
  /// skipped on the way. A close from the peer is echoed (with its code, or 1000 when it
  /// sent none) and returned as a message of kind close with the peer's code and reason;
  /// the caller then closes the stream. Errors: a protocol violation (the close frame
  /// with its code was sent: 1002, 1007 or 1009) as an error in error_category() whose
  /// value is that code and whose operation says what was wrong; end of stream without a
  /// close as 1006; the stream's own errors as they are; not_connected after a close.
  /// The message's data is valid until the next receive().
  task<result<message>> receive() {
    if (m_rx_done)
      co_return error{std::make_error_code(std::errc::not_connected), "websocket receive: the connection is closed"};
    for (;;) {
      const message_reader::event e = m_reader.next();
      switch (e.kind) {
        case message_reader::event_kind::need_more: {
          auto rd = m_stream.recv(m_reader.prepare());
          auto n = co_await rd;
          if (!n) {
            m_rx_done = true;
            co_return n.err();
          }
          if (*n == 0) {
            m_rx_done = true;
            co_return error{make_error_code(close_code::abnormal), "websocket receive: end of stream without a close frame"};
          }
          m_reader.commit(*n);
          break;
        }
        case message_reader::event_kind::message: {
          message m;
          m.kind = e.op == opcode::text ? message_kind::text : message_kind::binary;
          m.data = e.payload;
          co_return m;
        }
        case message_reader::event_kind::ping: {
          if (m_close_sent)
            break;  // after our close, nothing but the peer's close matters
          const std::span<std::byte> frame = m_reader.frame_before(e.payload, server_header_size(e.payload.size()));
          if (frame.empty())
            break;  // cannot happen: a ping's own header leaves room for the pong's
          write_frame_header(frame.data(), opcode::pong, e.payload.size());
          auto tx = m_stream.send(std::span<const std::byte>(frame));
          auto w = co_await tx;
          if (!w) {
            m_rx_done = true;
            co_return w.err();
          }
          break;
        }
        case message_reader::event_kind::pong:
          break;
        case message_reader::event_kind::close: {
          m_rx_done = true;
          if (!m_close_sent) {
            const std::uint16_t code = e.code == close_code::no_status ? close_code::normal : e.code;
            auto w = co_await send_close(code, {});
            if (!w)
              co_return w.err();
          }
          message m;
          m.kind = message_kind::close;
          m.data = e.payload;
          m.code = e.code;
          co_return m;
        }
        case message_reader::event_kind::error: {
          m_rx_done = true;
          if (!m_close_sent) {
            auto w = co_await send_close(e.code, {});
            (void)w;  // best effort: the error below is what the caller needs
          }
          co_return error{make_error_code(e.code), e.reason};
        }
      }
    }
  }

  /// Sends one unfragmented frame with `op` (text or binary) and `payload`. Suspends until
  /// the stream took every byte. Error not_connected after a close was sent.
  task<result<void>> send(opcode op, std::span<const std::byte> payload) {
    if (m_close_sent)
      co_return error{std::make_error_code(std::errc::not_connected), "websocket send: close already sent"};
    std::array<std::byte, max_server_header_size> head;
    const std::size_t hn = write_frame_header(head.data(), op, payload.size());
    if constexpr (k_gather) {
      std::array<::iovec, 2> iov{::iovec{head.data(), hn},
                                 ::iovec{const_cast<std::byte*>(payload.data()), payload.size()}};
      auto w = co_await m_stream.write_all(std::span<const ::iovec>(iov.data(), payload.empty() ? 1 : 2));
      if (!w)
        co_return w.err();
    } else {
      auto tx = m_stream.send(std::span<const std::byte>(head.data(), hn));
      auto w = co_await tx;
      if (!w)
        co_return w.err();
      if (!payload.empty()) {
        auto tx2 = m_stream.send(payload);
        auto w2 = co_await tx2;
        if (!w2)
          co_return w2.err();
      }
    }
    co_return result<void>{};
  }
  /// send(opcode::text, …). The caller guarantees `text` is UTF-8. Suspends.
  task<result<void>> send_text(std::string_view text) {
    return send(opcode::text, std::as_bytes(std::span<const char>(text.data(), text.size())));
  }
  /// send(opcode::binary, …). Suspends.
  task<result<void>> send_binary(std::span<const std::byte> data) { return send(opcode::binary, data); }

  /// Sends `m` (a text or binary message the last receive() returned) back with the same
  /// kind. The reply frame is built in the receive buffer in front of the payload, so it
  /// leaves in one send without a copy; any other message goes through send(). Suspends.
  task<result<void>> echo(const message& m) {
    if (m.kind == message_kind::close)
      co_return error{std::make_error_code(std::errc::invalid_argument), "websocket echo: a close is not a message"};
    const opcode op = m.kind == message_kind::text ? opcode::text : opcode::binary;
    const std::span<std::byte> frame = m_reader.frame_before(m.data, server_header_size(m.data.size()));
    if (frame.empty() || m_close_sent) {
      auto w = co_await send(op, m.data);
      co_return w;
    }
    write_frame_header(frame.data(), op, m.data.size());
    auto tx = m_stream.send(std::span<const std::byte>(frame));
    auto w = co_await tx;
    if (!w)
      co_return w.err();
    co_return result<void>{};
  }

  /// Sends a ping carrying `payload` (at most 125 bytes, else invalid_argument); its pong
  /// is skipped by receive(). Suspends.
  task<result<void>> ping(std::span<const std::byte> payload = {}) {
    if (payload.size() > max_control_payload)
      co_return error{std::make_error_code(std::errc::invalid_argument), "websocket ping: payload over 125 bytes"};
    if (m_close_sent)
      co_return error{std::make_error_code(std::errc::not_connected), "websocket ping: close already sent"};
    std::array<std::byte, 2 + max_control_payload> f;
    const std::size_t hn = write_frame_header(f.data(), opcode::ping, payload.size());
    if (!payload.empty())
      std::memcpy(f.data() + hn, payload.data(), payload.size());
    auto tx = m_stream.send(std::span<const std::byte>(f.data(), hn + payload.size()));
    auto w = co_await tx;
    if (!w)
      co_return w.err();
    co_return result<void>{};
  }

  /// The closing handshake started here: sends a close with `code` (a code valid on the
  /// wire, else invalid_argument) and `reason` (cut to 123 bytes; the caller guarantees
  /// UTF-8), then reads and drops frames until the peer's close or the end of the stream
  /// (bound the wait with the stream's read timeout or the stop token). Afterwards close
  /// the stream. Suspends.
  task<result<void>> close(std::uint16_t code = close_code::normal, std::string_view reason = {}) {
    if (!valid_close_code(code))
      co_return error{std::make_error_code(std::errc::invalid_argument), "websocket close: invalid status code"};
    if (!m_close_sent) {
      auto w = co_await send_close(code, reason);
      if (!w)
        co_return w;
    }
    while (!m_rx_done) {
      auto m = co_await receive();
      if (!m || m->kind == message_kind::close)
        break;
    }
    co_return result<void>{};
  }

  /// The stream (e.g. to close it, or set a read timeout). Any thread the session's user runs on.
  stream_type& stream() noexcept { return m_stream; }
  /// Neither side has closed.
  bool is_open() const noexcept { return !m_close_sent && !m_rx_done; }
  /// The receive buffer's current size in bytes (memory held for this connection).
  std::size_t buffer_capacity() const noexcept { return m_reader.buffer_capacity(); }

 private:
  task<result<void>> send_close(std::uint16_t code, std::string_view reason) {
    m_close_sent = true;
    if (reason.size() > max_control_payload - 2)
      reason = reason.substr(0, max_control_payload - 2);
    std::array<std::byte, 2 + max_control_payload> f;
    const std::size_t hn = write_frame_header(f.data(), opcode::close, 2 + reason.size());
    f[hn] = static_cast<std::byte>(code >> 8);
    f[hn + 1] = static_cast<std::byte>(code & 0xFF);
    if (!reason.empty())
      std::memcpy(f.data() + hn + 2, reason.data(), reason.size());
    auto tx = m_stream.send(std::span<const std::byte>(f.data(), hn + 2 + reason.size()));
    auto w = co_await tx;
    if (!w)
      co_return w.err();
    co_return result<void>{};
  }

  Stream m_stream;
  message_reader m_reader;
  bool m_close_sent = false;
  bool m_rx_done = false;
};

}  // namespace saturn::http::websocket
