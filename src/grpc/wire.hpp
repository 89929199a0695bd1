// gRPC's wire pieces over HTTP/2 (PROTOCOL-HTTP2.md): the length-prefixed message, the
// grpc-timeout value, grpc-message's percent-encoding. Pure functions, tested directly
// (tests/grpc/wire_test.cpp).
#pragma once

#include <saturn/grpc/status.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace saturn::grpc::detail {

/// The prefix of every message: a compressed flag and the length, big-endian.
inline constexpr std::size_t k_prefix = 5;

/// Appends `msg` as one length-prefixed, uncompressed message.
void append_frame(std::string& out, std::string_view msg);

/// What take_frame found at the front of a buffer.
enum class frame_status : std::uint8_t { message, incomplete, too_large, compressed };

/// Looks at the front of `buf`: a whole message (`msg` views it, `used` is its size with
/// the prefix), not all of it yet, one over `max` bytes, or a compressed one (no
/// grpc-encoding but identity is accepted).
frame_status take_frame(std::string_view buf, std::size_t max, std::string_view& msg, std::size_t& used) noexcept;

/// grpc-timeout ("100m", "5S", "1H": at most 8 digits and a unit of H M S m u n), or
/// nullopt when malformed.
std::optional<std::chrono::nanoseconds> parse_timeout(std::string_view v) noexcept;

/// grpc-message's encoding: bytes outside 0x20-0x7E and '%' as %XX (UTF-8 kept as bytes).
std::string percent_encode(std::string_view text);
/// The reverse: %XX decoded, anything else as it is (a malformed escape is kept).
std::string percent_decode(std::string_view text);

}  // namespace saturn::grpc::detail
