// Incremental UTF-8 validation (RFC 3629 §4 table): after a lead byte, the first
// continuation byte's range excludes overlongs (E0, F0), surrogates (ED) and code points
// past U+10FFFF (F4); the others are 80–BF. ASCII runs are skipped eight bytes at a time.
#include <saturn/http/websocket/utf8.hpp>

#include <cstring>

namespace saturn::http::websocket {

bool utf8_validator::feed(std::span<const std::byte> bytes) noexcept {
  if (m_failed)
    return false;
  const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
  const std::size_t n = bytes.size();
  std::size_t i = 0;
  while (i < n) {
    if (m_need == 0) {
      while (i + 8 <= n) {
        std::uint64_t w;
        std::memcpy(&w, p + i, 8);
        if ((w & 0x8080808080808080ull) != 0)
          break;
        i += 8;
      }
      if (i == n)
        break;
      const std::uint8_t b = p[i++];
      if (b < 0x80)
        continue;
      m_lo = 0x80;
      m_hi = 0xBF;
      if (b >= 0xC2 && b <= 0xDF) {
        m_need = 1;
      } else if (b >= 0xE0 && b <= 0xEF) {
        m_need = 2;
        if (b == 0xE0)
          m_lo = 0xA0;
        else if (b == 0xED)
          m_hi = 0x9F;
      } else if (b >= 0xF0 && b <= 0xF4) {
        m_need = 3;
        if (b == 0xF0)
          m_lo = 0x90;
        else if (b == 0xF4)
          m_hi = 0x8F;
      } else {
        m_failed = true;  // 80–C1 (continuation or overlong lead), F5–FF
        return false;
      }
    } else {
      const std::uint8_t b = p[i++];
      if (b < m_lo || b > m_hi) {
        m_failed = true;
        return false;
      }
      --m_need;
      m_lo = 0x80;
      m_hi = 0xBF;
    }
  }
  return true;
}

bool valid_utf8(std::string_view s) noexcept {
  utf8_validator v;
  v.feed(std::as_bytes(std::span<const char>(s.data(), s.size())));
  return v.complete();
}

}  // namespace saturn::http::websocket
