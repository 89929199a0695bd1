// Character classes of RFC 9110/9112 and RFC 3986 as 256-entry tables (one load per byte).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace saturn::http::detail {

enum : std::uint8_t {
  c_tchar = 1,
  c_vchar = 2,
  c_field = 4,
  c_hex = 8,
  c_qdtext = 16,
  c_regname = 32,     ///< unreserved / sub-delims (reg-name and IPv4address, '%' aside)
  c_origin = 64,      ///< pchar / "/" / "?" ('%' aside): origin-form path and query bytes
  c_unreserved = 128  ///< ALPHA / DIGIT / "-" / "." / "_" / "~"
};

constexpr std::array<std::uint8_t, 256> make_char_table() {
  std::array<std::uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    std::uint8_t v = 0;
    bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    bool tsym = false;
    const char* syms = "!#$%&'*+-.^_`|~";
    for (const char* p = syms; *p; ++p)
      if (c == *p)
        tsym = true;
    if (alnum || tsym)
      v |= c_tchar;
    if (c >= 0x21 && c <= 0x7e)
      v |= c_vchar;
    if ((c >= 0x21 && c <= 0x7e) || c >= 0x80 || c == ' ' || c == '\t')
      v |= c_field;
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))
      v |= c_hex;
    // qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text
    if (c == '\t' || c == ' ' || c == 0x21 || (c >= 0x23 && c <= 0x5b) || (c >= 0x5d && c <= 0x7e) || c >= 0x80)
      v |= c_qdtext;
    // RFC 3986 §2.2-2.3: unreserved and sub-delims; pchar adds ":" and "@" (and pct-encoded,
    // checked apart because '%' needs its two hex digits).
    bool unreserved = alnum || c == '-' || c == '.' || c == '_' || c == '~';
    bool sub_delim = false;
    for (const char* p = "!$&'()*+,;="; *p; ++p)
      if (c == *p)
        sub_delim = true;
    if (unreserved)
      v |= c_unreserved;
    if (unreserved || sub_delim)
      v |= c_regname;
    if (unreserved || sub_delim || c == ':' || c == '@' || c == '/' || c == '?')
      v |= c_origin;
    t[static_cast<std::size_t>(c)] = v;
  }
  return t;
}

inline constexpr std::array<std::uint8_t, 256> char_table = make_char_table();

inline bool is(char c, std::uint8_t cls) noexcept { return (char_table[static_cast<unsigned char>(c)] & cls) != 0; }

/// The value of a hex digit (`c` must be one).
inline unsigned hex_value(char c) noexcept {
  return c <= '9' ? static_cast<unsigned>(c - '0') : static_cast<unsigned>((c | 0x20) - 'a' + 10);
}

}  // namespace saturn::http::detail
