/// \file
/// An incremental UTF-8 validator (RFC 3629): text messages are checked fragment by
/// fragment, a code point may be split across fragments, and overlong forms, surrogates
/// (U+D800–U+DFFF) and code points above U+10FFFF are refused.
///
/// Threading: a plain value; one user at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace saturn::http::websocket {

/// Validates a byte stream given in pieces. Three bytes of state.
class utf8_validator {
 public:
  /// Checks the next bytes; false once the stream seen so far cannot be UTF-8 (and from
  /// then on, until reset()). A code point left open at the end is not an error yet.
  bool feed(std::span<const std::byte> bytes) noexcept;
  /// True when the bytes so far are valid and end on a code point boundary.
  bool complete() const noexcept { return !m_failed && m_need == 0; }
  /// True once an invalid byte was seen.
  bool failed() const noexcept { return m_failed; }
  /// Starts a new stream.
  void reset() noexcept { *this = utf8_validator{}; }

 private:
  std::uint8_t m_need = 0;     // continuation bytes the open code point still needs
  std::uint8_t m_lo = 0x80;    // range of the next continuation byte (narrower right
  std::uint8_t m_hi = 0xBF;    // after E0, ED, F0 and F4: no overlong, surrogate, > U+10FFFF)
  bool m_failed = false;
};

/// True when `s` is complete, valid UTF-8.
bool valid_utf8(std::string_view s) noexcept;

}  // namespace saturn::http::websocket
