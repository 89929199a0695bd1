/// \file
/// The WebSocket frame codec (RFC 6455 §5), server role: the header parser that checks
/// what a client frame may carry, the unmasking loop, the close codes and the error
/// category whose values are those codes, and the writer of (unmasked) server frames.
///
/// Threading: pure functions over caller-owned bytes; any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <system_error>

namespace saturn::http::websocket {

/// Frame opcodes (RFC 6455 §5.2). Values 3–7 and 11–15 are reserved: a frame carrying one
/// is a protocol error.
enum class opcode : std::uint8_t { continuation = 0x0, text = 0x1, binary = 0x2, close = 0x8, ping = 0x9, pong = 0xA };

/// True for close, ping and pong (opcodes with the high bit set).
constexpr bool is_control(opcode op) noexcept { return (static_cast<std::uint8_t>(op) & 0x8) != 0; }

/// Close status codes (RFC 6455 §7.4.1) this library sends or reports.
namespace close_code {
inline constexpr std::uint16_t normal = 1000;           ///< the purpose was fulfilled
inline constexpr std::uint16_t going_away = 1001;       ///< server going down, page left
inline constexpr std::uint16_t protocol_error = 1002;   ///< a frame broke RFC 6455
inline constexpr std::uint16_t unsupported_data = 1003; ///< a data type it cannot accept
inline constexpr std::uint16_t no_status = 1005;        ///< reported (never sent): close had no code
inline constexpr std::uint16_t abnormal = 1006;         ///< reported (never sent): no close frame came
inline constexpr std::uint16_t invalid_payload = 1007;  ///< a text message was not UTF-8
inline constexpr std::uint16_t policy_violation = 1008;
inline constexpr std::uint16_t message_too_big = 1009;  ///< a message over the size limit
inline constexpr std::uint16_t internal_error = 1011;
}  // namespace close_code

/// Whether `code` may appear in a close frame on the wire (RFC 6455 §7.4): 1000–1003,
/// 1007–1014 and 3000–4999. 1004–1006, 1015, codes below 1000, 1016–2999 and 5000 and above
/// are not (a peer sending one commits a protocol error).
constexpr bool valid_close_code(std::uint16_t code) noexcept {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
}

/// The error category of WebSocket failures: an error_code's value is the close code the
/// session sent (or 1006 when the peer vanished without a close frame).
const std::error_category& error_category() noexcept;
/// An error_code in error_category() for `code`.
inline std::error_code make_error_code(std::uint16_t code) noexcept { return {code, error_category()}; }

/// The most header bytes a frame can have (2 + 8 length + 4 mask).
inline constexpr std::size_t max_header_size = 14;
/// The most header bytes a server frame has (it is never masked).
inline constexpr std::size_t max_server_header_size = 10;
/// Control frame payloads are at most 125 bytes (RFC 6455 §5.5).
inline constexpr std::size_t max_control_payload = 125;

/// A decoded frame header.
struct frame_header {
  bool fin = false;
  opcode op = opcode::continuation;
  bool masked = false;
  std::uint8_t size = 0;              ///< header bytes on the wire, 2 to 14
  std::uint64_t length = 0;           ///< payload bytes
  std::array<std::byte, 4> mask{};    ///< masking key (zero when not masked)
};

/// What parse_frame_header found.
struct header_parse {
  enum class status : std::uint8_t { incomplete, ok, error };
  status state = status::incomplete;
  frame_header header;
  std::uint16_t close_code = 0;  ///< on error: the code to close with (1002)
  const char* reason = "";       ///< on error: what was wrong (a static string)
};

/// Parses the header at the start of `in` as a server reads a client frame: incomplete
/// until every header byte is there (any split works: call again with more bytes), and an
/// error (close code 1002) as soon as the bytes present show a reserved bit (no extension
/// is negotiated), a reserved opcode, a fragmented or over-125-byte control frame, a
/// missing mask bit, or a 64-bit length with its most significant bit set.
header_parse parse_frame_header(std::span<const std::byte> in) noexcept;

/// XORs `n` bytes at `data` with `key`, starting at key byte `phase % 4` (so a payload can
/// be unmasked in pieces: pass the count of bytes already unmasked). Eight bytes per step.
void unmask(std::byte* data, std::size_t n, std::array<std::byte, 4> key, std::size_t phase = 0) noexcept;

/// The header size of an unmasked frame with a `length`-byte payload: 2, 4 or 10.
constexpr std::size_t server_header_size(std::uint64_t length) noexcept {
  return length < 126 ? 2 : length <= 0xFFFF ? 4 : 10;
}
/// Writes the minimal header of an unmasked frame (what a server sends) to `out` (room for
/// server_header_size(length) bytes); returns its size.
std::size_t write_frame_header(std::byte* out, opcode op, std::uint64_t length, bool fin = true) noexcept;

}  // namespace saturn::http::websocket
