/// \file
/// `message_reader`: the receive half of a WebSocket server connection without the I/O. It
/// owns the receive buffer; the caller reads bytes into prepare() and commit()s them, then
/// asks next() for what they hold: a whole message (fragments assembled), a ping, a pong,
/// a close, or the protocol error to close with. session<Stream> is this plus a stream.
///
/// Buffer protocol: the buffer starts with `header_room` spare bytes, then the unparsed
/// bytes (or, during a fragmented message, the message assembled so far and then the
/// unparsed bytes). A payload next() returns is unmasked in place and stays in the buffer
/// until the following next(); the bytes right before it are free (at least
/// max_server_header_size of them), so a reply frame can be built in place by writing its
/// header there (see frame_before). The buffer is allocated at the first prepare() with
/// options.initial_buffer bytes, grows to hold a large frame or message, and shrinks back
/// once it is empty again.
///
/// Threading: a plain value; one user at a time. Nothing here suspends.
#pragma once

#include <saturn/http/websocket/frame.hpp>
#include <saturn/http/websocket/utf8.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace saturn::http::websocket {

/// Limits and checks of one connection.
struct session_options {
  /// The largest message (the sum of its fragments) accepted; a longer one is refused
  /// with close code 1009 as soon as a frame header announces it. 1 MiB: the receive
  /// buffer grows to the message's size, so this bounds what one connection can make the
  /// server allocate.
  std::size_t max_message = std::size_t{1} << 20;
  /// The receive buffer's size while no large message is in flight (bytes held by an idle
  /// connection). Small messages and a few pipelined ones fit; bigger ones grow it.
  std::size_t initial_buffer = 512;
  /// Check that text messages and close reasons are UTF-8 (RFC 6455 §8.1: close 1007).
  bool validate_utf8 = true;
};

/// What a received message is.
enum class message_kind : std::uint8_t { text, binary, close };

/// A received message. `data` views the session's receive buffer: valid until the next
/// receive() (or next()).
struct message {
  message_kind kind = message_kind::binary;
  /// The payload (text or binary), or the close frame's reason.
  std::span<const std::byte> data;
  /// For close: the peer's status code, close_code::no_status (1005) when it sent none.
  std::uint16_t code = 0;
  /// `data` as characters (the text, or the close reason).
  std::string_view text() const noexcept {
    return {reinterpret_cast<const char*>(data.data()), data.size()};
  }
};

/// See the file comment.
class message_reader {
 public:
  /// Free bytes kept before the payload: room for a server frame header.
  static constexpr std::size_t header_room = max_server_header_size;

  /// What next() found.
  enum class event_kind : std::uint8_t {
    need_more,  ///< read into prepare() and commit(), then call next() again
    message,    ///< a whole text or binary message: event.op, event.payload
    ping,       ///< event.payload: to be answered with a pong carrying it
    pong,       ///< event.payload
    close,      ///< the peer's close: event.code (1005 if none), event.payload its reason
    error,      ///< a protocol error: close with event.code; event.reason says why
  };
  struct event {
    event_kind kind = event_kind::need_more;
    opcode op = opcode::continuation;  ///< text or binary for a message
    std::span<std::byte> payload;      ///< unmasked, in the buffer, until the next next()
    std::uint16_t code = 0;
    const char* reason = "";
  };

  explicit message_reader(session_options opts = {}) noexcept : m_opts(opts) {}
  message_reader(message_reader&&) noexcept = default;
  message_reader& operator=(message_reader&&) noexcept = default;

  /// Space to read into (at least one byte; as much as the frame being parsed needs when
  /// its size is known). Valid until commit() or next().
  std::span<std::byte> prepare();
  /// Records that `n` bytes were written at the start of prepare()'s span.
  void commit(std::size_t n) noexcept { m_end += n; }
  /// Copies `bytes` in (e.g. bytes that arrived with the upgrade request).
  void append(std::span<const std::byte> bytes);

  /// Releases the payload the previous call returned, then parses what the buffer holds.
  /// After a close or an error, every later call repeats that event.
  event next() noexcept;

  /// The `header_size` bytes right before `payload` (a payload the last next() returned)
  /// as writable memory, followed by the payload itself: the span of a frame built in
  /// place. Empty when `payload` is not in this reader's buffer.
  std::span<std::byte> frame_before(std::span<const std::byte> payload, std::size_t header_size) noexcept;

  /// Bytes the receive buffer holds now (0 before the first prepare()).
  std::size_t buffer_capacity() const noexcept { return m_cap; }
  /// Bytes received and not yet parsed.
  std::size_t buffered() const noexcept { return m_end - m_pos; }

 private:
  event fail(std::uint16_t code, const char* reason) noexcept;
  event on_data_frame(const frame_header& h, std::byte* payload) noexcept;
  event on_close_frame(std::span<std::byte> payload) noexcept;
  void reserve(std::size_t bytes_from_pos);
  /// Moves the unparsed bytes [from, m_end) down to `to`.
  void close_gap(std::size_t to, std::size_t from) noexcept;

  session_options m_opts;
  std::unique_ptr<std::byte[]> m_buf;
  std::size_t m_cap = 0;
  std::size_t m_pos = header_room;      // first unparsed byte
  std::size_t m_end = header_room;      // one past the last received byte
  std::size_t m_release = 0;            // where m_pos moves at the next next() (0: stays)
  std::size_t m_want = max_header_size; // bytes from m_pos the parse needs next
  std::size_t m_msg_len = 0;            // fragmented message assembled at header_room
  std::size_t m_last_off = 0;           // the payload the last next() returned, for
  std::size_t m_last_len = 0;           // frame_before: where, how long, and how many
  std::size_t m_last_room = 0;          // free bytes lie before it (0: none returned)
  utf8_validator m_utf8;
  opcode m_msg_op = opcode::continuation;  // text/binary while a fragmented message is open
  bool m_done = false;                     // a close or error was returned
  event m_final;                           // that close or error, repeated
};

}  // namespace saturn::http::websocket
