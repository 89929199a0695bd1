// Escaping names for messages (escape.hpp).
#include "escape.hpp"

#include <cstddef>
#include <cstdint>

namespace walk {
namespace {

/// The length of the valid UTF-8 sequence starting at s[0] (2..4), or 0 if there is
/// none: a stray continuation byte, an overlong form, a surrogate, beyond U+10FFFF, or
/// cut short.
std::size_t utf8_sequence(std::string_view s) noexcept {
  const auto b = [&](std::size_t i) { return static_cast<std::uint8_t>(s[i]); };
  const std::uint8_t c = b(0);
  std::size_t len = 0;
  std::uint8_t lo = 0x80, hi = 0xbf;  // the second byte's range
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    if (c == 0xe0)
      lo = 0xa0;  // overlong below
    else if (c == 0xed)
      hi = 0x9f;  // surrogates above
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    if (c == 0xf0)
      lo = 0x90;
    else if (c == 0xf4)
      hi = 0x8f;  // beyond U+10FFFF above
  } else {
    return 0;
  }
  if (s.size() < len || b(1) < lo || b(1) > hi)
    return 0;
  for (std::size_t i = 2; i < len; ++i)
    if (b(i) < 0x80 || b(i) > 0xbf)
      return 0;
  return len;
}

void put_octal(std::string& out, std::uint8_t c) {
  out += '\\';
  out += static_cast<char>('0' + (c >> 6));
  out += static_cast<char>('0' + ((c >> 3) & 7));
  out += static_cast<char>('0' + (c & 7));
}

}  // namespace

std::string escape_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (std::size_t i = 0; i < name.size();) {
    const auto c = static_cast<std::uint8_t>(name[i]);
    if (c >= 0x80) {
      const std::size_t len = utf8_sequence(name.substr(i));
      // C1 controls (U+0080..U+009F, C2 80..C2 9F) are valid UTF-8 but move terminals too.
      if (len == 0 || (c == 0xc2 && static_cast<std::uint8_t>(name[i + 1]) < 0xa0)) {
        put_octal(out, c);
        ++i;
      } else {
        out.append(name.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\v': out += "\\v"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      case '\\': out += "\\\\"; break;
      default:
        if (c < 0x20 || c == 0x7f)
          put_octal(out, c);
        else
          out += static_cast<char>(c);
    }
    ++i;
  }
  return out;
}

}  // namespace walk
