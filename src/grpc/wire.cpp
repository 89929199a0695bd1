// gRPC's wire pieces (wire.hpp).
#include "grpc/wire.hpp"

#include <limits>

namespace saturn::grpc::detail {

void append_frame(std::string& out, std::string_view msg) {
  const auto n = static_cast<std::uint32_t>(msg.size());
  const char prefix[k_prefix] = {0, static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                                 static_cast<char>(n)};
  out.append(prefix, k_prefix);
  out.append(msg);
}

frame_status take_frame(std::string_view buf, std::size_t max, std::string_view& msg, std::size_t& used) noexcept {
  if (buf.size() < k_prefix)
    return frame_status::incomplete;
  const auto* p = reinterpret_cast<const unsigned char*>(buf.data());
  const std::uint32_t n = (std::uint32_t{p[1]} << 24) | (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[3]} << 8) | p[4];
  if (n > max)
    return frame_status::too_large;
  if (p[0] != 0)
    return frame_status::compressed;
  if (buf.size() - k_prefix < n)
    return frame_status::incomplete;
  msg = buf.substr(k_prefix, n);
  used = k_prefix + n;
  return frame_status::message;
}

std::optional<std::chrono::nanoseconds> parse_timeout(std::string_view v) noexcept {
  if (v.size() < 2 || v.size() > 9)
    return std::nullopt;
  std::int64_t n = 0;
  for (char c : v.substr(0, v.size() - 1)) {
    if (c < '0' || c > '9')
      return std::nullopt;
    n = n * 10 + (c - '0');
  }
  using namespace std::chrono;
  constexpr std::int64_t cap = std::numeric_limits<std::int64_t>::max() / 3'600'000'000'000;  // no overflow in ns
  switch (v.back()) {
    case 'H': return nanoseconds(hours(std::min(n, cap)));
    case 'M': return nanoseconds(minutes(std::min(n, cap * 60)));
    case 'S': return nanoseconds(seconds(n));
    case 'm': return nanoseconds(milliseconds(n));
    case 'u': return nanoseconds(microseconds(n));
    case 'n': return nanoseconds(n);
    default: return std::nullopt;
  }
}

std::string percent_encode(std::string_view text) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c >= 0x20 && c <= 0x7e && c != '%') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

std::string percent_decode(std::string_view text) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    return -1;
  };
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

}  // namespace saturn::grpc::detail
