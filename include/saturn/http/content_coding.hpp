/// \file
/// The content codings saturn's HTTP layer encodes and decodes (RFC 9110 §8.4.1), their
/// names on the wire, and the errors of compressing and decompressing.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <system_error>

namespace saturn::http {

/// A content coding. `identity` is the absence of one (the bytes as they are).
enum class content_coding : std::uint8_t { identity, gzip, br };

/// The coding's token as sent in Content-Encoding: "identity", "gzip", "br".
/// Threading: any thread.
std::string_view coding_name(content_coding c) noexcept;

/// The coding a Content-Encoding token names (ASCII case-insensitive; "x-gzip" is gzip,
/// RFC 9110 §8.4.1.3), or nullopt for a coding saturn does not know (deflate, zstd, ...).
/// Threading: any thread.
std::optional<content_coding> parse_coding(std::string_view token) noexcept;

/// Why compressing or decompressing failed (the error's code; its operation names the
/// coding and direction, e.g. "gzip decode").
enum class compression_errc {
  corrupt_input = 1,   ///< the compressed bytes are not a valid stream of that coding
  truncated_input,     ///< the compressed bytes end before their stream does
  trailing_data,       ///< bytes follow the end of the compressed stream
  output_limit,        ///< decoding would exceed the caller's max_output (a bomb, or a limit too small)
  invalid_options,     ///< a level, quality or window outside the library's range
  finished,            ///< write/flush/finish after finish() or after an error
  library_failure,     ///< zlib or brotli refused for another reason (out of memory)
};

/// The category of compression_errc ("compression"). Threading: any thread.
const std::error_category& compression_category() noexcept;

/// Makes `std::error_code(e)` and `code == compression_errc::x` work.
inline std::error_code make_error_code(compression_errc e) noexcept {
  return {static_cast<int>(e), compression_category()};
}

}  // namespace saturn::http

template <>
struct std::is_error_code_enum<saturn::http::compression_errc> : std::true_type {};
