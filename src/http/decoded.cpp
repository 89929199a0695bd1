// Percent-decoding (RFC 3986 §2.1; the WHATWG URL standard's percent-decode, which keeps a
// '%' not followed by two hex digits as it is), and the form flavour where '+' is a space.
#include <saturn/http/decoded.hpp>

#include "http/chars.hpp"

namespace saturn::http::detail {

namespace {

/// The byte `raw` decodes to at `i`, and how many raw bytes it took.
inline char decode_at(std::string_view raw, std::size_t i, decode_mode mode, std::size_t& taken) noexcept {
  char c = raw[i];
  if (c == '%' && i + 2 < raw.size() && is(raw[i + 1], c_hex) && is(raw[i + 2], c_hex)) {
    taken = 3;
    return static_cast<char>(hex_value(raw[i + 1]) * 16 + hex_value(raw[i + 2]));
  }
  taken = 1;
  return c == '+' && mode == decode_mode::form ? ' ' : c;
}

}  // namespace

std::string decode_escaped(std::string_view raw, decode_mode mode) {
  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0, taken = 0; i < raw.size(); i += taken)
    out.push_back(decode_at(raw, i, mode, taken));
  return out;
}

bool decoded_equals(std::string_view raw, decode_mode mode, std::string_view want) noexcept {
  if (!needs_decoding(raw, mode))
    return raw == want;
  // Each decoded byte takes one to three raw bytes: a quick bound before the walk.
  if (want.size() > raw.size() || want.size() * 3 < raw.size())
    return false;
  std::size_t j = 0;
  for (std::size_t i = 0, taken = 0; i < raw.size(); i += taken, ++j)
    if (j == want.size() || decode_at(raw, i, mode, taken) != want[j])
      return false;
  return j == want.size();
}

}  // namespace saturn::http::detail
